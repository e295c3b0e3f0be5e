import type { ModelMessage } from 'ai';
import type { Advisor, AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import { ADVISOR_PLACEMENT } from '../chat/advisor-placement.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import type { ChatMemory } from './chat-memory.ts';
import { historyText } from './history-text.ts';
import { openRound } from './open-round.ts';
import { withRememberedInstructions } from './remembered-instructions.ts';
import { answerKey } from './answer-claims.ts';
import {
  callWithMemory,
  defaultConversationId,
  MEMORY_ADVISOR_OPTION_RULES,
  memoryAdvisorOrder,
  streamWithMemory,
  type MemoryAdvisorSettings,
  withoutToolParts,
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
 * whole call; a failed call stores nothing unless a tool ran. An approval
 * answer sent again after its turn is over fails with
 * `ToolApprovalConflictError`, and a request of nothing but client-side
 * results the model has answered (or another request is sending at once)
 * with `ToolResultConflictError`, as there.
 *
 * One part of the history stays messages: the last turn, when it ends with
 * an assistant message with tool calls (they wait for an approval or a
 * client-side result, or have results the model has not answered yet). That
 * turn, from its user message to the tool messages after the calls, goes
 * before the request's messages (after the client's default messages, which
 * stay first), so that the caller's approval answers and tool results have
 * the calls they answer in front of them, as the tool loop and every
 * provider require. A request that carries the turn's assistant
 * message itself (as `AgentLoop.resume` does) gets the tool messages the
 * history holds for it right after that message instead. Either way every
 * call goes out with the results it already has (a tool that ran before the
 * loop paused for an approval), and the turn's calls and results are not in
 * the text as well.
 *
 * A client that sends the whole conversation every turn (the AI SDK's
 * `useChat`) gets the same as with `MessageChatMemoryAdvisor`: the request's
 * copy of the history before its new turn is left out, so the conversation
 * reaches the model once, as the memory's text (and what the client kept
 * past the history, an answer cut off mid-way, is stored with the turn and
 * is in that text from then on).
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
        const { earlier, messages } = withOpenRound(history, request.messages);
        const text = historyText(earlier);
        if (text !== '') return { ...request, system: systemPrompt(instructions, text), messages };
        // No conversation to record: no memory section, only the instructions (a remembered system message among them).
        return instructions === request.system && messages === request.messages ? request : { ...request, system: instructions, messages };
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
 * Which of `history` goes into the system prompt as text (`earlier`), and the
 * messages the request sends (`messages`: `request` itself when the history
 * adds none). The one place that decides it; what the open round is and
 * whether the request carries it again is {@link openRound}'s decision,
 * shared with `MessageChatMemoryAdvisor`.
 *
 * When the history ends with a round of tool calls (an assistant message with
 * calls, then the tool messages after it: results of calls that ran before
 * the loop paused, answers already recorded), the request may continue that
 * round, so the round goes as messages only, not as text as well: a call must
 * reach the model with every result it has, or the AI SDK and the providers
 * refuse the request. Either the history supplies the round in front of the
 * request, from the user message that started it (some providers, Gemini,
 * want a call to follow a user turn); or, when the request carries the
 * round's assistant message itself (a caller that sends the paused round
 * again with its answer, `AgentLoop.resume`), the history's tool messages of
 * the round go right after that message, as the memory advisor left the
 * request's own copies of them out as already held (see `callerTurn`). The
 * messages the request carries before the round that the history holds just
 * before it (`AgentLoop.resume` sends the run's whole transcript) are left
 * out of the text: every earlier turn reaches the model once. System
 * messages are left out of the round: they are instructions.
 */
function withOpenRound(history: readonly ModelMessage[], request: readonly ModelMessage[]): { earlier: ModelMessage[]; messages: readonly ModelMessage[] } {
  const round = openRound(history, request);
  if (round === undefined) return { earlier: [...history], messages: request };
  const { at, toolMessages, resent } = round;
  if (resent === undefined) {
    const asked = history.findLastIndex((message, index) => index < at && message.role === 'user');
    const first = asked === -1 ? at : asked;
    return { earlier: history.slice(0, first), messages: [...history.slice(first).filter((message) => message.role !== 'system'), ...request] };
  }
  const { carried, historyFrom } = resent;
  // What the request has after the carried message is its own (answers, results of client-side tools): not twice.
  const given = new Set(
    request.slice(carried + 1).flatMap((message) => (message.role === 'tool' ? message.content.flatMap((part) => answerKey(part) ?? []) : [])),
  );
  const held = withoutToolParts(toolMessages, (part) => given.has(answerKey(part) ?? ''));
  const messages = held.length === 0 ? request : [...request.slice(0, carried + 1), ...held, ...request.slice(carried + 1)];
  // A caller that sends only the round again leaves out the user message that started it: that stays text.
  return { earlier: history.slice(0, historyFrom), messages };
}
