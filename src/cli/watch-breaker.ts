import type { AgentBreaker } from '../breaker/agent-breaker.ts';

/**
 * Prints the breaker's escalations and state changes as they happen and
 * returns a function telling the last known state, for progress lines.
 */
export function watchBreaker(breaker: AgentBreaker, print: (line: string) => void): () => string {
  let state = 'CLOSED';
  breaker.on((event) => {
    if (event.type === 'state_change' && event.to) state = event.to;
    if (event.type === 'escalation') print(`breaker ${event.action} (${event.category ?? 'unknown'}): ${event.message ?? ''}`.trim());
    if (event.type === 'warning') print(`breaker warning: ${event.message ?? ''}`);
  });
  return () => state;
}
