import type { ModelMessage } from 'ai';
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
 * whole call; a failed call stores nothing unless a tool ran.
 *
 * One part of the history stays messages: the last turn, when it ends with
 * an assistant message with tool calls (they wait for an approval or a
 * client-side result, or have results the model has not answered yet). That
 * turn, from its user message to the tool messages after the calls, goes
 * before the request's messages, so that the caller's approval answers and
 * tool results have the calls they answer in front of them, as the tool loop
 * and every provider require (unless the request carries that turn itself,
 * as `AgentLoop.resume` does).
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
        const { earlier, open } = splitOpenTurn(history, request.messages);
        const messages = open.length === 0 ? request.messages : [...open, ...request.messages];
        const text = historyText(earlier);
        if (text !== '') return { ...request, system: systemPrompt(instructions, text), messages };
        // No conversation to record: no memory section, only the instructions (a remembered system message among them).
        return instructions === request.system && open.length === 0 ? request : { ...request, system: instructions, messages };
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

/**
 * The history split before the turn it ends with, when that turn ends with
 * an assistant message with tool calls (and the tool messages after it) and
 * `request` does not carry that message itself: the turn the request may
 * answer, which the model must see as messages, from the user message that
 * started it. System messages are left out of the turn: they are
 * instructions.
 */
function splitOpenTurn(history: readonly ModelMessage[], request: readonly ModelMessage[]): { earlier: ModelMessage[]; open: ModelMessage[] } {
  const conversation = history.filter((message) => message.role !== 'system');
  let start = conversation.length;
  while (start > 0 && conversation[start - 1]?.role === 'tool') start--;
  const turn = conversation[start - 1];
  if (turn?.role !== 'assistant' || typeof turn.content === 'string') return { earlier: [...history], open: [] };
  const calls = new Set(turn.content.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [part.toolCallId] : [])));
  const approvals = new Set(turn.content.flatMap((part) => (part.type === 'tool-approval-request' ? [part.approvalId] : [])));
  // Approval ids are unique; call ids only within a turn (some providers use call_0 in every turn).
  const carried = request.some(
    (message) =>
      message.role === 'assistant' &&
      typeof message.content !== 'string' &&
      message.content.some((part) =>
        approvals.size > 0 ? part.type === 'tool-approval-request' && approvals.has(part.approvalId) : part.type === 'tool-call' && calls.has(part.toolCallId),
      ),
  );
  if (calls.size === 0 || carried) return { earlier: [...history], open: [] };
  // From the user message that started the turn: some providers (Gemini) want a call to follow a user turn.
  const at = history.indexOf(turn);
  const asked = history.findLastIndex((message, index) => index < at && message.role === 'user');
  const first = asked === -1 ? at : asked;
  return { earlier: history.slice(0, first), open: history.slice(first).filter((message) => message.role !== 'system') };
}
