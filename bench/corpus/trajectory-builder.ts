import type { Category, CorpusLabel, CorpusTrajectory, ModelStep, Step } from './corpus-trajectory.ts';
import type { Family } from './families.ts';
import type { Rng } from './prng.ts';
import { estimateTokens, MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD } from './tokens.ts';
import { MAX_MODEL_TEXT_CHARS, MAX_RESULT_CHARS, truncate } from './text.ts';

/** Growth factor per model call that counts as token drift (DESIGN section 3). */
export const DRIFT_FACTOR = 1.35;

export interface BuilderOptions {
  readonly id: string;
  readonly source: string;
  readonly family: Family;
  /** How this instance differs from its siblings (free text, short). */
  readonly variant: string;
  readonly task: string;
  readonly rng: Rng;
  /**
   * `counted`: realistic running context and completion sizes; `null`: no
   * token counts at all, as in recorded runs whose logs lack them.
   * @default 'counted'
   */
  readonly tokens?: 'counted' | 'null';
  /**
   * Tokens of the system prompt and tool schemas.
   * @default a random size between 1,500 and 4,000
   */
  readonly systemTokens?: number;
  /**
   * Hidden reasoning tokens added to each model call's completion, as a
   * [min, max] range.
   * @default [0, 0]
   */
  readonly reasoning?: readonly [number, number];
}

export interface CallOptions {
  readonly error?: boolean;
  /**
   * Length in characters of the real result when only its head is given;
   * the stored text is truncated, the context counts the whole.
   */
  readonly fullChars?: number;
}

/**
 * Builds one trajectory step by step while keeping a running context size,
 * so `prompt_tokens` of each model step is the system prompt plus everything
 * said and returned so far (results counted at their full length), and
 * `completion_tokens` is the step's text plus the arguments of the calls it
 * requested (plus any reasoning). Compaction replaces the context by a
 * summary. Labels are set by the scenario at the step its rule names, and
 * checked against the steps when the trajectory is built.
 */
export class TrajectoryBuilder {
  readonly rng: Rng;
  readonly #options: BuilderOptions;
  readonly #steps: Step[] = [];
  readonly #counted: boolean;
  readonly #systemTokens: number;
  #context: number;
  #lastModel: ModelStep | undefined;
  #label: CorpusLabel = { stuck: false };
  #driftFrom: number | undefined;
  #note = '';
  #outcome: Record<string, unknown> = {};

  constructor(options: BuilderOptions) {
    this.#options = options;
    this.rng = options.rng;
    this.#counted = (options.tokens ?? 'counted') === 'counted';
    this.#systemTokens = options.systemTokens ?? options.rng.int(1500, 4000);
    this.#context = this.#systemTokens;
  }

  /** Number of steps so far (the index the next step will get). */
  get length(): number {
    return this.#steps.length;
  }

  /** The steps so far (read-only view, for scenarios that adapt to what they wrote). */
  get steps(): readonly Step[] {
    return this.#steps;
  }

  /** Current context size in tokens (what the next model call would be sent). */
  get contextTokens(): number {
    return this.#context;
  }

  get systemTokens(): number {
    return this.#systemTokens;
  }

  /** True once a stuck label has been set. */
  get isLabelledStuck(): boolean {
    return this.#label.stuck || this.#driftFrom !== undefined;
  }

  user(text: string): number {
    this.#context += estimateTokens(text) + MESSAGE_OVERHEAD;
    this.#lastModel = undefined;
    return this.#push({ kind: 'user', text });
  }

  /** One model round trip; `extraCompletion` adds hidden output (reasoning, a long plan). */
  model(text = '', extraCompletion = 0): number {
    const reasoning = this.#options.reasoning;
    const hidden = reasoning === undefined ? 0 : this.rng.int(reasoning[0], reasoning[1]);
    const completion = Math.max(1, estimateTokens(text) + hidden + extraCompletion);
    const step: ModelStep = {
      kind: 'model',
      prompt_tokens: this.#counted ? this.#context : null,
      completion_tokens: this.#counted ? completion : null,
      text: truncate(text, MAX_MODEL_TEXT_CHARS),
    };
    this.#context += estimateTokens(text) + MESSAGE_OVERHEAD;
    this.#lastModel = step;
    return this.#push(step);
  }

  call(tool: string, args: Record<string, unknown> | string, result: string | null, options: CallOptions = {}): number {
    this.#requested(typeof args === 'string' ? args : JSON.stringify(args));
    const text = result ?? '';
    const full = Math.max(options.fullChars ?? 0, text.length);
    this.#context += Math.ceil(estimateTokens(text) * (full / Math.max(1, text.length))) + MESSAGE_OVERHEAD;
    return this.#push({
      kind: 'tool_call',
      tool,
      args,
      result: result === null ? null : truncate(text, MAX_RESULT_CHARS, full),
      error: options.error ?? false,
    });
  }

  retrieval(query: string, results: readonly string[]): number {
    this.#requested(query);
    this.#context += results.reduce((sum, r) => sum + estimateTokens(r) + 2, 0) + MESSAGE_OVERHEAD;
    return this.#push({ kind: 'retrieval', query, results: results.map((r) => truncate(r, MAX_RESULT_CHARS)) });
  }

  delegation(agent: string, input: string, output: string, options: { fullChars?: number } = {}): number {
    this.#requested(input);
    const full = Math.max(options.fullChars ?? 0, output.length);
    this.#context += Math.ceil(estimateTokens(output) * (full / Math.max(1, output.length))) + MESSAGE_OVERHEAD;
    return this.#push({ kind: 'delegation', agent, input, output: truncate(output, MAX_RESULT_CHARS, full) });
  }

  /**
   * Context compaction: a summarising model call (when `visible`) whose
   * text is the summary, after which the context is the system prompt, the
   * summary and `keepTokens` of recent messages.
   */
  compact(summary: string, options: { keepTokens?: number; visible?: boolean } = {}): number | undefined {
    let index: number | undefined;
    if (options.visible ?? true) index = this.model(summary);
    this.#context = this.#systemTokens + estimateTokens(summary) + MESSAGE_OVERHEAD + (options.keepTokens ?? 0);
    this.#lastModel = undefined;
    return index;
  }

  /** Labels the trajectory stuck at `step`; the first label set wins. */
  stuck(category: Category, step: number): void {
    if (this.isLabelledStuck) return;
    this.#label = { stuck: true, category, first_stuck_step: step };
  }

  /**
   * Labels token drift at the model step of the third consecutive growth of
   * at least {@link DRIFT_FACTOR} counted from `fromStep` on (resolved when
   * the trajectory is built, as the later steps are not written yet).
   */
  stuckOnDriftFrom(fromStep: number): void {
    if (this.isLabelledStuck) return;
    this.#driftFrom = fromStep;
  }

  note(text: string): void {
    this.#note = text;
  }

  outcome(value: Record<string, unknown>): void {
    this.#outcome = value;
  }

  build(): CorpusTrajectory {
    const o = this.#options;
    if (this.#driftFrom !== undefined) {
      const at = thirdDriftGrowth(this.#steps, this.#driftFrom);
      if (at === undefined) throw new Error(`${o.id}: no third consecutive ${DRIFT_FACTOR}x growth after step ${this.#driftFrom}`);
      this.#label = { stuck: true, category: 'token_drift', first_stuck_step: at };
    }
    const label = this.#label;
    if (label.stuck) {
      const step = this.#steps[label.first_stuck_step];
      if (step === undefined) throw new Error(`${o.id}: first_stuck_step ${label.first_stuck_step} is past the end`);
      if (!categoryFitsStep(label.category, step)) {
        throw new Error(`${o.id}: step ${label.first_stuck_step} (${step.kind}) does not fit category ${label.category}`);
      }
    }
    if (this.#note === '') throw new Error(`${o.id}: missing note`);
    return {
      id: o.id,
      source: o.source,
      family: o.family,
      variant: o.variant,
      task: o.task,
      steps: this.#steps,
      outcome: this.#outcome,
      label,
      note: this.#note,
    };
  }

  #requested(text: string): void {
    const tokens = estimateTokens(text) + TOOL_CALL_OVERHEAD;
    if (this.#lastModel !== undefined && this.#lastModel.completion_tokens !== null) {
      this.#lastModel.completion_tokens += tokens;
    }
    this.#context += tokens;
  }

  #push(step: Step): number {
    this.#steps.push(step);
    return this.#steps.length - 1;
  }
}

/** Whether the step at first_stuck_step is of a kind the category's rule names. */
export function categoryFitsStep(category: Category, step: Step): boolean {
  switch (category) {
    case 'tool_spiral':
      return step.kind === 'tool_call';
    case 'token_drift':
      return step.kind === 'model';
    case 'rag_fixation':
      return step.kind === 'retrieval';
    case 'delegation_loop':
      return step.kind === 'delegation' || step.kind === 'tool_call';
    case 'other':
      return step.kind === 'model';
  }
}

/** Index of the model step completing the third consecutive ≥ DRIFT_FACTOR growth at or after `from`. */
export function thirdDriftGrowth(steps: readonly Step[], from: number): number | undefined {
  let previous: number | undefined;
  let run = 0;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    if (step.kind !== 'model' || step.prompt_tokens === null) continue;
    const grew = previous !== undefined && step.prompt_tokens >= previous * DRIFT_FACTOR;
    previous = step.prompt_tokens;
    if (i < from) continue;
    run = grew ? run + 1 : 0;
    if (run === 3) return i;
  }
  return undefined;
}
