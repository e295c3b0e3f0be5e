import type { BreakerDecision } from './breaker-decision.ts';
import type { BreakerEvent, ModelEvent, RetrievalEvent } from './breaker-event.ts';

/** The verdicts on one finished model round. */
export interface RoundVerdicts {
  /** The verdict on the answer. */
  readonly answer: BreakerDecision;
  /** The first stop, on the answer or on one of the searches. */
  readonly stop: BreakerDecision | undefined;
  /** The verdicts on the searches that did not stop, in order: a steer among them is for the model's next call. */
  readonly searches: readonly BreakerDecision[];
}

/**
 * Records a finished model round, as every door does: its answer, then the
 * searches the model's API ran itself in it (see hosted-search.ts), in
 * order. Recorded after the answer, the searches belong to its round, so
 * several alike ones in one answer are steered, not stopped, before the
 * model has read the steer. They have run: a verdict on one can only stop
 * the session or steer the next call. Every search is recorded, also after
 * a stop, so none is missing from the session's counters.
 */
export async function observeRound(
  breaker: { observe(sessionId: string, event: BreakerEvent): Promise<BreakerDecision> },
  sessionId: string,
  answer: ModelEvent,
  searches: readonly RetrievalEvent[],
): Promise<RoundVerdicts> {
  const verdict = await breaker.observe(sessionId, answer);
  let stop = verdict.action === 'stop' ? verdict : undefined;
  const passed: BreakerDecision[] = [];
  for (const search of searches) {
    const decision = await breaker.observe(sessionId, search);
    if (decision.action === 'stop') stop ??= decision;
    else passed.push(decision);
  }
  return { answer: verdict, stop, searches: passed };
}
