import type { ModelMessage } from 'ai';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { assertConversationId } from './conversation-id.ts';
import { decodeMessage, encodeMessages } from './message-codec.ts';

/**
 * Keeps conversations in this process's memory; they are lost when it exits.
 *
 * Messages are stored in the same encoded form the persistent repositories
 * use, so a message read back is a copy (changing it does not change the
 * store) and anything a persistent repository would reject is rejected here
 * too: switching repositories never changes behaviour.
 */
export class InMemoryChatMemoryRepository implements ChatMemoryRepository {
  readonly #conversations = new Map<string, string[]>();

  async findConversationIds(): Promise<string[]> {
    return [...this.#conversations.keys()].sort();
  }

  async findByConversationId(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    return (this.#conversations.get(conversationId) ?? []).map(decodeMessage);
  }

  async saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) this.#conversations.delete(conversationId);
    else this.#conversations.set(conversationId, encoded);
  }

  async deleteByConversationId(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    this.#conversations.delete(conversationId);
  }

  async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) return;
    // Synchronous from here on: no other writer can run in between.
    const stored = this.#conversations.get(conversationId);
    if (stored === undefined) this.#conversations.set(conversationId, encoded);
    else for (const message of encoded) stored.push(message);
  }
}
