import { createHash, randomUUID } from 'node:crypto';
import type { ModelMessage, ToolApprovalResponse, ToolResultPart } from 'ai';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { closeUnansweredToolCalls } from './message-window.ts';

/*
 * Claims of the caller's answers to a conversation's tool calls: approval
 * answers (claimed right before the approved calls run) and client-side
 * tools' results (claimed right before the model is called with them). A
 * claim is a tool message holding the answers, marked with a fresh claim id,
 * appended in one atomic write and read back. Read in order, a claim wins
 * when none of its answers was answered before it, and then wins them all;
 * otherwise it wins none. Every reader sees the same order, so of two claims
 * to one answer every reader sees the same one win, and what one claim
 * decides never changes with what is appended later. A claim that lost holds
 * nothing: what else it answered stays open for a later request.
 *
 * The results of a claim are in flight until their request ends the claim
 * (with its turn, or alone when the call failed): until then they are not
 * part of the conversation the memory reads, so a request that sends them
 * again finds them unanswered, claims them too, and loses. Once ended, they
 * are read right after their call, and the turn that ended the claim right
 * after them, whatever other turns were stored meanwhile.
 *
 * A retry after such a request failed finds the answers in the conversation
 * with no answer of the model's after them, and sends nothing new: it claims
 * the going on instead (see {@link claimRetryIn}), so that of two retries at
 * once only one gets the model to answer them.
 */

/**
 * Where the marks are: the message's provider options, under a namespace no
 * provider reads. A claim must tell two identical answers apart, and every
 * repository keeps provider options as they are. The claim mark keeps the
 * name it had when only approvals were claimed: stored conversations carry it.
 */
const NAMESPACE = 'governor';
const CLAIM = 'approvalClaim';
const END = 'claimEnded';
const RETRY = 'retryClaim';
const AFTER = 'after';
/** On a claim's end: how many messages of the same write follow it (the claim's turn). */
const TURN = 'turnLength';

/** An answer a claim may hold. */
export type ClaimedAnswer = ToolApprovalResponse | ToolResultPart;

/** What {@link answerKey} reads of a tool part. */
export type ToolPartKeys = { readonly type: string; readonly toolCallId?: string; readonly approvalId?: string };

/** What a tool part answers: a call (by its result) or an approval request (by the answer). */
export function answerKey(part: ToolPartKeys): string | undefined {
  if (part.type === 'tool-result') return `call:${part.toolCallId}`;
  if (part.type === 'tool-approval-response') return `approval:${part.approvalId}`;
  return undefined;
}

/** The id an answer is reported by: its approval's, or its call's. */
const answerId = (answer: ClaimedAnswer): string => (answer.type === 'tool-approval-response' ? answer.approvalId : answer.toolCallId);

const markOf = (message: ModelMessage, mark: string): unknown => message.providerOptions?.[NAMESPACE]?.[mark];

/** Whether a message serves the claims (a claim, a retry's claim, a claim's end) rather than being the conversation's own. */
const serving = (message: ModelMessage): boolean => [CLAIM, END, RETRY].some((mark) => markOf(message, mark) !== undefined);

/**
 * Claims `answers` in a conversation (see above).
 *
 * @returns the claim's id, and the ids (approval or call) of the answers another request answered first;
 * when there are any, this claim holds none of `answers`.
 */
export async function claimAnswersIn(
  repository: ChatMemoryRepository,
  conversationId: string,
  answers: readonly ClaimedAnswer[],
): Promise<{ claim: string; lost: string[] }> {
  const claim = randomUUID();
  if (answers.length === 0) return { claim, lost: [] };
  await repository.append(conversationId, [
    { role: 'tool', content: answers.map((answer) => ({ ...answer })), providerOptions: { [NAMESPACE]: { [CLAIM]: claim } } },
  ]);
  const taken = readClaims(await repository.findByConversationId(conversationId)).taken.get(claim);
  // A claim this caller cannot read back (not even its own) holds nothing: the calls run at most once.
  return { claim, lost: answers.filter((answer) => taken === undefined || taken.has(answerKey(answer)!)).map(answerId) };
}

/**
 * Claims a retry's going on from the round `history` (the conversation the
 * request read) ends with: the round's calls all have their answers in the
 * conversation, and the model has not answered them yet. The claim is a mark
 * naming the round (a digest of its messages), appended in one atomic write
 * and read back. Read in order, it wins when the conversation before it still
 * ends with that round (nothing went on from it since the request read it)
 * and no claim that won before it holds that round. A claim that won holds the
 * round until it is ended (see {@link claimEnd}), so a retry after it failed
 * goes on, or until a message is added to the conversation: a claim never
 * ended (its request died) holds only until the conversation goes on, as
 * with a new user message.
 *
 * @returns the claim's id, and whether it lost (always, when `history` does not end with answers).
 */
export async function claimRetryIn(
  repository: ChatMemoryRepository,
  conversationId: string,
  history: readonly ModelMessage[],
): Promise<{ claim: string; lost: boolean }> {
  const claim = randomUUID();
  const after = lastRoundDigest(history);
  if (after === undefined) return { claim, lost: true };
  // Marked as ending itself too: a reader of a version without retry claims leaves out what ends a claim, and
  // would otherwise send this empty tool message to the model (replicas are upgraded one at a time).
  const mark = { [RETRY]: claim, [AFTER]: after, [END]: claim };
  await repository.append(conversationId, [{ role: 'tool', content: [], providerOptions: { [NAMESPACE]: mark } }]);
  return { claim, lost: !retryWon(await repository.findByConversationId(conversationId), claim) };
}

/** Whether retry claim `claim` of `messages` won, read in order (see {@link claimRetryIn}). */
function retryWon(messages: readonly ModelMessage[], claim: string): boolean {
  const at = messages.findIndex((message) => markOf(message, RETRY) === claim);
  // A claim this caller cannot read back wins nothing: the model answers the round at most once.
  if (at === -1) return false;
  // The rounds held by claims that won and are not ended yet, by claim.
  const holding = new Map<string, string>();
  // A message of the conversation's own went on from the round: claims before it hold it no longer, ended or not.
  for (let index = messages.findLastIndex((message, i) => i < at && !serving(message)) + 1; index <= at; index++) {
    const message = messages[index]!;
    const end = markOf(message, END);
    if (typeof end === 'string') holding.delete(end);
    const retry = markOf(message, RETRY);
    const after = markOf(message, AFTER);
    if (typeof retry !== 'string' || typeof after !== 'string') continue;
    // The conversation as a reader saw it right before the claim, as `get` gives it.
    if (lastRoundDigest(closeUnansweredToolCalls(withClaimsSettled(messages.slice(0, index)))) !== after) continue;
    if (![...holding.values()].includes(after)) holding.set(retry, after);
  }
  return holding.has(claim);
}

/**
 * A digest of the round `messages` end with, when it ends with answers: its
 * assistant message and the tool messages after it. A window keeps the round
 * whole, and the model may give two rounds the same call ids, so the whole
 * round tells where the conversation stands. System messages are left out: a
 * window moves the latest one first.
 */
function lastRoundDigest(messages: readonly ModelMessage[]): string | undefined {
  const conversation = messages.filter((message) => message.role !== 'system');
  if (conversation.at(-1)?.role !== 'tool') return undefined;
  const round = conversation.slice(
    Math.max(
      0,
      conversation.findLastIndex((message) => message.role !== 'tool'),
    ),
  );
  // Keys sorted: a store may give an object's keys back in another order.
  const text = JSON.stringify(round, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return createHash('sha256').update(text).digest('base64url');
}

/**
 * The message that ends claim `claim` (of answers, or a retry's): appended in
 * the same write as what its request stores, the `turnLength` messages right
 * after it. The length tells a reader which messages are the claim's turn,
 * so that it reads them right after the claim (see {@link withClaimsSettled}).
 */
export function claimEnd(claim: string, turnLength: number): ModelMessage {
  return { role: 'tool', content: [], providerOptions: { [NAMESPACE]: { [END]: claim, [TURN]: turnLength } } };
}

/**
 * Every claim of `messages`, read in order: for each, the answers (by
 * {@link answerKey}) answered before it, none when it won; and the claims
 * that were ended.
 */
function readClaims(messages: readonly ModelMessage[]): { taken: Map<string, Set<string>>; ended: Set<string> } {
  const answered = new Set<string>();
  const taken = new Map<string, Set<string>>();
  const ended = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      // Some providers number calls per turn (call_0 in every turn): a call under an old id has no answer yet.
      for (const part of message.content) if (part.type === 'tool-call') answered.delete(`call:${part.toolCallId}`);
    }
    if (message.role !== 'tool') continue;
    const end = markOf(message, END);
    if (typeof end === 'string') ended.add(end);
    const keys = message.content.flatMap((part) => answerKey(part) ?? []);
    const claim = markOf(message, CLAIM);
    if (typeof claim === 'string') {
      const before = new Set(keys.filter((key) => answered.has(key)));
      taken.set(claim, before);
      if (before.size > 0) continue;
    }
    for (const key of keys) answered.add(key);
  }
  return { taken, ended };
}

/**
 * The stored `messages` as the conversation: a claim that lost is left out,
 * and so are the results of a claim not ended yet (they are in flight), the
 * retries' claims and the messages that end claims; the marks, which serve
 * the claims only, are removed. A lost claim stays in the repository, which
 * can only append: a rewrite of the conversation to drop it could lose a
 * concurrent writer's messages (the winner's turn among them).
 *
 * Other requests' turns may land between a call and its result, or between
 * a claim and its turn (the claim's request waits for the model meanwhile).
 * Read in stored order, that would put a call's result after unrelated
 * messages, which providers refuse for good. So every tool message is read
 * right after its call's message (with the call's other tool messages), and
 * an ended claim's turn right after its results; what came between follows
 * them. A tool message whose call the conversation does not hold (it was
 * cleared meanwhile) is left out: no provider takes it.
 */
export function withClaimsSettled(messages: readonly ModelMessage[]): ModelMessage[] {
  const { taken, ended } = readClaims(messages);
  const won = (claim: unknown): claim is string => typeof claim === 'string' && (taken.get(claim)?.size ?? 0) === 0;
  const claimed = new Set(messages.flatMap((message) => markOf(message, CLAIM) ?? []));
  // The stored turn of each ended claim that won, by claim; an end written before turns were marked leaves its turn in place.
  const turns = new Map<string, number[]>();
  const inTurn = new Set<number>();
  messages.forEach((message, index) => {
    const end = markOf(message, END);
    const length = markOf(message, TURN);
    if (!won(end) || !claimed.has(end) || typeof length !== 'number' || turns.has(end)) return;
    const turn = Array.from({ length: Math.min(length, messages.length - index - 1) }, (_, i) => index + 1 + i);
    turns.set(end, turn);
    for (const at of turn) inTurn.add(at);
  });

  const conversation = new ConversationOrder();
  messages.forEach((message, index) => {
    if (inTurn.has(index)) return;
    const claim = markOf(message, CLAIM);
    if (message.role !== 'tool' || !serving(message)) {
      conversation.add([message]);
      return;
    }
    if (!won(claim)) return;
    if (!ended.has(claim) && message.content.some((part) => part.type === 'tool-result')) return;
    const { [NAMESPACE]: ours, ...others } = message.providerOptions ?? {};
    const { [CLAIM]: _claim, ...rest } = ours ?? {};
    const options = Object.keys(rest).length === 0 ? others : { ...others, [NAMESPACE]: rest };
    const { providerOptions: _options, ...plain } = message;
    const settled = Object.keys(options).length === 0 ? plain : { ...plain, providerOptions: options };
    conversation.add([settled, ...(turns.get(claim) ?? []).map((at) => messages[at]!)]);
  });
  return conversation.messages();
}

/** A message of {@link ConversationOrder}: its tool messages, then what is read after them. */
interface Placed {
  readonly message: ModelMessage;
  readonly toolMessages: ModelMessage[];
  readonly following: Placed[];
}

/** Messages put in conversation order: each tool message after its call's message (see {@link withClaimsSettled}). */
class ConversationOrder {
  readonly #top: Placed[] = [];
  /** The message that asked, by {@link answerKey} of its answer: the latest, as a call id may come back in a later turn. */
  readonly #asked = new Map<string, Placed>();

  /** Adds messages written together (a claim and its turn): what follows a tool message is read right after it. */
  add(batch: readonly ModelMessage[]): void {
    let into = this.#top;
    for (const message of batch) {
      if (message.role !== 'tool') {
        const placed: Placed = { message, toolMessages: [], following: [] };
        into.push(placed);
        if (message.role === 'assistant' && typeof message.content !== 'string') {
          for (const part of message.content) {
            if (part.type === 'tool-call') this.#asked.set(`call:${part.toolCallId}`, placed);
            else if (part.type === 'tool-approval-request') this.#asked.set(`approval:${part.approvalId}`, placed);
          }
        }
        continue;
      }
      const asking = message.content.flatMap((part) => this.#asked.get(answerKey(part) ?? '') ?? []);
      const asker = asking[0];
      // Answers to nothing the conversation holds (it was cleared after the call): no provider takes them.
      if (asker === undefined) continue;
      const content = message.content.filter((part) => this.#asked.has(answerKey(part) ?? ''));
      asker.toolMessages.push(content.length === message.content.length ? message : { ...message, content });
      into = asker.following;
    }
  }

  messages(): ModelMessage[] {
    const out: ModelMessage[] = [];
    const put = (placed: Placed): void => {
      out.push(placed.message, ...placed.toolMessages);
      for (const next of placed.following) put(next);
    };
    for (const placed of this.#top) put(placed);
    return out;
  }
}
