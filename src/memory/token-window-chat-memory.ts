import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { countMessageTokens } from './message-tokens.ts';
import { selectWindow } from './message-window.ts';
import { isRepository, WindowedChatMemory } from './windowed-chat-memory.ts';
import { CharsPerTokenEstimator, type Tokenizer } from './tokenizer.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link TokenWindowChatMemory}. */
export interface TokenWindowChatMemoryOptions {
  /**
   * Where conversations are stored.
   * @default a new InMemoryChatMemoryRepository
   */
  repository?: ChatMemoryRepository;
  /** Most tokens the messages `get` returns may hold together, the system message included. */
  maxTokens: number;
  /**
   * Counts tokens.
   * @default a CharsPerTokenEstimator (4 characters per token: an estimate)
   */
  tokenizer?: Tokenizer;
  /**
   * Largest single message `add` accepts, in bytes of its stored form
   * (binary data counts as base64). The memory advisors refuse a user message
   * over it before the model is called, and store an answer or tool result
   * over it with the oversized parts replaced by a note of their size.
   * @default 1048576 (1 MiB)
   */
  maxMessageBytes?: number;
}

/** What each option of TokenWindowChatMemory accepts. */
const TOKEN_WINDOW_CHAT_MEMORY_OPTION_RULES: OptionRules<TokenWindowChatMemoryOptions> = {
  repository: isRepository,
  maxTokens: is.integer(1),
  tokenizer: is.having('a Tokenizer (with count(text))', 'count'),
  maxMessageBytes: is.integer(1),
};

/**
 * A chat memory that shows the most recent messages of a conversation that fit
 * in `maxTokens` (counted with {@link countMessageTokens}).
 *
 * Same rules as `MessageWindowChatMemory`: the latest system message is always
 * kept and counts against the budget, messages are dropped oldest first by
 * whole groups (a tool call stays with its result), and `add` appends
 * atomically while the window is applied when reading.
 */
export class TokenWindowChatMemory extends WindowedChatMemory {
  readonly #maxTokens: number;
  readonly #tokenizer: Tokenizer;

  constructor(options: TokenWindowChatMemoryOptions) {
    super(options?.repository, options?.maxMessageBytes);
    validateOptions('TokenWindowChatMemory', options, TOKEN_WINDOW_CHAT_MEMORY_OPTION_RULES, { required: ['maxTokens'] });
    if (options.tokenizer !== undefined && typeof options.tokenizer.count !== 'function') {
      throw new InvalidOptionError('tokenizer', 'must have a count(text) method');
    }
    this.#maxTokens = options.maxTokens;
    this.#tokenizer = options.tokenizer ?? new CharsPerTokenEstimator();
  }

  protected window(messages: ModelMessage[]): ModelMessage[] {
    return selectWindow(messages, this.#maxTokens, (message) => countMessageTokens(message, this.#tokenizer));
  }
}
