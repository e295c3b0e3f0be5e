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
}
