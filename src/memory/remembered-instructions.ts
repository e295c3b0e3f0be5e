import type { ModelMessage } from 'ai';

/**
 * A request's system instructions with the history's system message added:
 * the request's own instructions first, then the latest system message the
 * memory holds (a newer one replaces older ones, as in the memory windows),
 * unless it is the same text. A remembered system message is part of the
 * conversation (e.g. the summary a `BreakerRecoveryAdvisor` leaves in place of
 * a flushed history), so it reaches the model whether or not the request has
 * instructions of its own.
 */
export function withRememberedInstructions(instructions: string | undefined, history: readonly ModelMessage[]): string | undefined {
  const remembered = history.findLast((message) => message.role === 'system')?.content;
  if (typeof remembered !== 'string' || remembered === '' || remembered === instructions) return instructions;
  return instructions === undefined || instructions === '' ? remembered : `${instructions}\n\n${remembered}`;
}
