import type { ModelMessage } from 'ai';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { selectWindow } from './message-window.ts';
import { isRepository, WindowedChatMemory } from './windowed-chat-memory.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

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
   * (binary data counts as base64). The memory advisors refuse a user message
   * over it before the model is called, and store an answer or tool result
   * over it with the oversized parts replaced by a note of their size.
   * @default 1048576 (1 MiB)
   */
  maxMessageBytes?: number;
}

/** What each option of MessageWindowChatMemory accepts. */
const MESSAGE_WINDOW_CHAT_MEMORY_OPTION_RULES: OptionRules<MessageWindowChatMemoryOptions> = {
  repository: isRepository,
  maxMessages: is.integer(1),
  maxMessageBytes: is.integer(1),
};

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
export class MessageWindowChatMemory extends WindowedChatMemory {
  readonly #maxMessages: number;

  constructor(options: MessageWindowChatMemoryOptions = {}) {
    super(options?.repository, options?.maxMessageBytes);
    validateOptions('MessageWindowChatMemory', options, MESSAGE_WINDOW_CHAT_MEMORY_OPTION_RULES);
    this.#maxMessages = options.maxMessages ?? 20;
  }

  protected window(messages: ModelMessage[]): ModelMessage[] {
    return selectWindow(messages, this.#maxMessages, () => 1);
  }
}
