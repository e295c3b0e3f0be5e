import type { ModelMessage } from 'ai';
import { AdvisorOrder, type AdvisorChain } from '../chat/advisor.ts';
import { CONVERSATION_ID, DEFAULT_CONVERSATION_ID, type AdvisorContext } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import type { ChatMemory } from './chat-memory.ts';
import { assertConversationId } from './conversation-id.ts';
import { assertMessagesFit, fitMessages } from './message-size.ts';
import { closeUnansweredToolCalls } from './message-window.ts';
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
 * caller's turn and every message the call produced in ONE `add`. A call that
 * fails writes nothing, so the memory never holds half a turn. A caller's
 * turn the memory could not store fails before the model is called; a
 * produced message over the memory's `maxMessageBytes` is stored with its
 * largest parts left out (see `fitMessages`), so a finished call is never lost.
 */
export async function callWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
  const turn = await startTurn(settings, request);
  const result = await chain.nextCall(turn.request);
  await turn.store(result.response.messages);
  return result;
}

/**
 * The streaming twin of {@link callWithMemory}: the turn is written when the
 * stream's `finish` event arrives, before it is passed on. A stream that fails
 * or is abandoned before its end writes nothing.
 */
export async function* streamWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
  const turn = await startTurn(settings, request);
  for await (const event of chain.nextStream(turn.request)) {
    if (event.type === 'finish') await turn.store(event.response.response.messages);
    yield event;
  }
}

/** A turn under way: the request to send and how to store the turn once the call is done. */
interface MemoryTurn {
  readonly request: ChatClientRequest;
  store(produced: readonly ModelMessage[]): Promise<void>;
}

/**
 * Reads the history and checks the caller's messages before anything is
 * spent: a turn the memory would refuse to store fails here, not after the
 * model and the tools have run.
 *
 * @throws {MessageTooLargeError} when a message of the turn is over the memory's `maxMessageBytes`.
 * @throws {InvalidMessageError} when a message of the turn cannot be stored.
 */
async function startTurn(settings: MemoryAdvisorSettings, request: ChatClientRequest): Promise<MemoryTurn> {
  const { memory } = settings;
  const conversationId = conversationIdFor(request.context, settings.defaultConversationId);
  const history = await memory.get(conversationId);
  const news = callerTurn(request.messages, history);
  const maxBytes = typeof memory.maxMessageBytes === 'number' ? memory.maxMessageBytes : undefined;
  if (maxBytes !== undefined) assertMessagesFit(news, maxBytes);
  return {
    request: settings.place(request, closeUnansweredToolCalls(history, request.messages)),
    async store(produced) {
      const stored = maxBytes === undefined ? [...produced] : fitMessages(produced, maxBytes);
      await memory.add(conversationId, [...withoutAnswersIn(news, produced), ...stored]);
    },
  };
}

/**
 * The request's conversation id: the `CONVERSATION_ID` advisor param, or
 * `fallback` when there is none. The resolved id is written back to the
 * context so that tools and advisors further in see the same conversation.
 *
 * @throws {InvalidConversationIdError} when the param is set but is not a valid conversation id.
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
 * its end, and among them the tool messages that answer the history's tool
 * calls or approval requests (the result of a tool the caller ran itself, an
 * approval answer). Messages before them (client default messages, few-shot
 * examples) are configuration that every request repeats, so storing them
 * would duplicate them in every turn. A tool part answering something the
 * history does not hold, or already answered there, is left out: stored, it
 * would be an orphan or a second answer that providers refuse.
 */
function callerTurn(messages: readonly ModelMessage[], history: readonly ModelMessage[]): ModelMessage[] {
  let start = messages.length;
  while (start > 0 && (messages[start - 1]?.role === 'user' || messages[start - 1]?.role === 'tool')) start--;
  const open = unansweredIn(history);
  const turn: ModelMessage[] = [];
  for (const message of messages.slice(start)) {
    if (message.role !== 'tool') {
      turn.push(message);
      continue;
    }
    const content = message.content.filter((part) => {
      const key = answerKey(part);
      return key !== undefined && open.delete(key);
    });
    if (content.length > 0) turn.push({ ...message, content });
  }
  return turn;
}

/** Keys of the tool calls and approval requests in `history` that nothing answers yet. */
function unansweredIn(history: readonly ModelMessage[]): Set<string> {
  const open = new Set<string>();
  for (const message of history) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      for (const part of message.content) {
        if (part.type === 'tool-call') open.add(`call:${part.toolCallId}`);
        else if (part.type === 'tool-approval-request') open.add(`approval:${part.approvalId}`);
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        const key = answerKey(part);
        if (key !== undefined) open.delete(key);
      }
    }
  }
  return open;
}

/**
 * The caller's tool parts that the call's own messages do not already hold:
 * resuming after an approval, the tool loop puts the approval answers and
 * the results in its first message, and they must be stored once.
 */
function withoutAnswersIn(turn: readonly ModelMessage[], produced: readonly ModelMessage[]): ModelMessage[] {
  const given = new Set<string>();
  for (const message of produced) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      const key = answerKey(part);
      if (key !== undefined) given.add(key);
    }
  }
  if (given.size === 0) return [...turn];
  const kept: ModelMessage[] = [];
  for (const message of turn) {
    if (message.role !== 'tool') {
      kept.push(message);
      continue;
    }
    const content = message.content.filter((part) => !given.has(answerKey(part) ?? ''));
    if (content.length > 0) kept.push({ ...message, content });
  }
  return kept;
}

/** What a tool part answers: a call (by its result) or an approval request (by the answer). */
function answerKey(part: { readonly type: string; readonly toolCallId?: string; readonly approvalId?: string }): string | undefined {
  if (part.type === 'tool-result') return `call:${part.toolCallId}`;
  if (part.type === 'tool-approval-response') return `approval:${part.approvalId}`;
  return undefined;
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
