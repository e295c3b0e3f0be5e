import type { ReplayResult } from './replay.ts';
import type { Trajectory } from './trajectory.ts';
import { explainTrip, type TripExplanation } from './trip-explanation.ts';

/** One tripped trajectory, as the reports list it. */
export interface TrippedTrajectory {
  readonly lineNumber: number;
  readonly id: string;
  readonly category: string;
  readonly action: string;
  /** Step of the first intervention. */
  readonly step: number;
  /** Where the breaker first steered, if it did. */
  readonly steerStep?: number;
  /** Where it would have stopped the run, if it would. */
  readonly stopStep?: number;
  readonly stepsTotal: number;
  /** Steps from the stop on (0 when the breaker only steered or blocked). */
  readonly stepsSaved: number;
  /** `undefined` when the trajectory carries no token counts. */
  readonly tokensSaved: number | undefined;
  readonly reason: string;
  /** Each intervention with its evidence and the steps around them, when the trajectory was given to {@link ReplaySummaryBuilder.add}. */
  readonly explanation?: TripExplanation;
}

/**
 * Per-category totals over the tripped trajectories. A run counts once in
 * `trips`, under the category of its first intervention; what its stop saved
 * counts under the stop's category, which may be another (a run steered for
 * one loop, then stopped for another).
 */
export interface CategoryTotals {
  /** Runs whose first intervention was in this category. */
  trips: number;
  /** Steps saved by the stops in this category. */
  stepsSaved: number;
  /** Tokens saved by the stops in this category. */
  tokensSaved: number;
}

/** The whole-file figures of a replay. */
export interface ReplaySummary {
  readonly trajectories: number;
  readonly tripped: number;
  readonly malformedLines: number;
  readonly stepsTotal: number;
  readonly stepsSaved: number;
  readonly tokensTotal: number;
  /** Tokens from each stop on. */
  readonly tokensSaved: number;
  /** Trajectories the breaker steered, and would have stopped. */
  readonly steered: number;
  readonly stopped: number;
  /** Tokens from each first steer on (the agent still spends them under the steer). */
  readonly tokensAfterSteer: number;
  /** Trajectories with at least one token count. */
  readonly trajectoriesWithTokens: number;
  readonly byCategory: ReadonlyMap<string, Readonly<CategoryTotals>>;
  readonly byAction: ReadonlyMap<string, number>;
  /** The first `keepTripped` tripped trajectories, in input order. */
  readonly trippedList: readonly TrippedTrajectory[];
}

/**
 * Accumulates replay results in constant memory (apart from the bounded list
 * of tripped trajectories kept for reports).
 */
export class ReplaySummaryBuilder {
  readonly #keepTripped: number;
  #trajectories = 0;
  #tripped = 0;
  #malformed = 0;
  #stepsTotal = 0;
  #stepsSaved = 0;
  #tokensTotal = 0;
  #tokensSaved = 0;
  #steered = 0;
  #stopped = 0;
  #tokensAfterSteer = 0;
  #withTokens = 0;
  readonly #byCategory = new Map<string, CategoryTotals>();
  readonly #byAction = new Map<string, number>();
  readonly #trippedList: TrippedTrajectory[] = [];

  /** @param keepTripped how many tripped trajectories to keep for listing (default 1000). */
  constructor(keepTripped = 1000) {
    this.#keepTripped = keepTripped;
  }

  get trajectories(): number {
    return this.#trajectories;
  }

  get malformedLines(): number {
    return this.#malformed;
  }

  addMalformed(): void {
    this.#malformed++;
  }

  /**
   * Adds one result; returns the tripped entry for it, if it tripped. With the
   * `trajectory`, kept entries carry a {@link TripExplanation} (bounded in size).
   */
  add(lineNumber: number, result: ReplayResult, trajectory?: Trajectory): TrippedTrajectory | undefined {
    const out = result.output;
    this.#trajectories++;
    this.#stepsTotal += out.steps_total;
    this.#tokensTotal += out.tokens_total;
    if (result.tokensKnown) this.#withTokens++;
    if (!out.tripped || out.step === undefined) return undefined;

    this.#tripped++;
    if (out.steer_step !== undefined) this.#steered++;
    if (out.stop_step !== undefined) this.#stopped++;
    this.#tokensAfterSteer += out.tokens_after_steer ?? 0;
    const stepsSaved = out.stop_step === undefined ? 0 : Math.max(0, out.steps_total - out.stop_step);
    this.#stepsSaved += stepsSaved;
    this.#tokensSaved += out.tokens_after_trip;
    const category = out.category ?? 'other';
    this.#totalsOf(category).trips++;
    if (out.stop_step !== undefined) {
      const stopTotals = this.#totalsOf(out.stop_category ?? category);
      stopTotals.stepsSaved += stepsSaved;
      stopTotals.tokensSaved += out.tokens_after_trip;
    }
    const action = result.decision?.action ?? 'stop';
    this.#byAction.set(action, (this.#byAction.get(action) ?? 0) + 1);

    const keep = this.#trippedList.length < this.#keepTripped;
    const explanation = keep && trajectory !== undefined ? explainTrip(trajectory, result) : undefined;
    const entry: TrippedTrajectory = {
      lineNumber,
      id: out.id,
      category,
      action,
      step: out.step,
      ...(out.steer_step === undefined ? {} : { steerStep: out.steer_step }),
      ...(out.stop_step === undefined ? {} : { stopStep: out.stop_step }),
      stepsTotal: out.steps_total,
      stepsSaved,
      tokensSaved: result.tokensKnown ? out.tokens_after_trip : undefined,
      reason: out.reason ?? '',
      ...(explanation !== undefined ? { explanation } : {}),
    };
    if (keep) this.#trippedList.push(entry);
    return entry;
  }

  #totalsOf(category: string): CategoryTotals {
    let totals = this.#byCategory.get(category);
    if (totals === undefined) {
      totals = { trips: 0, stepsSaved: 0, tokensSaved: 0 };
      this.#byCategory.set(category, totals);
    }
    return totals;
  }

  build(): ReplaySummary {
    return {
      trajectories: this.#trajectories,
      tripped: this.#tripped,
      malformedLines: this.#malformed,
      stepsTotal: this.#stepsTotal,
      stepsSaved: this.#stepsSaved,
      tokensTotal: this.#tokensTotal,
      tokensSaved: this.#tokensSaved,
      steered: this.#steered,
      stopped: this.#stopped,
      tokensAfterSteer: this.#tokensAfterSteer,
      trajectoriesWithTokens: this.#withTokens,
      byCategory: new Map([...this.#byCategory].sort((a, b) => b[1].trips - a[1].trips || a[0].localeCompare(b[0]))),
      byAction: new Map(this.#byAction),
      trippedList: [...this.#trippedList],
    };
  }
}

/** `1234567` → `1,234,567`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${((100 * part) / whole).toFixed(1)}%`;
}

/** The human-readable summary printed after the table. */
export function formatSummary(summary: ReplaySummary): string {
  const lines: string[] = [];
  lines.push(
    `Trajectories: ${formatCount(summary.trajectories)} replayed, ${formatCount(summary.tripped)} tripped ` +
      `(${percent(summary.tripped, summary.trajectories)}), ${formatCount(summary.malformedLines)} malformed line` +
      `${summary.malformedLines === 1 ? '' : 's'} skipped`,
  );
  if (summary.byCategory.size > 0) {
    lines.push('Trips by category (runs counted by their first intervention, steps saved by their stop):');
    const width = Math.max(...[...summary.byCategory.keys()].map((k) => k.length));
    for (const [category, totals] of summary.byCategory) {
      lines.push(`  ${category.padEnd(width)}  ${String(totals.trips).padStart(6)}   ${formatCount(totals.stepsSaved)} steps saved`);
    }
    const actions = [...summary.byAction].map(([a, n]) => `${a} ${n}`).join(', ');
    lines.push(`First intervention: ${actions}`);
    lines.push(`Steered: ${formatCount(summary.steered)}; would have stopped (under the configured ladder): ${formatCount(summary.stopped)}`);
  }
  lines.push(
    `Steps that would not have run (from each stop): ${formatCount(summary.stepsSaved)} of ${formatCount(summary.stepsTotal)} ` +
      `(${percent(summary.stepsSaved, summary.stepsTotal)})`,
  );
  if (summary.trajectoriesWithTokens === 0) {
    lines.push('Tokens that would have been saved: unknown (no token counts in the file)');
  } else {
    const missing = summary.trajectories - summary.trajectoriesWithTokens;
    lines.push(
      `Tokens that would have been saved (from each stop): ${formatCount(summary.tokensSaved)} of ${formatCount(summary.tokensTotal)} ` +
        `(${percent(summary.tokensSaved, summary.tokensTotal)})` +
        (missing > 0 ? `; ${formatCount(missing)} trajectories had no token counts` : ''),
    );
    lines.push(`Tokens after the first steer (still spent under the steer): ${formatCount(summary.tokensAfterSteer)}`);
  }
  return lines.join('\n');
}
