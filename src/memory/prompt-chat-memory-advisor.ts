import type { Advisor, AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import { ADVISOR_PLACEMENT } from '../chat/advisor-placement.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import type { ChatMemory } from './chat-memory.ts';
import { historyText } from './history-text.ts';
import { withRememberedInstructions } from './remembered-instructions.ts';
import {
  callWithMemory,
  defaultConversationId,
  MEMORY_ADVISOR_OPTION_RULES,
  memoryAdvisorOrder,
  streamWithMemory,
  type MemoryAdvisorSettings,
} from './memory-advised-call.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Builds the system prompt from the request's own instructions and the history as text. */
export type MemorySystemPrompt = (instructions: string | undefined, history: string) => string;

/** Options of {@link PromptChatMemoryAdvisor}. */
export interface PromptChatMemoryAdvisorOptions {
  /** Where the conversation history comes from and goes to. */
  readonly memory: ChatMemory;
  /**
   * Conversation used when a request sets no `CONVERSATION_ID` advisor param.
   * @default DEFAULT_CONVERSATION_ID ('default')
   */
  readonly conversationId?: string;
  /**
   * Position in the chain. Keep it lower than the ToolCallAdvisor's so that
   * the history is read once and written once per call, not per loop round.
   * @default AdvisorOrder.MEMORY
   */
  readonly order?: number;
  /**
   * Builds the system prompt. The default appends the history, between
   * marker lines, after the request's own instructions.
   * @default {@link defaultMemorySystemPrompt}
   */
  readonly systemPrompt?: MemorySystemPrompt;
}

/** The default {@link MemorySystemPrompt}. */
export const defaultMemorySystemPrompt: MemorySystemPrompt = (instructions, history) =>
  [
    instructions,
    'The conversation so far is recorded between the CONVERSATION MEMORY markers. ' + 'Use it to stay consistent with what was already said and done.',
    `--- CONVERSATION MEMORY ---\n${history}\n--- END OF CONVERSATION MEMORY ---`,
  ]
    .filter((section) => section !== undefined && section !== '')
    .join('\n\n');

/** What each option of PromptChatMemoryAdvisor accepts. */
const PROMPT_CHAT_MEMORY_ADVISOR_OPTION_RULES: OptionRules<PromptChatMemoryAdvisorOptions> = {
  ...MEMORY_ADVISOR_OPTION_RULES,
  systemPrompt: is.function(),
};

/**
 * Puts the conversation history into the system prompt as text (see
 * `historyText`) instead of as messages: useful for models or providers that
 * handle long message lists badly, or to keep old tool traffic out of the
 * message list. Stores turns exactly like `MessageChatMemoryAdvisor`: the
 * user's message(s) and every message of the call in one `add`, after the
 * whole call; a failed call stores nothing.
 *
 * A system message found in the history (the latest one) is not history text
 * but instructions: it is added after the request's own, and goes into the
 * system prompt even when the history holds nothing else (e.g. the summary a
 * `BreakerRecoveryAdvisor` leaves in place of a flushed history).
 */
export class PromptChatMemoryAdvisor implements Advisor {
  readonly name = 'PromptChatMemoryAdvisor';
  readonly [ADVISOR_PLACEMENT] = 'once-per-call';
  readonly order: number;
  readonly #settings: MemoryAdvisorSettings;

  constructor(options: PromptChatMemoryAdvisorOptions) {
    validateOptions('PromptChatMemoryAdvisor', options, PROMPT_CHAT_MEMORY_ADVISOR_OPTION_RULES, { required: ['memory'] });
    this.order = memoryAdvisorOrder(options);
    const systemPrompt = options.systemPrompt ?? defaultMemorySystemPrompt;
    this.#settings = {
      memory: options.memory,
      defaultConversationId: defaultConversationId(options.conversationId),
      place: (request, history) => {
        const instructions = withRememberedInstructions(request.system, history);
        const text = historyText(history);
        if (text !== '') return { ...request, system: systemPrompt(instructions, text) };
        // No conversation to record: no memory section, only the instructions (a remembered system message among them).
        return instructions === request.system ? request : { ...request, system: instructions };
      },
    };
  }

  adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    return callWithMemory(this.#settings, request, chain);
  }

  adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    return streamWithMemory(this.#settings, request, chain);
  }
}
