import type { ModelMessage } from 'ai';

/**
 * The conversation history an assistant sees, by conversation id. What `get`
 * returns is a view chosen by the implementation (a window of recent
 * messages, a token budget, ...), not necessarily everything ever added.
 */
export interface ChatMemory {
  /** Adds messages to the end of a conversation, all or nothing. */
  add(conversationId: string, messages: readonly ModelMessage[]): Promise<void>;

  /** The messages of a conversation that fit this memory's window, oldest first. */
  get(conversationId: string): Promise<ModelMessage[]>;

  /** Forgets a conversation. */
  clear(conversationId: string): Promise<void>;

  /**
   * Largest single message `add` accepts, in bytes of its stored form, when
   * the memory has such a limit. The memory advisors use it to refuse a user
   * turn that is too large before the model is called, and to store an
   * oversized answer or tool result with its largest parts left out rather
   * than throw away a finished call.
   */
  readonly maxMessageBytes?: number;
}
