import type { ModelMessage, ToolResultPart } from 'ai';
import { AdvisorOrder, type AdvisorChain } from '../chat/advisor.ts';
import { CONVERSATION_ID, DEFAULT_CONVERSATION_ID, DEFAULT_MESSAGES, type AdvisorContext } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { addToolLoopJournal } from '../advisors/tool-loop-journal.ts';
import { loopEndingCalls, loopEndingNames, type RoundCall } from '../advisors/loop-ending.ts';
import { resultOutput } from '../advisors/tool-execution.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { answerKey, type ToolPartKeys } from './answer-claims.ts';
import type { ChatMemory, RetryClaim, ToolResultClaim } from './chat-memory.ts';
import {
  ChatMemoryTurnNotStoredError,
  InvalidConversationIdError,
  ToolApprovalConflictError,
  ToolResultConflictError,
  ToolResultWithoutCallError,
} from './chat-memory-errors.ts';
import { assertConversationId } from './conversation-id.ts';
import { assertMessagesFit, fitMessages } from './message-size.ts';
import { closeUnansweredToolCalls } from './message-window.ts';
import { openRound } from './open-round.ts';
import { closedAsNotAnswered, continuedAfter, repeatedSpan, repeatsHistoryUpToATurn, sameValue } from './repeated-messages.ts';
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
 * caller's turn and every message the call produced in ONE `add`. A caller's
 * turn the memory could not store fails before the model is called; a
 * produced message over the memory's `maxMessageBytes` is stored with its
 * largest parts left out (see `fitMessages`), so a finished call is never lost.
 *
 * A call that fails writes nothing, so the memory never holds half a turn,
 * unless a tool ran first: its side effect has happened, so the record of it
 * is kept (see {@link MemoryTurn.storeProgress}). A call that succeeds but
 * whose turn cannot be stored fails with a `ChatMemoryTurnNotStoredError`
 * carrying the call's response.
 *
 * Inside a memory advisor on the same memory that runs the call's turn, it
 * passes the request on untouched (see {@link holdTurn}).
 */
export async function callWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
  const held = holdTurn(settings, request.context);
  if (held === undefined) return chain.nextCall(request);
  try {
    const turn = await startTurn(settings, request, held.conversationId);
    let result: ChatClientResponse;
    try {
      result = await chain.nextCall(turn.request);
    } catch (error) {
      await turn.storeProgress();
      throw error;
    }
    await turn.store(result.response);
    return result;
  } finally {
    held.release();
  }
}

/**
 * The streaming twin of {@link callWithMemory}: the turn is written when the
 * stream's `finish` event arrives, before it is passed on. A stream that fails
 * or is abandoned before its end writes nothing, unless a tool ran first (as
 * in {@link callWithMemory}).
 */
export async function* streamWithMemory(settings: MemoryAdvisorSettings, request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
  const held = holdTurn(settings, request.context);
  if (held === undefined) {
    yield* chain.nextStream(request);
    return;
  }
  try {
    const turn = await startTurn(settings, request, held.conversationId);
    let finished = false;
    try {
      for await (const event of chain.nextStream(turn.request)) {
        if (event.type === 'finish') {
          finished = true;
          await turn.store(event.response.response);
        }
        yield event;
      }
    } finally {
      // Also when the consumer stops reading: the tools that ran before it did are not undone.
      if (!finished) await turn.storeProgress();
    }
  } finally {
    held.release();
  }
}

/** The turns memory advisors are running, by call (its context): which memory, which conversation. */
const turnsUnderWay = new WeakMap<AdvisorContext, Set<{ readonly memory: ChatMemory; readonly conversationId: string }>>();

/**
 * Takes the request's turn of its conversation in the advisor's memory for
 * the advisor, until `release`; `undefined` when an advisor further out has
 * it already: a second memory advisor on the same memory in one call (a
 * client default and the same kind added on the request, as in Spring AI).
 * That one passes the request on as it is, so the history is sent once (the
 * outer advisor's placement) and the turn stored once, not twice in a row.
 * A turn is held only while it runs: a recursive advisor outside that runs
 * the memory advisor again (a retry) gets a turn of its own.
 *
 * @throws {InvalidConversationIdError} when the request's conversation id is invalid (see {@link conversationIdFor}).
 */
function holdTurn(settings: MemoryAdvisorSettings, context: AdvisorContext): { conversationId: string; release(): void } | undefined {
  const conversationId = conversationIdFor(context, settings.defaultConversationId);
  const held = turnsUnderWay.get(context) ?? new Set();
  for (const turn of held) if (turn.memory === settings.memory && turn.conversationId === conversationId) return undefined;
  const turn = { memory: settings.memory, conversationId };
  held.add(turn);
  turnsUnderWay.set(context, held);
  return { conversationId, release: () => held.delete(turn) };
}

/** A turn under way: the request to send and how to store the turn once the call is done. */
interface MemoryTurn {
  readonly request: ChatClientRequest;
  /**
   * Stores the turn of a call that succeeded: the caller's turn and every
   * message the call produced.
   *
   * @throws {ChatMemoryTurnNotStoredError} carrying `response` when the memory fails.
   */
  store(response: ChatResponse): Promise<void>;
  /**
   * After a call failed (or a stream was abandoned): stores what its tools
   * did, so that the history stays well-formed and a retry goes on from the
   * results instead of running the tools again. That is the caller's turn and
   * the call's messages up to the last round whose tools ran (each call there
   * with its result) when the tool loop ran a tool; else the tool results the
   * caller sent back for the history's calls (a client-side tool that ran),
   * without the user messages after them, which got no answer. Nothing when
   * no tool ran. Approval answers whose calls did not run are left out, so a
   * retry can send them again. Results the memory claimed are recorded
   * already: this write ends the claim, so a retry goes on from them; it
   * ends a retry's claim too, so the next retry goes on. Best effort: the
   * call's own error is what the caller gets, also when this write fails.
   */
  storeProgress(): Promise<void>;
}

/**
 * Reads the history and checks the caller's messages before anything is
 * spent: a turn the memory would refuse to store fails here, not after the
 * model and the tools have run.
 *
 * A copy of the conversation the memory holds, sent before the caller's new
 * turn by a client that keeps the conversation itself, is left out of the
 * request (see {@link withoutRepeatedConversation}).
 *
 * Tool parts the caller sends again for calls the history has answered
 * already (a retry after a call that stored its tools' results) are left out
 * of the request too: the model must not get a second result for one call.
 *
 * @throws {MessageTooLargeError} when a message of the turn is over the memory's `maxMessageBytes`.
 * @throws {InvalidMessageError} when a message of the turn cannot be stored.
 * @throws {ToolApprovalConflictError} when the request answers an approval that another request answered and whose call has no result yet,
 * or whose turn is over (the model answered after it, or a tool ended the loop), and sends nothing new besides.
 * @throws {ToolResultConflictError} when the request holds nothing new but tool results for calls whose turn is over, or when
 * another request sent results for the same calls and claimed them first (see {@link claimResults}).
 */
async function startTurn(settings: MemoryAdvisorSettings, request: ChatClientRequest, conversationId: string): Promise<MemoryTurn> {
  const { memory } = settings;
  const history = await memory.get(conversationId);
  const preamble = request.messages.slice(0, preambleLength(request));
  const sentMessages = preamble.length === 0 ? request.messages : request.messages.slice(preamble.length);
  const continuation = continuedConversation(history, sentMessages);
  // The conversation as the model is to get it before the caller's turn: what the client kept goes on from the history.
  const before = continuation === undefined ? history : [...history, ...continuation.kept];
  const own = continuation?.request ?? withoutRepeatedConversation(history, sentMessages);
  const { news: sent, messages, retried } = callerTurn(own, before, roundEndedLoop(before, request));
  const maxBytes = typeof memory.maxMessageBytes === 'number' ? memory.maxMessageBytes : undefined;
  if (maxBytes !== undefined) assertMessagesFit(sent, maxBytes);
  const fit = (produced: readonly ModelMessage[]): ModelMessage[] => (maxBytes === undefined ? [...produced] : fitMessages(produced, maxBytes));
  // Stored like the call's own messages: a client's message the memory cannot hold whole must not refuse the turn.
  const kept = continuation === undefined ? [] : fit(continuation.kept);

  // Approvals this call claimed: their answers are in the memory already.
  const claimed = new Set<string>();
  let progress: readonly ModelMessage[] = [];
  addToolLoopJournal(request.context, {
    async claimApprovals(answers) {
      if (answers.length === 0 || typeof memory.claimApprovals !== 'function') return;
      const lost = await memory.claimApprovals(conversationId, answers);
      if (lost.length > 0) throw new ToolApprovalConflictError(lost);
      for (const answer of answers) claimed.add(answer.approvalId);
    },
    toolsRan(added) {
      progress = added;
    },
  });
  const unclaimed = (turn: readonly ModelMessage[]): ModelMessage[] =>
    withoutToolParts(turn, (part) => part.type === 'tool-approval-response' && claimed.has(part.approvalId ?? ''));

  // A request that sends the open round again (with the conversation before it) goes on from its copy of
  // the round: the user messages in what it repeats are not the conversation moving on from the round's calls.
  const resent = openRound(before, messages)?.resent;
  const following = resent === undefined ? messages : messages.slice(resent.carried + 1);
  const placed = settings.place(messages === request.messages ? request : { ...request, messages }, closeUnansweredToolCalls(before, following));

  // Last, right before the model is called: a request that fails before it leaves nothing claimed.
  const { claim, news } = sent.length > 0 ? await claimResults(memory, conversationId, sent) : await claimRetry(memory, conversationId, history, retried);
  let written = false;
  const write = async (turn: readonly ModelMessage[]): Promise<void> => {
    written = true;
    if (claim !== undefined) await claim.end(turn);
    else if (turn.length > 0) await memory.add(conversationId, turn);
  };
  return {
    request: preamble.length === 0 ? placed : { ...placed, messages: [...preamble, ...placed.messages] },
    async store(response) {
      const produced = response.messages;
      try {
        await write(unclaimed([...kept, ...withoutAnswersIn(news, produced), ...fit(produced)]));
      } catch (error) {
        // Else the claimed results would stay in flight with no request left to end the claim, refused to every retry.
        await claim?.end([]).catch(() => {});
        throw new ChatMemoryTurnNotStoredError(response, error, memoryName(memory));
      }
    },
    async storeProgress() {
      if (written) return;
      try {
        let turn: ModelMessage[];
        if (progress.length > 0) {
          turn = [...kept, ...withoutAnswersIn(news, progress), ...fit(progress)];
        } else {
          // Only what ran: the results the caller sent, not its approval answers (nothing ran for them).
          const results = withoutToolParts(news, (part) => part.type === 'tool-approval-response');
          const last = results.findLastIndex((message) => message.role === 'tool');
          turn = results.slice(0, last + 1);
        }
        await write(unclaimed(turn));
      } catch {
        // The call's own error says what went wrong with it (not a message that would not fit or encode): this
        // write was its record of side effects.
      }
    },
  };
}

/**
 * Claims the client-side tool results among the caller's `news` (see
 * `ChatMemory.claimToolResults`), so that of two requests sending them at
 * once only one gets the model to answer them.
 *
 * @returns the claim, which the turn must end (none when there are no results or the memory cannot claim), and
 * `news` without the claimed results: the claim has recorded them.
 * @throws {ToolResultConflictError} when another request recorded them first.
 */
async function claimResults(
  memory: ChatMemory,
  conversationId: string,
  news: ModelMessage[],
): Promise<{ claim: ToolResultClaim | undefined; news: ModelMessage[] }> {
  const results = news.flatMap((message) => (message.role === 'tool' ? message.content.filter((part) => part.type === 'tool-result') : []));
  if (results.length === 0 || typeof memory.claimToolResults !== 'function') return { claim: undefined, news };
  const claim = await memory.claimToolResults(conversationId, results);
  if (claim.lost.length > 0) throw new ToolResultConflictError(claim.lost);
  return { claim, news: withoutToolParts(news, (part) => part.type === 'tool-result') };
}

/**
 * Claims a retry's going on (see `ChatMemory.claimRetry`) when the request
 * sends nothing new but answers the history holds, in a turn the model has
 * not answered: the retry of a request that stored them and failed. Of two
 * such retries at once only one gets the model to answer them.
 *
 * @returns the claim, which the turn must end (none when nothing was sent again or the memory cannot claim).
 * @throws {ToolApprovalConflictError} when another request claimed it first and the request sends approval answers again.
 * @throws {ToolResultConflictError} when another request claimed it first and the request sends only tool results again.
 */
async function claimRetry(
  memory: ChatMemory,
  conversationId: string,
  history: readonly ModelMessage[],
  retried: Retried,
): Promise<{ claim: RetryClaim | undefined; news: ModelMessage[] }> {
  if ((retried.approvalIds.length === 0 && retried.toolCallIds.length === 0) || typeof memory.claimRetry !== 'function') return { claim: undefined, news: [] };
  const claim = await memory.claimRetry(conversationId, history);
  // The error a first race for the same answers gives.
  if (claim.lost) throw retried.approvalIds.length > 0 ? new ToolApprovalConflictError(retried.approvalIds) : new ToolResultConflictError(retried.toolCallIds);
  return { claim, news: [] };
}

/**
 * How many of the request's messages are the client's default messages (see
 * `DEFAULT_MESSAGES`): a fixed preamble, which goes before the conversation
 * the memory holds, as the system prompt does, and is not stored. Otherwise
 * the history would land between the preamble and the caller's turn, and a
 * paused round of tool calls would be cut off from the answers that go on
 * with it. The request must start with all of them (compared by what they
 * say: an outer advisor may pass copies) and have more; else none are, and
 * they are the request's messages like any other.
 */
function preambleLength(request: ChatClientRequest): number {
  const defaults = request.context.get(DEFAULT_MESSAGES);
  if (!Array.isArray(defaults) || defaults.length >= request.messages.length) return 0;
  return defaults.every((message, index) => sameValue(message, request.messages[index])) ? defaults.length : 0;
}

/** How a store error names a memory that gave no store of its own. */
function memoryName(memory: ChatMemory): string {
  const name = (memory as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'of the memory advisor';
}

/**
 * The request's conversation id: the `CONVERSATION_ID` advisor param, or
 * `fallback` when the param is not set. The resolved id is written back to the
 * context so that tools and advisors further in see the same conversation.
 *
 * @throws {InvalidConversationIdError} when the param is set but is not a valid conversation id (`undefined` and `null` included).
 */
function conversationIdFor(context: AdvisorContext, fallback: string): string {
  if (!context.has(CONVERSATION_ID)) {
    context.set(CONVERSATION_ID, fallback);
    return fallback;
  }
  const value = context.get(CONVERSATION_ID);
  // Set to nothing is usually an id that is missing (`req.user?.id` of an anonymous user): in the default
  // conversation, every such request would read and write the history of all the others.
  if (value === undefined || value === null) {
    throw new InvalidConversationIdError(
      `the CONVERSATION_ID advisor param is set to ${value}`,
      `Pass the conversation's id, or leave the param out for the default conversation ("${fallback}").`,
    );
  }
  assertConversationId(value);
  return value;
}

/**
 * The request's messages without the conversation it repeats: a client that
 * keeps the whole conversation and sends it all every turn (the AI SDK's
 * `useChat`, a client that appends `response.messages` and the next user
 * message) repeats what the memory holds before its new turn. When the
 * request's messages before that turn (see {@link turnStart}) end with the
 * history the memory gave, or with the history up to a later user turn (a
 * client one turn behind; see `repeatsHistoryUpToATurn` for what counts as
 * the same), or are all a copy of its end, they are left out and the history stands for
 * them: the model gets each earlier message once, and the turn is stored as
 * if the client had sent only its new messages. The messages before the copy
 * of the whole history go too: they are the conversation's start, which a
 * windowed memory no longer gives, and the window decides what the model
 * sees. The request's system messages stay. Anything else (nothing repeated,
 * or a copy that says something else somewhere) is sent as it is.
 *
 * A request that carries the history's open round again is left to the
 * advisors (see `openRound`), which put the round's copies in place; only
 * what it has before a copy of the whole history goes here. One that repeats
 * the history up to that round and goes on without it has moved on from the
 * round (see {@link movedOnFromOpenRound}).
 */
function withoutRepeatedConversation(history: readonly ModelMessage[], messages: readonly ModelMessage[]): readonly ModelMessage[] {
  let end: number;
  const round = openRound(history, messages);
  const resent = round?.resent;
  if (resent !== undefined) {
    if (!resent.coversHistory) return messages;
    end = resent.from;
  } else {
    end = turnStart(messages);
    const movedOn = round === undefined ? undefined : movedOnFromOpenRound(history, round.at, messages, end);
    if (movedOn !== undefined) {
      end = movedOn;
    } else {
      if (end === 0 || end === messages.length) return messages;
      if (!repeatsHistoryUpToATurn(history, messages, end)) return messages;
    }
  }
  const kept = messages.filter((message, index) => index >= end || message.role === 'system');
  return kept.length === messages.length ? messages : kept;
}

/**
 * Where the new user messages of a request start that repeats the history up
 * to its open round (at `roundAt`) and goes on without it: `useChat` leaves
 * out a call still waiting for an approval when the user writes instead of
 * answering. The request's user messages from `start` (where its turn starts,
 * see {@link turnStart}) may then begin with the history's last one, so the
 * latest user message after which the request has repeated all of it is
 * where the new ones start. `undefined` when the request does not.
 */
function movedOnFromOpenRound(history: readonly ModelMessage[], roundAt: number, messages: readonly ModelMessage[], start: number): number | undefined {
  for (let at = messages.length - 1; at >= Math.max(start, 1); at--) {
    if (messages[at]?.role !== 'user') continue;
    const span = repeatedSpan(history, roundAt, messages, at);
    if (span.repeated > 0 && span.coversHistory) return at;
  }
  return undefined;
}

/**
 * A request that repeats the whole history and goes on past it, with a reply
 * of the model's the memory does not hold, before the user messages that end
 * it: a client that kept what the memory did not store. The memory stores
 * nothing of a call that failed before a tool ran, and of one that failed
 * later only the rounds up to the last one whose tools ran; the client keeps
 * what it was shown (an answer cut off mid-way, the round after the tools).
 * What it kept (`kept`, system messages aside) goes to the model after the
 * history and is stored with the turn, so that the memory holds the
 * conversation the client holds and its next copy is recognised: sent as it
 * is instead, the model would get the history twice (and a stored round's
 * results twice, which providers refuse) in every turn from then on.
 * `request` is the rest: the request's system messages and its user messages.
 * `undefined` for any other request (see {@link withoutRepeatedConversation}).
 */
function continuedConversation(
  history: readonly ModelMessage[],
  messages: readonly ModelMessage[],
): { kept: ModelMessage[]; request: ModelMessage[] } | undefined {
  let turn = messages.length;
  while (turn > 0 && messages[turn - 1]?.role === 'user') turn--;
  if (turn === messages.length || turn === 0) return undefined;
  const from = continuedAfter(history, messages, turn);
  if (from === undefined) return undefined;
  return {
    kept: messages.slice(from, turn).filter((message) => message.role !== 'system'),
    request: [...messages.slice(0, turn).filter((message) => message.role === 'system'), ...messages.slice(turn)],
  };
}

/** Where the caller's turn starts: the user messages, and the tool messages among them, that end `messages`. */
function turnStart(messages: readonly ModelMessage[]): number {
  let start = messages.length;
  while (start > 0 && (messages[start - 1]?.role === 'user' || messages[start - 1]?.role === 'tool')) start--;
  return start;
}

/** What a request sends again of the answers the history holds, in a turn the model has not answered: a retry's. */
interface Retried {
  readonly approvalIds: readonly string[];
  readonly toolCallIds: readonly string[];
}

/**
 * The messages of a request that are this turn's news: the user messages at
 * its end, and among them the tool messages that answer the history's tool
 * calls or approval requests (the result of a tool the caller ran itself, an
 * approval answer). Messages before them (few-shot examples the request
 * sends itself; the client's default messages are set apart before, see
 * `preambleLength`, and a copy of the conversation the memory holds is left
 * out before, see `withoutRepeatedConversation`) are configuration that every
 * request repeats, so storing them would duplicate them in every turn. A tool
 * part answering something the history does not hold, or already answered
 * there, is left out: stored, it would be an orphan or a second answer that
 * providers refuse.
 *
 * `messages` is the request's messages without the tool parts at its end
 * that answer what the history has answered already (sent again by a
 * retry): the model must not get a second result for one call either; nor
 * a result whose call neither the history nor the request holds.
 *
 * @throws {ToolApprovalConflictError} for an answer to an approval the history holds an answer to, when the call has no result
 * (it runs elsewhere), or when the turn is over (the model answered after it), and nothing else is new: no retry, a second
 * answer. Alongside a user message it is left out.
 * @throws {ToolResultConflictError} when the request's only tool parts are results for calls whose turn is over, and nothing
 * else is new: a request sent again after it was answered, which would get the model to answer its turn twice, or results
 * that come after the conversation went on without them (the history closed their calls as not answered).
 * @throws {ToolResultWithoutCallError} when the request's only news would be results whose calls neither the history nor the
 * request holds (the conversation was cleared): a provider refuses them. Alongside a user message they are left out.
 * @returns the news, the request's messages, and what it sent again of the answers of a turn still going (`retried`).
 */
function callerTurn(
  messages: readonly ModelMessage[],
  history: readonly ModelMessage[],
  endedLoop: boolean,
): { news: ModelMessage[]; messages: readonly ModelMessage[]; retried: Retried } {
  const start = turnStart(messages);
  const { open, answered, inFlight, over } = answerStates(history, endedLoop);
  const known = new Set([...open, ...answered, ...messages.slice(0, start).flatMap(callKeys)]);
  const closed = closedAsNotAnswered(history);
  const withoutCall: string[] = [];
  const movedOn: string[] = [];
  const news: ModelMessage[] = [];
  const kept: ModelMessage[] = [...messages.slice(0, start)];
  const taken: string[] = [];
  const repeated: string[] = [];
  const retried = { approvalIds: [] as string[], toolCallIds: [] as string[] };
  let changed = false;
  for (const message of messages.slice(start)) {
    if (message.role !== 'tool') {
      news.push(message);
      kept.push(message);
      continue;
    }
    const content = message.content.filter((part) => {
      const key = answerKey(part);
      return key !== undefined && open.delete(key);
    });
    if (content.length > 0) news.push({ ...message, content });
    const sent = message.content.filter((part) => {
      const key = answerKey(part);
      // A result for a call the model cannot see: providers refuse it.
      if (part.type === 'tool-result' && !known.has(key!)) {
        withoutCall.push(part.toolCallId);
        return false;
      }
      if (key === undefined || !answered.has(key) || content.includes(part)) return true;
      if ((inFlight.has(key) || over.has(key)) && part.type === 'tool-approval-response') taken.push(part.approvalId);
      if (over.has(key) && part.type === 'tool-result') (closed.has(part.toolCallId) ? movedOn : repeated).push(part.toolCallId);
      if (!over.has(key) && !inFlight.has(key)) {
        if (part.type === 'tool-approval-response') retried.approvalIds.push(part.approvalId);
        else if (part.type === 'tool-result') retried.toolCallIds.push(part.toolCallId);
      }
      return false;
    });
    changed ||= sent.length < message.content.length;
    if (sent.length > 0) kept.push(sent.length === message.content.length ? message : { ...message, content: sent });
  }
  // Alongside something new (a user message), a copy of what the history holds, an answer to an approval another request
  // took, or a result whose call it does not hold, is only left out: `useChat` sends the answers it holds with every
  // message, so a request that took an approval and died must not refuse the conversation every later message.
  if (taken.length > 0 && news.length === 0) throw new ToolApprovalConflictError(taken);
  if (withoutCall.length > 0 && news.length === 0) throw new ToolResultWithoutCallError(withoutCall);
  if (repeated.length > 0 && news.length === 0) throw new ToolResultConflictError(repeated);
  if (movedOn.length > 0 && news.length === 0) throw new ToolResultConflictError(movedOn, 'moved-on');
  return { news, messages: changed ? kept : messages, retried };
}

/** The {@link answerKey} of each call (not provider-executed) `message` makes. */
function callKeys(message: ModelMessage): string[] {
  if (message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [`call:${part.toolCallId}`] : []));
}

/**
 * What the tool calls and approval requests of `history` are at its end, by
 * {@link answerKey}: still open, or answered; the answered approvals whose
 * call has no result (it is running elsewhere, or its run was cut off); and
 * the answered ones whose turn is over: a model answer without calls to
 * run, or a user message, came after the answer, or the history ends with
 * the round that ended the tool loop (`endedLoop`, see {@link roundEndedLoop}).
 * (A retry of a call that failed after the approved tool ran finds its turn
 * still going: the history ends with the results, or with later rounds, that
 * the model did not answer.) A call id used again later (some providers
 * number calls per turn) starts afresh.
 */
function answerStates(
  history: readonly ModelMessage[],
  endedLoop: boolean,
): { open: Set<string>; answered: Set<string>; inFlight: Set<string>; over: Set<string> } {
  const open = new Set<string>();
  const answered = new Set<string>();
  const over = new Set<string>();
  // Results and approval answers given since the last message that ended a turn.
  let going: string[] = [];
  // Calls by instance (`id#n`: the n-th call under that id), as an id may come back in a later turn.
  const calls = new Map<string, number>();
  const callOf = new Map<string, string>();
  const withResult = new Set<string>();
  const instance = (toolCallId: string): string => `${toolCallId}#${calls.get(toolCallId) ?? 0}`;
  for (const message of history) {
    if (message.role === 'user' || (message.role === 'assistant' && !callsTools(message))) {
      for (const key of going) over.add(key);
      going = [];
    }
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      for (const part of message.content) {
        let key: string;
        if (part.type === 'tool-call') {
          key = `call:${part.toolCallId}`;
          calls.set(part.toolCallId, (calls.get(part.toolCallId) ?? 0) + 1);
        } else if (part.type === 'tool-approval-request') {
          key = `approval:${part.approvalId}`;
          callOf.set(key, instance(part.toolCallId));
        } else {
          continue;
        }
        open.add(key);
        answered.delete(key);
        over.delete(key);
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        const key = answerKey(part);
        if (key === undefined || !open.delete(key)) continue;
        answered.add(key);
        going.push(key);
        if (part.type === 'tool-result') withResult.add(instance(part.toolCallId));
      }
    }
  }
  if (endedLoop) for (const key of going) over.add(key);
  const inFlight = new Set<string>();
  for (const key of answered) {
    const call = callOf.get(key);
    if (call !== undefined && !withResult.has(call)) inFlight.add(key);
  }
  return { open, answered, inFlight, over };
}

/**
 * Whether `history` ends with a round of tool calls that ended the request's
 * tool loop, judged by the tool loop's own rule (`loopEndingCalls`) on the
 * request's tools, once every call has its result. No model round follows such a round:
 * its results are the turn's answer, as a model reply would be.
 */
function roundEndedLoop(history: readonly ModelMessage[], request: ChatClientRequest): boolean {
  const round = openRound(history, []);
  const turn = round === undefined ? undefined : history[round.at];
  if (round === undefined || turn?.role !== 'assistant' || typeof turn.content === 'string') return false;
  const results = new Map<string, ToolResultPart>();
  for (const message of round.toolMessages) {
    if (message.role === 'tool') for (const part of message.content) if (part.type === 'tool-result') results.set(part.toolCallId, part);
  }
  const calls: RoundCall[] = [];
  for (const part of turn.content) {
    if (part.type !== 'tool-call') continue;
    const result = results.get(part.toolCallId);
    // A call of the provider's own has its result in the assistant message: like the tool loop, it ends nothing.
    if (result === undefined && part.providerExecuted !== true) return false;
    const tool = Object.hasOwn(request.tools, part.toolName) ? request.tools[part.toolName] : undefined;
    calls.push({ tool, toolName: part.toolName, ran: result !== undefined && !resultOutput(result).isError });
  }
  return loopEndingCalls(calls, loopEndingNames(request.context)) !== undefined;
}

/** Whether an assistant message asks for a tool call to run (the provider's own calls ran already): the tool loop goes on. */
function callsTools(message: ModelMessage & { role: 'assistant' }): boolean {
  return typeof message.content !== 'string' && message.content.some((part) => part.type === 'tool-call' && part.providerExecuted !== true);
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

/** `messages` without the tool parts `drop` picks; a tool message left empty goes too. */
export function withoutToolParts(messages: readonly ModelMessage[], drop: (part: ToolPartKeys) => boolean): ModelMessage[] {
  const kept: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' || !message.content.some(drop)) {
      kept.push(message);
      continue;
    }
    const content = message.content.filter((part) => !drop(part));
    if (content.length > 0) kept.push({ ...message, content });
  }
  return kept;
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
  conversationId: (value, path) => {
    is.string({ nonEmpty: true })(value, path);
    // Refused now rather than by the repository at every call that names no conversation.
    try {
      assertConversationId(value);
    } catch (error) {
      if (InvalidConversationIdError.isInstance(error)) throw new InvalidOptionError(path, error.message.replace(/^Invalid conversation id: /, ''));
      throw error;
    }
  },
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
