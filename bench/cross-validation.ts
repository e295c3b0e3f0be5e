/**
 * Cross-validation of the detection benchmark by source: each source is held
 * out in turn and judged as unseen data. The breaker has defaults, not
 * trained parameters, so two things are reported per held-out source:
 *
 *  - the defaults' figures on it, whose spread over the sources shows whether
 *    a change only helps the source it was looked at on;
 *  - the figures of the candidate configuration that a parameter search on
 *    the *other* sources chooses (best F1 with a false-alarm rate within the
 *    goal), so that tuning is judged only on data it did not see.
 */
import type { AgentBreakerOptions } from '../src/breaker/breaker-options.ts';
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import { isMalformedLine, readTrajectories } from '../src/replay/read-trajectories.ts';
import type { Trajectory } from '../src/replay/trajectory.ts';
import { summarise, type DetectionFigures, type Outcome } from './detection-metrics.ts';
import { judge } from './detection.ts';

/** One configuration the search may choose. */
export interface Candidate {
  readonly name: string;
  readonly options: AgentBreakerOptions;
}

/**
 * The default search space: the settings that trade recall for false alarms
 * most steeply, one step either side of their defaults. The defaults come
 * first and win ties.
 */
function defaultCandidates(): Candidate[] {
  const out: Candidate[] = [{ name: 'defaults', options: {} }];
  for (const consecutive of [3, 4]) {
    for (const sameDocumentsSimilarity of [0.4, 0.5, 0.6]) {
      for (const maxRepeats of [3, 4, 5]) {
        if (consecutive === 3 && sameDocumentsSimilarity === 0.5 && maxRepeats === 4) continue;
        out.push({
          name: `ragFixation.consecutive=${consecutive} sameDocumentsSimilarity=${sameDocumentsSimilarity} toolSpiral.maxRepeats=${maxRepeats}`,
          options: { ragFixation: { consecutive, sameDocumentsSimilarity }, toolSpiral: { maxRepeats } },
        });
      }
    }
  }
  return out;
}

/** The figures for one held-out source. */
interface HeldOutSource {
  readonly source: string;
  readonly defaults: DetectionFigures;
  /** The candidate the search chose on the other sources. */
  readonly chosen: string;
  /** Its figures on the other sources (what it was chosen on). */
  readonly chosenOnOthers: DetectionFigures;
  /** Its figures on the held-out source. */
  readonly chosenHeldOut: DetectionFigures;
}

/** Spread of one figure over the held-out sources. */
export interface Spread {
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  /** Population standard deviation. */
  readonly sd: number;
}

export interface CrossValidationReport {
  readonly corpora: readonly string[];
  readonly candidates: number;
  readonly maxFalsePositiveRate: number;
  readonly sources: readonly HeldOutSource[];
  /** Over sources with stuck runs (F1) and with productive runs (FPR). */
  readonly spread: {
    readonly defaults: { readonly f1: Spread | undefined; readonly falsePositiveRate: Spread | undefined };
    readonly chosen: { readonly f1: Spread | undefined; readonly falsePositiveRate: Spread | undefined };
  };
}

/** Min, max, mean and standard deviation; undefined for no values. */
export function spread(values: readonly number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
  return { min: Math.min(...values), max: Math.max(...values), mean, sd };
}

/**
 * The candidate with the best F1 among those within `maxFalsePositiveRate`
 * (the one with the fewest false alarms when none is); earlier candidates win
 * ties. Returns its index.
 */
export function choose(figures: readonly DetectionFigures[], maxFalsePositiveRate: number): number {
  let best = -1;
  for (const [i, f] of figures.entries()) {
    if ((f.falsePositiveRate ?? 0) > maxFalsePositiveRate) continue;
    if (best < 0 || (f.f1 ?? 0) > (figures[best]!.f1 ?? 0)) best = i;
  }
  if (best >= 0) return best;
  let fewest = 0;
  for (const [i, f] of figures.entries()) if (f.falsePositives < figures[fewest]!.falsePositives) fewest = i;
  return fewest;
}

async function labelled(corpusPaths: readonly string[]): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const file of corpusPaths) {
    for await (const record of readTrajectories(file)) {
      if (isMalformedLine(record) || record.trajectory.label === undefined) continue;
      out.push(record.trajectory);
    }
  }
  return out;
}

/**
 * Holds out each source of `corpusPaths` in turn. Every candidate is replayed
 * once over every labelled trajectory; the folds only slice those outcomes.
 */
export async function runCrossValidation(
  corpusPaths: readonly string[],
  candidates: readonly Candidate[] = defaultCandidates(),
  maxFalsePositiveRate = 0.01,
  onProgress?: (done: number, total: number) => void,
): Promise<CrossValidationReport> {
  const trajectories = await labelled(corpusPaths);
  const outcomes: Outcome[][] = [];
  for (const [c, candidate] of candidates.entries()) {
    const spec = { name: candidate.name, create: () => new AgentBreaker(candidate.options) };
    const list: Outcome[] = [];
    for (const [i, t] of trajectories.entries()) list.push(await judge(spec, t, `cv-${c}-${i}`));
    outcomes.push(list);
    onProgress?.(c + 1, candidates.length);
  }
  const sources = [...new Set(trajectories.map((t) => t.source ?? '(no source)'))].sort();
  const folds = sources.map((source): HeldOutSource => {
    const heldOut = (o: Outcome) => o.source === source;
    const onOthers = outcomes.map((list) => summarise(list.filter((o) => !heldOut(o))));
    const pick = choose(onOthers, maxFalsePositiveRate);
    return {
      source,
      defaults: summarise(outcomes[0]!.filter(heldOut)),
      chosen: candidates[pick]!.name,
      chosenOnOthers: onOthers[pick]!,
      chosenHeldOut: summarise(outcomes[pick]!.filter(heldOut)),
    };
  });
  const f1s = (pick: (s: HeldOutSource) => DetectionFigures) =>
    spread(
      folds
        .map(pick)
        .filter((f) => f.stuck > 0)
        .map((f) => f.f1 ?? 0),
    );
  const fprs = (pick: (s: HeldOutSource) => DetectionFigures) =>
    spread(
      folds
        .map(pick)
        .filter((f) => f.productive > 0)
        .map((f) => f.falsePositiveRate ?? 0),
    );
  return {
    corpora: corpusPaths,
    candidates: candidates.length,
    maxFalsePositiveRate,
    sources: folds,
    spread: {
      defaults: { f1: f1s((s) => s.defaults), falsePositiveRate: fprs((s) => s.defaults) },
      chosen: { f1: f1s((s) => s.chosenHeldOut), falsePositiveRate: fprs((s) => s.chosenHeldOut) },
    },
  };
}
