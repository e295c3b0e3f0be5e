import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import type { ChatMemory } from './chat-memory.ts';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { assertConversationId } from './conversation-id.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { assertMessagesFit, resolveMaxMessageBytes } from './message-size.ts';
import { selectWindow } from './message-window.ts';

/** Options of {@link MessageWindowChatMemory}. */
export interface MessageWindowChatMemoryOptions {
  /**
   * Where conversations are stored.
   * @default a new InMemoryChatMemoryRepository
   */
  repository?: ChatMemoryRepository;
  /**
   * Most messages `get` returns, the system message included.
   * @default 20
   */
  maxMessages?: number;
  /**
   * Largest single message `add` accepts, in bytes of its stored form
   * (binary data counts as base64).
   * @default 1048576 (1 MiB)
   */
  maxMessageBytes?: number;
}

/**
 * A chat memory that shows the last `maxMessages` messages of a conversation.
 *
 * The latest system message is always kept (placed first; a newer system
 * message replaces older ones). Older messages are dropped by whole groups, so
 * a tool call is never separated from its result and the window never starts
 * with an orphan tool result.
 *
 * `add` appends atomically to the repository, so concurrent writers to one
 * conversation never lose each other's messages; the window is applied when
 * reading. The repository therefore keeps the whole conversation; prune it with
 * `clear` or the repository's `saveAll` when that matters.
 */
export class MessageWindowChatMemory implements ChatMemory {
  /** The store behind this memory. */
  readonly repository: ChatMemoryRepository;
  readonly #maxMessages: number;
  readonly #maxMessageBytes: number;

  constructor(options: MessageWindowChatMemoryOptions = {}) {
    const maxMessages = options.maxMessages ?? 20;
    if (!Number.isSafeInteger(maxMessages) || maxMessages < 1) {
      throw new InvalidOptionError('maxMessages', `must be a positive integer, got ${String(options.maxMessages)}`);
    }
    this.#maxMessages = maxMessages;
    this.#maxMessageBytes = resolveMaxMessageBytes(options.maxMessageBytes);
    this.repository = options.repository ?? new InMemoryChatMemoryRepository();
  }

  async add(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    assertMessagesFit(messages, this.#maxMessageBytes);
    if (messages.length > 0) await this.repository.append(conversationId, messages);
  }

  async get(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    const messages = await this.repository.findByConversationId(conversationId);
    return selectWindow(messages, this.#maxMessages, () => 1);
  }

  async clear(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.repository.deleteByConversationId(conversationId);
  }
}
