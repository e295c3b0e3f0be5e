import type { BreakerEvent } from '../breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';
import type { Trajectory, TrajectoryStep } from './trajectory.ts';

/**
 * The replay verdict for one trajectory, as `governor replay --json` prints it
 * (field order included; the command redacts `id` and `reason`). `category`, `step`, `action` and
 * `reason` describe the first intervention and are present only when
 * `tripped`; `steer_step` and `stop_step` only when the breaker steered or
 * stopped.
 *
 * Step indexes are 0-based. A decision taken before a step runs (model gate,
 * tool-call check) names that step; a decision taken when a step is observed
 * names the next one; `steps_total` means after the last recorded step.
 */
export interface ReplayOutput {
  readonly id: string;
  /** Whether the breaker intervened at all (steer, block or stop). */
  readonly tripped: boolean;
  /** Category of the first intervention. */
  readonly category?: string;
  /** Step of the first intervention. */
  readonly step?: number;
  /** Action of the first intervention: `steer`, `block` or `stop`. */
  readonly action?: string;
  /** Human-readable evidence of the first intervention. */
  readonly reason?: string;
  /** Where the breaker first steered: the live agent still runs this step and what follows. */
  readonly steer_step?: number;
  /**
   * Where the breaker would have stopped the run under the configured ladder
   * (steered and blocked steps are replayed on, as a live agent would go on).
   */
  readonly stop_step?: number;
  /** Category of the stop. */
  readonly stop_category?: string;
  readonly steps_total: number;
  /** Prompt + completion tokens of all model steps (unknown counts count as 0). */
  readonly tokens_total: number;
  /** Tokens of the model steps from `steer_step` on (spent under steering, not saved). */
  readonly tokens_after_steer: number;
  /** Tokens of the model steps from `stop_step` on: what the stop would have saved (0 without a stop). */
  readonly tokens_after_trip: number;
}

/** One decision that was not `allow`, where replay met it. */
export interface ReplayIntervention {
  /** The step, numbered as {@link ReplayOutput} numbers steps. */
  readonly step: number;
  /**
   * True when the breaker decided on observing a step (the one before
   * `step`); false when it judged `step` before it ran (model gate, tool-call check).
   */
  readonly observed: boolean;
  readonly decision: ReplayDecision;
}

/** {@link ReplayOutput} plus what a human report needs besides. */
export interface ReplayResult {
  readonly output: ReplayOutput;
  /** False when no model step carried a token count: the token figures mean nothing then. */
  readonly tokensKnown: boolean;
  /** The first decision that was not `allow`, if any. */
  readonly decision?: ReplayDecision;
  /** The stop, if the breaker would have stopped the run. */
  readonly stop?: ReplayDecision;
  /** Every decision that was not `allow`, in order: steers, blocks and the stop (the last, if any). */
  readonly interventions: readonly ReplayIntervention[];
}

/**
 * Runs one trajectory through `breaker` under `sessionId` (use a fresh one
 * per trajectory), the way a live agent would have met it: a model step is
 * gated (`checkModelCall`) then observed; a tool call is checked before it
 * runs and observed with its result unless blocked; retrieval, delegation
 * and user steps are observed. Steers and blocks do not end the run — the
 * live agent goes on under them — so replay goes on to the first `stop`.
 */
export async function replayTrajectory(breaker: ReplayableBreaker, trajectory: Trajectory, sessionId: string): Promise<ReplayResult> {
  const steps = trajectory.steps;
  const interventions: ReplayIntervention[] = [];
  let steer: ReplayIntervention | undefined;
  let stop: ReplayIntervention | undefined;
  const note = (step: number, observed: boolean, decision: ReplayDecision): void => {
    if (decision.action === 'allow') return;
    const intervention = { step, observed, decision };
    interventions.push(intervention);
    if (decision.action === 'steer') steer ??= intervention;
    if (decision.action === 'stop') stop ??= intervention;
  };

  for (let i = 0; i < steps.length && stop === undefined; i++) {
    const step = steps[i] as TrajectoryStep;
    if (step.kind === 'model') {
      note(i, false, await breaker.checkModelCall(sessionId));
      if (stop !== undefined) break;
    } else if (step.kind === 'tool_call') {
      const check = await breaker.checkToolCall(sessionId, { tool: step.tool, args: step.args });
      note(i, false, check);
      // A stopped run ends here; a blocked call never ran, so there is nothing to observe.
      if (check.action === 'stop' || check.action === 'block') continue;
    }
    note(i + 1, true, await breaker.observe(sessionId, toBreakerEvent(step)));
  }

  let tokensTotal = 0;
  let tokensAfterSteer = 0;
  let tokensAfterStop = 0;
  let tokensKnown = false;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as TrajectoryStep;
    if (step.kind !== 'model') continue;
    if (step.prompt_tokens !== null || step.completion_tokens !== null) tokensKnown = true;
    const tokens = (step.prompt_tokens ?? 0) + (step.completion_tokens ?? 0);
    tokensTotal += tokens;
    if (steer !== undefined && i >= steer.step) tokensAfterSteer += tokens;
    if (stop !== undefined && i >= stop.step) tokensAfterStop += tokens;
  }

  const base = { steps_total: steps.length, tokens_total: tokensTotal, tokens_after_steer: tokensAfterSteer, tokens_after_trip: tokensAfterStop };
  const first = interventions[0];
  if (first === undefined) return { output: { id: trajectory.id, tripped: false, ...base }, tokensKnown, interventions };
  const output: ReplayOutput = {
    id: trajectory.id,
    tripped: true,
    category: first.decision.category ?? 'other',
    step: first.step,
    action: first.decision.action,
    reason: describeDecision(first.decision),
    ...(steer === undefined ? {} : { steer_step: steer.step }),
    ...(stop === undefined ? {} : { stop_step: stop.step, stop_category: stop.decision.category ?? 'other' }),
    ...base,
  };
  return { output, tokensKnown, decision: first.decision, ...(stop === undefined ? {} : { stop: stop.decision }), interventions };
}

/** The breaker event a recorded step stands for. */
export function toBreakerEvent(step: TrajectoryStep): BreakerEvent {
  switch (step.kind) {
    case 'model':
      return { kind: 'model', promptTokens: step.prompt_tokens, completionTokens: step.completion_tokens, text: step.text };
    case 'tool_call':
      return {
        kind: 'tool_call',
        tool: step.tool,
        args: step.args,
        result: step.result,
        ...(step.error !== undefined ? { error: step.error } : {}),
      };
    case 'retrieval':
      return { kind: 'retrieval', query: step.query, ...(step.results !== undefined ? { results: step.results } : {}) };
    case 'delegation':
      return { kind: 'delegation', agent: step.agent, input: step.input, output: step.output };
    case 'user':
      return { kind: 'user', text: step.text };
  }
}

/** The evidence's one-line detail when there is one (the message is often advice to the model). */
export function describeDecision(decision: ReplayDecision): string {
  const detail = (decision.evidence as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string' && detail !== '') return detail;
  if (decision.message !== undefined && decision.message !== '') return decision.message;
  if (decision.evidence !== undefined) {
    try {
      return `${decision.action}: ${JSON.stringify(decision.evidence)}`;
    } catch {
      // evidence that cannot be serialised falls through to the generic reason
    }
  }
  return `${decision.action} (${decision.category ?? 'no category'})`;
}
