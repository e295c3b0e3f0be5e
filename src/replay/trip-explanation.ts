import { redact, redactValue } from '../redaction/redact.ts';
import type { ReplayResult } from './replay.ts';
import type { Trajectory, TrajectoryStep } from './trajectory.ts';

/** How many steps before the first intervention the explanation shows. */
const STEPS_BEFORE = 8;
/** How many steps after the first intervention, and after the stop, it shows. */
const STEPS_AFTER = 2;
/** How far back to look for earlier steps like the tripping one. */
const REPEAT_LOOKBACK = 40;
/** At most this many calls side by side (the trip included). */
const MAX_SIDE_BY_SIDE = 5;
/** Longest text kept per shown value: reports stay small whatever the trajectory holds. */
const MAX_TEXT = 400;

/** One step as an explanation shows it. */
export interface ExplainedStep {
  /** 0-based index in the trajectory. */
  readonly index: number;
  readonly kind: TrajectoryStep['kind'];
  /** One line: tool and arguments, query, agent and task, or text. */
  readonly summary: string;
  /** The step's outcome (tool result, documents, sub-agent answer), when it has one. */
  readonly outcome?: string;
  readonly error?: boolean;
  /**
   * `trip`: where the breaker first intervened; `repeat`: an earlier step like
   * it; `stop`: where the configured ladder would have stopped the run;
   * `after`: would not have run; `before`: context.
   */
  readonly role: 'trip' | 'repeat' | 'stop' | 'before' | 'after';
}

/** One field of the repeated steps, compared across them. */
export interface ComparedField {
  readonly name: string;
  /** The value in each compared step, oldest first (`undefined` when the step lacks the field). */
  readonly values: readonly (string | undefined)[];
  /** True when every compared step has the very same value. */
  readonly same: boolean;
}

/** The steps like the tripping one, side by side. */
export interface SideBySide {
  /** Step indexes of the compared steps, oldest first; the last is the trip's. */
  readonly steps: readonly number[];
  readonly fields: readonly ComparedField[];
}

/**
 * Why and where the breaker intervened in one recorded run: the steps around
 * the trip, the repeated steps side by side, the breaker's evidence and what
 * stopping there would have saved. Every text is redacted and shortened.
 */
export interface TripExplanation {
  /** The trajectory's id, redacted. */
  readonly id: string;
  readonly category: string;
  /** The first intervention: `steer`, `block` or `stop`. */
  readonly action: string;
  /** 0-based index of the step of the first intervention. */
  readonly step: number;
  /** Where the configured ladder would have stopped the run, and in which category; absent when it only steered or blocked. */
  readonly stop?: { readonly step: number; readonly category: string };
  readonly stepsTotal: number;
  /** Steps from the stop on: what the stop would have saved (0 without a stop). */
  readonly stepsSaved: number;
  /** Tokens from the stop on; `undefined` when the trajectory carries no token counts. */
  readonly tokensSaved: number | undefined;
  readonly reason: string;
  /** The breaker's message to the model, if any. */
  readonly message?: string;
  /** The decision's evidence as indented JSON, redacted. */
  readonly evidence?: string;
  /** The steps around the trip, in order. */
  readonly steps: readonly ExplainedStep[];
  readonly sideBySide?: SideBySide;
}

/** Explains a tripped replay result; `undefined` when the run did not trip. */
export function explainTrip(trajectory: Trajectory, result: ReplayResult): TripExplanation | undefined {
  const out = result.output;
  if (!out.tripped || out.step === undefined) return undefined;
  const steps = trajectory.steps;
  const anchor = anchorStep(steps, out.step);
  const repeats = anchor === undefined ? [] : findRepeats(steps, anchor);
  const repeatSet = new Set(repeats);
  const stopStep = out.stop_step;

  // The steps around the first intervention and, when it came later, around the stop.
  const shownIndexes = new Set<number>(repeats);
  const around = (center: number, before: number): void => {
    for (let i = Math.max(0, center - before); i < Math.min(steps.length, center + STEPS_AFTER); i++) shownIndexes.add(i);
  };
  around(Math.min(out.step, anchor ?? out.step), STEPS_BEFORE);
  around(out.step, 0);
  if (stopStep !== undefined) around(stopStep, 2);
  const shown = [...shownIndexes]
    .sort((a, b) => a - b)
    .map((i) => {
      const role = i === anchor ? 'trip' : i === stopStep ? 'stop' : stopStep !== undefined && i > stopStep ? 'after' : repeatSet.has(i) ? 'repeat' : 'before';
      return explainStep(steps[i] as TrajectoryStep, i, role);
    });

  const decision = result.decision;
  const evidence = decision?.evidence === undefined ? undefined : stringifyEvidence(decision.evidence);
  const compared = anchor === undefined ? [] : [...repeats.slice(-(MAX_SIDE_BY_SIDE - 1)), anchor];
  return {
    id: redact(trajectory.id),
    category: out.category ?? 'other',
    action: decision?.action ?? 'stop',
    step: out.step,
    ...(stopStep === undefined ? {} : { stop: { step: stopStep, category: out.stop_category ?? out.category ?? 'other' } }),
    stepsTotal: out.steps_total,
    stepsSaved: stopStep === undefined ? 0 : Math.max(0, out.steps_total - stopStep),
    tokensSaved: result.tokensKnown ? out.tokens_after_trip : undefined,
    reason: clip(out.reason ?? ''),
    ...(decision?.message ? { message: clip(decision.message) } : {}),
    ...(evidence !== undefined ? { evidence } : {}),
    steps: shown,
    ...(compared.length >= 2 ? { sideBySide: compare(steps, compared) } : {}),
  };
}

/**
 * The step the decision was about: the step that would not have run when it
 * is a model round or a tool call (judged before running), otherwise the step
 * whose observation decided (the one before).
 */
function anchorStep(steps: readonly TrajectoryStep[], tripStep: number): number | undefined {
  const at = steps[tripStep];
  if (at !== undefined && (at.kind === 'tool_call' || at.kind === 'model')) {
    // A model gate tripped by what the previous step showed explains better through that step.
    if (at.kind === 'model' && tripStep > 0 && steps[tripStep - 1]?.kind !== 'model' && steps[tripStep - 1]?.kind !== 'user') {
      return tripStep - 1;
    }
    return tripStep;
  }
  return tripStep > 0 ? Math.min(tripStep, steps.length) - 1 : undefined;
}

/** Earlier steps of the same kind and target (tool, sub-agent), oldest first. */
function findRepeats(steps: readonly TrajectoryStep[], anchor: number): number[] {
  const target = steps[anchor] as TrajectoryStep;
  const found: number[] = [];
  for (let i = anchor - 1; i >= 0 && i >= anchor - REPEAT_LOOKBACK; i--) {
    const step = steps[i] as TrajectoryStep;
    if (sameTarget(step, target)) found.push(i);
  }
  return found.reverse();
}

function sameTarget(a: TrajectoryStep, b: TrajectoryStep): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'tool_call' && b.kind === 'tool_call') return a.tool === b.tool;
  if (a.kind === 'delegation' && b.kind === 'delegation') return a.agent === b.agent;
  return a.kind !== 'user';
}

function explainStep(step: TrajectoryStep, index: number, role: ExplainedStep['role']): ExplainedStep {
  switch (step.kind) {
    case 'tool_call':
      return {
        index,
        kind: step.kind,
        role,
        summary: clip(`${step.tool}(${typeof step.args === 'string' ? step.args : JSON.stringify(redactValue(step.args))})`),
        ...(step.result !== null ? { outcome: clip(step.result) } : {}),
        ...(step.error ? { error: true } : {}),
      };
    case 'retrieval':
      return {
        index,
        kind: step.kind,
        role,
        summary: clip(step.query),
        ...(step.results !== undefined ? { outcome: clip(step.results.length === 0 ? '(no documents)' : step.results.join(' | ')) } : {}),
      };
    case 'delegation':
      return { index, kind: step.kind, role, summary: clip(`${step.agent}: ${step.input}`), outcome: clip(step.output) };
    case 'model': {
      const tokens = step.prompt_tokens === null ? '' : ` [${step.prompt_tokens} prompt tokens]`;
      return { index, kind: step.kind, role, summary: clip(`${step.text === '' ? '(no text)' : step.text}${tokens}`) };
    }
    case 'user':
      return { index, kind: step.kind, role, summary: clip(step.text) };
  }
}

/** The fields of the compared steps, one row per field, in first-seen order. */
function compare(steps: readonly TrajectoryStep[], indexes: readonly number[]): SideBySide {
  const rows = indexes.map((i) => fieldsOf(steps[i] as TrajectoryStep));
  const names: string[] = [];
  for (const row of rows) for (const name of row.keys()) if (!names.includes(name)) names.push(name);
  const fields = names.map((name) => {
    const values = rows.map((row) => row.get(name));
    return { name, values, same: values.every((v) => v === values[0]) };
  });
  return { steps: indexes, fields };
}

function fieldsOf(step: TrajectoryStep): Map<string, string> {
  const fields = new Map<string, string>();
  switch (step.kind) {
    case 'tool_call':
      if (typeof step.args === 'string') fields.set('arguments', clip(step.args));
      else {
        for (const [key, value] of Object.entries(redactValue(step.args) as Record<string, unknown>)) {
          fields.set(`args.${clip(key)}`, clip(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined')));
        }
      }
      fields.set('result', step.result === null ? '(none)' : clip(step.result));
      if (step.error !== undefined) fields.set('error', String(step.error));
      break;
    case 'retrieval':
      fields.set('query', clip(step.query));
      if (step.results !== undefined) fields.set('documents', clip(step.results.join(' | ')));
      break;
    case 'delegation':
      fields.set('task', clip(step.input));
      fields.set('answer', clip(step.output));
      break;
    case 'model':
      fields.set('text', clip(step.text));
      if (step.prompt_tokens !== null) fields.set('prompt tokens', String(step.prompt_tokens));
      break;
    case 'user':
      fields.set('text', clip(step.text));
      break;
  }
  return fields;
}

function stringifyEvidence(evidence: unknown): string | undefined {
  try {
    // Redacted again as text: keys (a tool name, say) come from the trajectory too, and redactValue keeps keys.
    const json = JSON.stringify(redactValue(evidence), null, 2);
    const text = json === undefined ? undefined : redact(json);
    return text === undefined ? undefined : text.length > 4 * MAX_TEXT ? `${text.slice(0, 4 * MAX_TEXT)}…` : text;
  } catch {
    return undefined;
  }
}

/** Redacted, whitespace-collapsed and cut to {@link MAX_TEXT} characters. */
function clip(text: string): string {
  const flat = redact(text).replace(/\s+/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
}
