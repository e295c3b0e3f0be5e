import type { ModelMessage } from 'ai';
import type { ChatMemory } from './chat-memory.ts';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { assertConversationId } from './conversation-id.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { assertMessagesFit, resolveMaxMessageBytes } from './message-size.ts';

/**
 * A chat memory that stores everything and windows on read. Storing only by
 * atomic append is what keeps concurrent writers from losing each other's
 * messages; subclasses only say how the window is cut.
 */
export abstract class WindowedChatMemory implements ChatMemory {
  readonly repository: ChatMemoryRepository;
  readonly #maxMessageBytes: number;

  protected constructor(repository: ChatMemoryRepository | undefined, maxMessageBytes: number | undefined) {
    this.#maxMessageBytes = resolveMaxMessageBytes(maxMessageBytes);
    this.repository = repository ?? new InMemoryChatMemoryRepository();
  }

  /** The part of a conversation's stored messages that is remembered. */
  protected abstract window(messages: ModelMessage[]): ModelMessage[];

  async add(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    assertMessagesFit(messages, this.#maxMessageBytes);
    if (messages.length > 0) await this.repository.append(conversationId, messages);
  }

  async get(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    return this.window(await this.repository.findByConversationId(conversationId));
  }

  async clear(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.repository.deleteByConversationId(conversationId);
  }
}
