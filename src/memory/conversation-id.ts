import { InvalidConversationIdError } from './chat-memory-errors.ts';

/**
 * Rejects a conversation id that is not a non-blank string.
 *
 * @throws {InvalidConversationIdError}
 */
export function assertConversationId(conversationId: unknown): asserts conversationId is string {
  if (typeof conversationId !== 'string') {
    throw new InvalidConversationIdError(`expected a string, got ${conversationId === null ? 'null' : typeof conversationId}`);
  }
  if (conversationId.trim() === '') {
    throw new InvalidConversationIdError(conversationId === '' ? 'it is empty' : 'it is blank');
  }
}
