import { InvalidConversationIdError } from './chat-memory-errors.ts';

/**
 * Longest conversation id every repository accepts, in UTF-8 bytes. PostgreSQL
 * cannot index a key much over 2.7 kB, so a longer id would work in memory and
 * SQLite and fail only in production; one limit keeps every store alike.
 */
const MAX_CONVERSATION_ID_BYTES = 1024;

/**
 * Rejects a conversation id that some repository could not store as itself:
 * not a string, blank, not well-formed UTF-16 (SQL stores turn a lone surrogate
 * into U+FFFD, so different ids would share one conversation), holding U+0000
 * (PostgreSQL text cannot), or over 1024 UTF-8 bytes (PostgreSQL cannot index
 * it). Every repository and memory calls this, so every store accepts the same ids.
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
  if (!conversationId.isWellFormed()) {
    throw new InvalidConversationIdError(
      'it is not well-formed UTF-16 (it holds a lone surrogate)',
      'Pass well-formed text: decode the id properly, or use id.toWellFormed() if merging ids that differ only there is acceptable.',
    );
  }
  if (conversationId.includes('\u0000')) {
    throw new InvalidConversationIdError('it holds a NUL character (U+0000)', 'Remove the NUL character.');
  }
  const bytes = Buffer.byteLength(conversationId, 'utf8');
  if (bytes > MAX_CONVERSATION_ID_BYTES) {
    throw new InvalidConversationIdError(
      `it is ${bytes} bytes long in UTF-8, the limit is ${MAX_CONVERSATION_ID_BYTES}`,
      'Use a shorter id, e.g. a SHA-256 hex digest of the long one.',
    );
  }
}
