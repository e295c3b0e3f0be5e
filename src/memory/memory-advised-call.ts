import type { ModelMessage } from 'ai';
import { AdvisorOrder, type AdvisorChain } from '../chat/advisor.ts';
import { CONVERSATION_ID, DEFAULT_CONVERSATION_ID, type AdvisorContext } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import type { ChatMemory } from './chat-memory.ts';
import { assertConversationId } from './conversation-id.ts';
import { is, type OptionRules } from '../errors/validate-options.ts';

/** How a memory advisor puts the history into a request. */
type HistoryPlacement = (request: ChatClientRequest, history: readonly ModelMessage[]) => ChatClientRequest;

/** What the two chat memory advisors share. */
export interface MemoryAdvisorSettings {
  readonly memory: ChatMemory;
  readonly defaultConversationId: string;
  readonly place: HistoryPlacement;
}

/**
 * One call with memory: read the history once, run the rest of the chain
 * (the whole tool loop when the advisor sits outside it), then write the
 * user's turn and every message the call produced in ONE `add`. A call that
 * fails writes nothing, so the memory never holds half a turn.
 */
export async function callWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
  const conversationId = conversationIdFor(request.context, settings.defaultConversationId);
  const history = await settings.memory.get(conversationId);
  const result = await chain.nextCall(settings.place(request, history));
  await settings.memory.add(conversationId, [...userTurn(request.messages), ...result.response.messages]);
  return result;
}

/**
 * The streaming twin of {@link callWithMemory}: the turn is written when the
 * stream's `finish` event arrives, before it is passed on. A stream that fails
 * or is abandoned before its end writes nothing.
 */
export async function* streamWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
  const conversationId = conversationIdFor(request.context, settings.defaultConversationId);
  const history = await settings.memory.get(conversationId);
  for await (const event of chain.nextStream(settings.place(request, history))) {
    if (event.type === 'finish') {
      await settings.memory.add(conversationId, [...userTurn(request.messages), ...event.response.response.messages]);
    }
    yield event;
  }
}

/**
 * The request's conversation id: the `CONVERSATION_ID` advisor param, or
 * `fallback` when there is none. The resolved id is written back to the
 * context so that tools and advisors further in see the same conversation.
 *
 * @throws {InvalidConversationIdError} when the param is set but not a non-blank string.
 */
function conversationIdFor(context: AdvisorContext, fallback: string): string {
  const value = context.get(CONVERSATION_ID);
  if (value === undefined || value === null) {
    context.set(CONVERSATION_ID, fallback);
    return fallback;
  }
  assertConversationId(value);
  return value;
}

/**
 * The messages of a request that are this turn's news: the user messages at
 * its end. Messages before them (client default messages, few-shot examples)
 * are configuration that every request repeats, so storing them would
 * duplicate them in every turn.
 */
function userTurn(messages: readonly ModelMessage[]): ModelMessage[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === 'user') start--;
  return messages.slice(start);
}

/** The options every chat memory advisor shares. */
interface MemoryAdvisorOptions {
  readonly memory: ChatMemory;
  readonly conversationId?: string;
  readonly order?: number;
}

/** What each option every chat memory advisor shares accepts. */
export const MEMORY_ADVISOR_OPTION_RULES: OptionRules<MemoryAdvisorOptions> = {
  memory: is.having('a ChatMemory (with get and add)', 'get', 'add'),
  conversationId: is.string({ nonEmpty: true }),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * The order of a chat memory advisor whose options passed
 * {@link MEMORY_ADVISOR_OPTION_RULES}, after checking that its memory's `get`
 * and `add` are functions (the rules only see that they are there).
 */
export function memoryAdvisorOrder(options: MemoryAdvisorOptions): number {
  const memory: Partial<ChatMemory> = options.memory;
  if (typeof memory.get !== 'function' || typeof memory.add !== 'function') {
    throw new InvalidOptionError('memory', 'must be a ChatMemory (with get and add), e.g. new MessageWindowChatMemory()');
  }
  return options.order ?? AdvisorOrder.MEMORY;
}

/** The `conversationId` option with its default applied. */
export function defaultConversationId(value: string | undefined): string {
  return value ?? DEFAULT_CONVERSATION_ID;
}
