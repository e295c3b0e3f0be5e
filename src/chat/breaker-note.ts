import type { ModelMessage } from 'ai';

/** Prefix of every text the breaker puts in front of the model, so people and models can tell who wrote it. */
export const BREAKER_TAG = '[AgentBreaker]';

/**
 * Whether a message is a note the breaker appended to a request (a steer for
 * the model), not a turn of the user's: advisors that find the user's turn
 * by its last user message pass over it.
 */
export function isBreakerNote(message: ModelMessage): boolean {
  if (message.role !== 'user') return false;
  const { content } = message;
  if (typeof content === 'string') return content.startsWith(BREAKER_TAG);
  const first = content[0];
  return first?.type === 'text' && first.text.startsWith(BREAKER_TAG);
}
