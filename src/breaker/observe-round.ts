import type { BreakerDecision } from './breaker-decision.ts';
import type { BreakerEvent, ModelEvent } from './breaker-event.ts';
import type { HostedEvent } from './hosted-calls.ts';

/** The verdicts on one finished model round. */
export interface RoundVerdicts {
  /** The verdict on the answer. */
  readonly answer: BreakerDecision;
  /** The first stop, on the answer or on one of the hosted calls. */
  readonly stop: BreakerDecision | undefined;
  /** The verdicts on the hosted calls that did not stop, in order: a steer (or block) among them is for the model's next call. */
  readonly hosted: readonly BreakerDecision[];
}

/**
 * Records a finished model round, as every door does: its answer, then the
 * calls the model's API ran itself in it (searches, pages opened, code run: see
 * hosted-calls.ts), in order. Recorded after the answer, they belong to its
 * round, so several alike ones in one answer are steered, not stopped,
 * before the model has read the steer. They have run: a verdict on one can
 * only stop the session or steer the next call. Every one is recorded, also
 * after a stop, so none is missing from the session's counters.
 */
export async function observeRound(
  breaker: { observe(sessionId: string, event: BreakerEvent): Promise<BreakerDecision> },
  sessionId: string,
  answer: ModelEvent,
  hosted: readonly HostedEvent[],
): Promise<RoundVerdicts> {
  const verdict = await breaker.observe(sessionId, answer);
  let stop = verdict.action === 'stop' ? verdict : undefined;
  const passed: BreakerDecision[] = [];
  for (const call of hosted) {
    const decision = await breaker.observe(sessionId, call);
    if (decision.action === 'stop') stop ??= decision;
    else passed.push(decision);
  }
  return { answer: verdict, stop, hosted: passed };
}
