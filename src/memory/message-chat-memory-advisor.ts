import type { ModelMessage } from 'ai';
import type { Advisor, AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import { ADVISOR_PLACEMENT } from '../chat/advisor-placement.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import type { ChatMemory } from './chat-memory.ts';
import { openRound } from './open-round.ts';
import { withRememberedInstructions } from './remembered-instructions.ts';
import {
  callWithMemory,
  defaultConversationId,
  MEMORY_ADVISOR_OPTION_RULES,
  memoryAdvisorOrder,
  streamWithMemory,
  type MemoryAdvisorSettings,
} from './memory-advised-call.ts';
import { validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link MessageChatMemoryAdvisor}. */
export interface MessageChatMemoryAdvisorOptions {
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
}

/** What each option of MessageChatMemoryAdvisor accepts. */
const MESSAGE_CHAT_MEMORY_ADVISOR_OPTION_RULES: OptionRules<MessageChatMemoryAdvisorOptions> = MEMORY_ADVISOR_OPTION_RULES;

/**
 * Puts the conversation history into the request as messages, before the
 * request's own, and stores the turn after the call: the user's message(s)
 * (and the tool results or approval answers the caller sends for the
 * history's tool calls) and every assistant and tool message of the call, in
 * one `add`. A failed call stores nothing, unless a tool ran before it failed:
 * then the turn up to the last tool results is stored, so a retry goes on
 * from them instead of running the tools again. A call that succeeds but
 * cannot be stored fails with `ChatMemoryTurnNotStoredError`, which carries
 * its response. A tool call the conversation moved on from without a result
 * (an approval never answered) goes out with a closing `execution-denied`
 * result, so the conversation stays usable. An approval answered by two
 * requests at once runs in one of them; the other fails with
 * `ToolApprovalConflictError` (with a memory that implements
 * `ChatMemory.claimApprovals`, as the windowed memories do). An answer sent
 * again after its turn is over (the model answered after it, or a tool ended
 * the loop) fails the same way, with any memory, before the model is called
 * and with the memory left as it was; so does a request of nothing but
 * client-side tool results the model has answered already, with
 * `ToolResultConflictError`. Of two requests that send the same client-side
 * results at once, one gets the model's answer and the other fails with
 * `ToolResultConflictError` before its model is called (with a memory that
 * implements `ChatMemory.claimToolResults`, as the windowed memories do).
 *
 * The client's default messages stay first: the history goes after them.
 *
 * A tool approval (or a client-side tool's result) is answered by sending
 * only the answer, or the paused round again with it (its assistant message,
 * and the results of calls that ran before the pause): the copies the history
 * holds already go to the model once, and are not stored twice.
 *
 * A client that keeps the whole conversation and sends all of it every turn
 * (the AI SDK's `useChat`, a client that appends `response.messages` and its
 * next message) works too: when the request's messages before its new turn
 * end with the history the memory gives, they are left out, and the model
 * gets each earlier message once, the memory's copy. With a windowed memory
 * the client's older messages are left out with them: the window decides what
 * the model sees. A copy may differ in form (string content or text parts,
 * provider options or reasoning on one side only, a tool result's output);
 * a copy that says something else (other text, calls, inputs or ids) makes
 * the request go out as it is. A client that kept more than the memory
 * stored (an answer cut off mid-way, which the memory does not store) sends
 * the whole history and then what it kept: that goes after the history and
 * is stored with the turn. The request's system messages stay.
 *
 * A system message found in the history (the latest one) is added to the
 * request's system instructions, after the request's own, rather than sent
 * as a message: e.g. the summary a `BreakerRecoveryAdvisor` leaves in place
 * of a flushed history reaches the retried call.
 */
export class MessageChatMemoryAdvisor implements Advisor {
  readonly name = 'MessageChatMemoryAdvisor';
  readonly [ADVISOR_PLACEMENT] = 'once-per-call';
  readonly order: number;
  readonly #settings: MemoryAdvisorSettings;

  constructor(options: MessageChatMemoryAdvisorOptions) {
    validateOptions('MessageChatMemoryAdvisor', options, MESSAGE_CHAT_MEMORY_ADVISOR_OPTION_RULES, { required: ['memory'] });
    this.order = memoryAdvisorOrder(options);
    this.#settings = {
      memory: options.memory,
      defaultConversationId: defaultConversationId(options.conversationId),
      place: (request, history) => withHistoryAsMessages(request, history),
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
 * The history's messages, then the request's. A request that carries the
 * history's open round again (the paused round sent back with its answer, or
 * `AgentLoop.resume`'s whole transcript) leaves its copies out, from the
 * first message the history holds too to the round's assistant message (see
 * `openRound`), its system messages aside: the history has them, the round's
 * results included (the request's copies of those are left out as already
 * answered, see `callerTurn`), so the model gets each once and every call
 * with its results.
 */
function withHistoryAsMessages(request: ChatClientRequest, history: readonly ModelMessage[]): ChatClientRequest {
  if (history.length === 0) return request;
  const messages = history.filter((message) => message.role !== 'system');
  const resent = openRound(history, request.messages)?.resent;
  const own =
    resent === undefined
      ? request.messages
      : request.messages.filter((message, index) => index < resent.from || index > resent.carried || message.role === 'system');
  return { ...request, system: withRememberedInstructions(request.system, history), messages: [...messages, ...own] };
}
