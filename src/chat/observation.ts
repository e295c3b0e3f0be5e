import type { BreakerEvent } from '../breaker/breaker-event.ts';
import type { AdvisorContext } from './advisor-context.ts';
import { insideToolOf } from './tool-scope.ts';

/**
 * Anything that wants to hear about what happens in a session (retrieval
 * queries, sub-agent calls, outside events). The AgentBreaker is one.
 */
export interface ObservationSink {
  /**
   * `options.steerHere`: the event is the reporting agent's own (see the
   * AgentBreaker's `ObserveOptions`); {@link reportObservation} always says so.
   */
  observe(sessionId: string, event: BreakerEvent, options?: { readonly steerHere?: boolean }): unknown;
}

/** Context key under which the ChatClient publishes the sinks of its chain. */
export const OBSERVATION_SINKS = 'governor.observationSinks';

/** How an agent's own chain or door reports: what it sees is that agent's (see {@link reportObservation}). */
export const OWN_EVENT = Object.freeze({ steerHere: true });

/**
 * Reports an event to every sink the ChatClient found in the request's advisor
 * chain, so advisors such as `QuestionAnswerAdvisor` feed the breaker without
 * user wiring. Sinks that throw or reject are isolated: observation must never
 * break the call it observes.
 *
 * For the request's own chain (its advisors, its tool loop: the results of
 * the tools it ran), not for a tool's code, which reports with the breaker's
 * `observe`: the event is the agent's own, so a steer decided on it is for
 * this agent's next round. In a sub-agent run inside a governed tool call of
 * the session, that is the sub-agent's next round inside the call, and none
 * when its loop has ended (a return-direct or loop-ending tool): the lead's
 * next round does not get a steer about the sub-agent's tools.
 */
export async function reportObservation(context: AdvisorContext, sessionId: string, event: BreakerEvent): Promise<void> {
  const sinks = observationSinks(context);
  await Promise.all(
    sinks.map(async (sink) => {
      // Inside a tool call the sink governs in this session, a user message is a sub-agent's task, which the lead model wrote.
      if (event.kind === 'user' && insideToolOf(sink, sessionId)) return;
      try {
        await sink.observe(sessionId, event, OWN_EVENT);
      } catch {
        // A failing observer is its own problem, never the caller's.
      }
    }),
  );
}

/**
 * Advisor param marking a turn that the harness added (a continuation), not a
 * user: it is not new information, so it does not reset the breaker's evidence.
 */
export const CONTINUATION_TURN = 'governor.continuationTurn';

/**
 * Advisor param of a continuation turn: the user message of the task it goes
 * on with (a `ModelMessage`), which its own last user message (a reminder)
 * is not. `AgentLoop` sets it to its run's task; the `BreakerRecoveryAdvisor`
 * retries with it.
 */
export const CONTINUED_TASK = 'governor.continuedTask';

/** The sinks the ChatClient found in the request's advisor chain (see {@link OBSERVATION_SINKS}). */
export function observationSinks(context: AdvisorContext): ObservationSink[] {
  const sinks = context.get(OBSERVATION_SINKS);
  return Array.isArray(sinks) ? (sinks as ObservationSink[]) : [];
}
