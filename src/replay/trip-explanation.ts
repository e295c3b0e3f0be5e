import { redact, redactValue } from '../redaction/redact.ts';
import { describeDecision, type ReplayIntervention, type ReplayResult } from './replay.ts';
import type { Trajectory, TrajectoryStep } from './trajectory.ts';

/** How many steps before the first intervention the explanation shows. */
const STEPS_BEFORE = 8;
/** How many steps after the first intervention, and after the stop, it shows. */
const STEPS_AFTER = 2;
/** How many steps before each later intervention it shows. */
const STEPS_BEFORE_LATER = 2;
/** How far back to look for earlier steps like the tripping one. */
const REPEAT_LOOKBACK = 40;
/** At most this many calls side by side (the trip included). */
const MAX_SIDE_BY_SIDE = 5;
/** At most this many interventions detailed: the first ones and the last (the stop, when there is one). */
const MAX_INTERVENTIONS = 5;
/** Longest text kept per shown value: reports stay small whatever the trajectory holds. */
const MAX_TEXT = 400;

/**
 * Where an intervention happened, as a reader of the steps sees it: `at` a step
 * the breaker judged before it ran (a tool call, a model round), or `after` a
 * step whose observation decided (then `--json` names the next step).
 */
export interface StepPlace {
  readonly when: 'at' | 'after';
  /** 0-based index of the step in the trajectory. */
  readonly step: number;
}

/** `at step 6`, `after step 5`. */
export function describePlace(place: StepPlace): string {
  return `${place.when} step ${place.step}`;
}

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
   * `trip`: where the breaker first intervened; `intervention`: a later steer
   * or block; `stop`: where the configured ladder would have stopped the run;
   * `repeat`: an earlier step like the trip's; `after`: would not have run;
   * `before`: context.
   */
  readonly role: 'trip' | 'intervention' | 'repeat' | 'stop' | 'before' | 'after';
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

/** One intervention (steer, block or stop) as an explanation shows it. */
export interface ExplainedIntervention {
  /** 1-based: the how-manyth intervention of the run it is. */
  readonly ordinal: number;
  readonly action: string;
  readonly category: string;
  readonly place: StepPlace;
  readonly reason: string;
  /** The breaker's message to the model, if any. */
  readonly message?: string;
  /** The decision's evidence as indented JSON, redacted. */
  readonly evidence?: string;
}

/**
 * Why and where the breaker intervened in one recorded run: each intervention
 * with its evidence, the steps around them, the steps like the first one side
 * by side and what stopping would have saved. Every text is redacted and shortened.
 */
export interface TripExplanation {
  /** The trajectory's id, redacted. */
  readonly id: string;
  /** Category of the first intervention. */
  readonly category: string;
  /** The first intervention: `steer`, `block` or `stop`. */
  readonly action: string;
  /** Where the first intervention happened. */
  readonly place: StepPlace;
  /** Where the configured ladder would have stopped the run, and in which category; absent when it only steered or blocked. */
  readonly stop?: { readonly place: StepPlace; readonly category: string };
  readonly stepsTotal: number;
  /** Steps from the stop on: what the stop would have saved (0 without a stop). */
  readonly stepsSaved: number;
  /** Tokens from the stop on; `undefined` when the trajectory carries no token counts. */
  readonly tokensSaved: number | undefined;
  /**
   * The interventions shown, in order: all of them, or, past
   * {@link MAX_INTERVENTIONS}, the first ones and the last (`ordinal` says
   * where the others were left out).
   */
  readonly interventions: readonly ExplainedIntervention[];
  /** How many interventions the run had in all. */
  readonly interventionCount: number;
  /** The steps around the interventions, in order (`index` says where steps were left out). */
  readonly steps: readonly ExplainedStep[];
  readonly sideBySide?: SideBySide;
}

/** Explains a tripped replay result; `undefined` when the run did not trip. */
export function explainTrip(trajectory: Trajectory, result: ReplayResult): TripExplanation | undefined {
  const out = result.output;
  const all = result.interventions;
  const first = all[0];
  if (!out.tripped || first === undefined) return undefined;
  const steps = trajectory.steps;
  const last = all.length - 1;
  const shownInterventions = all.length <= MAX_INTERVENTIONS ? [...all.keys()] : [...[...all.keys()].slice(0, MAX_INTERVENTIONS - 1), last];
  const stopIntervention = all.find((x) => x.decision.action === 'stop');
  const stopPlace = stopIntervention === undefined ? undefined : placeOf(stopIntervention);

  // Every intervention's step is marked, the first one's above all, then the stop's.
  const marks = new Map<number, ExplainedStep['role']>();
  for (const [n, x] of all.entries()) {
    const role = n === 0 ? 'trip' : x.decision.action === 'stop' ? 'stop' : 'intervention';
    const at = placeOf(x).step;
    const marked = marks.get(at);
    if (marked === undefined || RANK[role] > RANK[marked]) marks.set(at, role);
  }
  const anchor = anchorStep(steps, first);
  const repeats = findRepeats(steps, anchor);
  const repeatSet = new Set(repeats);

  // The steps around the first intervention and around each later one shown (the stop among them).
  const shownIndexes = new Set<number>(repeats);
  const around = (center: number, before: number): void => {
    for (let i = Math.max(0, center - before); i < Math.min(steps.length, center + STEPS_AFTER); i++) shownIndexes.add(i);
  };
  const firstPlace = placeOf(first);
  around(Math.min(firstPlace.step, anchor), STEPS_BEFORE);
  around(firstPlace.step, 0);
  for (const n of shownInterventions.slice(1)) around(placeOf(all[n] as ReplayIntervention).step, STEPS_BEFORE_LATER);
  const shown = [...shownIndexes]
    .sort((a, b) => a - b)
    .map((i) => {
      const role = marks.get(i) ?? (stopPlace !== undefined && i > stopPlace.step ? 'after' : repeatSet.has(i) || i === anchor ? 'repeat' : 'before');
      return explainStep(steps[i] as TrajectoryStep, i, role);
    });

  const compared = [...repeats.slice(-(MAX_SIDE_BY_SIDE - 1)), anchor];
  return {
    id: redact(trajectory.id),
    category: out.category ?? 'other',
    action: first.decision.action,
    place: firstPlace,
    ...(stopIntervention === undefined || stopPlace === undefined
      ? {}
      : { stop: { place: stopPlace, category: stopIntervention.decision.category ?? 'other' } }),
    stepsTotal: out.steps_total,
    stepsSaved: out.stop_step === undefined ? 0 : Math.max(0, out.steps_total - out.stop_step),
    tokensSaved: result.tokensKnown ? out.tokens_after_trip : undefined,
    interventions: shownInterventions.map((n) => explainIntervention(all[n] as ReplayIntervention, n + 1)),
    interventionCount: all.length,
    steps: shown,
    ...(compared.length >= 2 ? { sideBySide: compare(steps, compared) } : {}),
  };
}

/** Which mark a step keeps when several interventions fall on it. */
const RANK: Record<ExplainedStep['role'], number> = { trip: 3, stop: 2, intervention: 1, repeat: 0, before: 0, after: 0 };

/** Where a reader of the steps finds the intervention (see {@link StepPlace}). */
function placeOf(intervention: ReplayIntervention): StepPlace {
  return intervention.observed ? { when: 'after', step: intervention.step - 1 } : { when: 'at', step: intervention.step };
}

function explainIntervention(intervention: ReplayIntervention, ordinal: number): ExplainedIntervention {
  const decision = intervention.decision;
  const evidence = decision.evidence === undefined ? undefined : stringifyEvidence(decision.evidence);
  return {
    ordinal,
    action: decision.action,
    category: decision.category ?? 'other',
    place: placeOf(intervention),
    reason: clip(describeDecision(decision)),
    ...(decision.message ? { message: clip(decision.message) } : {}),
    ...(evidence !== undefined ? { evidence } : {}),
  };
}

/**
 * The step the first decision was about, whose like steps are compared: the
 * observed step, or the step judged before it ran — save a model gate right
 * after a tool call or the like, which explains better through that step.
 */
function anchorStep(steps: readonly TrajectoryStep[], first: ReplayIntervention): number {
  if (first.observed) return first.step - 1;
  const previous = steps[first.step - 1];
  if (steps[first.step]?.kind === 'model' && previous !== undefined && previous.kind !== 'model' && previous.kind !== 'user') return first.step - 1;
  return first.step;
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
