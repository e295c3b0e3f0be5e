import type { BreakerEvent } from '../breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';
import type { Trajectory, TrajectoryStep } from './trajectory.ts';

/**
 * The replay verdict for one trajectory, exactly as `governor replay --json`
 * prints it (field order included). `category`, `step` and `reason` are
 * present only when `tripped`.
 */
export interface ReplayOutput {
  readonly id: string;
  readonly tripped: boolean;
  readonly category?: string;
  /**
   * 0-based index of the step that would not have been executed. A decision
   * taken before a step runs (model gate, tool-call check) names that step; a
   * decision taken when a step is observed names the next one. It equals
   * `steps_total` when the breaker intervened only after the last recorded step.
   */
  readonly step?: number;
  /** Human-readable evidence. */
  readonly reason?: string;
  readonly steps_total: number;
  /** Prompt + completion tokens of all model steps (unknown counts count as 0). */
  readonly tokens_total: number;
  /** Tokens of the model steps from `step` on: what the trip would have saved. */
  readonly tokens_after_trip: number;
}

/** {@link ReplayOutput} plus what a human report needs besides. */
export interface ReplayResult {
  readonly output: ReplayOutput;
  /** False when no model step carried a token count: the token figures mean nothing then. */
  readonly tokensKnown: boolean;
  /** The first decision that was not `allow`, if any. */
  readonly decision?: ReplayDecision;
}

/**
 * Runs one trajectory through `breaker` under `sessionId` (use a fresh one
 * per trajectory), the way a live agent would have met it: a model step is
 * gated (`checkModelCall`) then observed; a tool call is checked before it
 * runs and observed with its result only if allowed; retrieval, delegation
 * and user steps are observed. Stops at the first decision that is not
 * `allow`: that is where the breaker would have intervened.
 */
export async function replayTrajectory(
  breaker: ReplayableBreaker,
  trajectory: Trajectory,
  sessionId: string,
): Promise<ReplayResult> {
  const steps = trajectory.steps;
  let trip: { step: number; decision: ReplayDecision } | undefined;

  for (let i = 0; i < steps.length && trip === undefined; i++) {
    const step = steps[i] as TrajectoryStep;
    if (step.kind === 'model') {
      const gate = await breaker.checkModelCall(sessionId);
      if (gate.action !== 'allow') {
        trip = { step: i, decision: gate };
        break;
      }
    } else if (step.kind === 'tool_call') {
      const check = await breaker.checkToolCall(sessionId, { tool: step.tool, args: step.args });
      if (check.action !== 'allow') {
        trip = { step: i, decision: check };
        break;
      }
    }
    const after = await breaker.observe(sessionId, toBreakerEvent(step));
    if (after.action !== 'allow') trip = { step: i + 1, decision: after };
  }

  let tokensTotal = 0;
  let tokensAfter = 0;
  let tokensKnown = false;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as TrajectoryStep;
    if (step.kind !== 'model') continue;
    if (step.prompt_tokens !== null || step.completion_tokens !== null) tokensKnown = true;
    const tokens = (step.prompt_tokens ?? 0) + (step.completion_tokens ?? 0);
    tokensTotal += tokens;
    if (trip !== undefined && i >= trip.step) tokensAfter += tokens;
  }

  const output: ReplayOutput =
    trip === undefined
      ? { id: trajectory.id, tripped: false, steps_total: steps.length, tokens_total: tokensTotal, tokens_after_trip: 0 }
      : {
          id: trajectory.id,
          tripped: true,
          category: trip.decision.category ?? 'other',
          step: trip.step,
          reason: describeDecision(trip.decision),
          steps_total: steps.length,
          tokens_total: tokensTotal,
          tokens_after_trip: tokensAfter,
        };
  return trip === undefined ? { output, tokensKnown } : { output, tokensKnown, decision: trip.decision };
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
function describeDecision(decision: ReplayDecision): string {
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
