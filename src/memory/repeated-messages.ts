import type { ModelMessage } from 'ai';
import { isClosingResult } from './message-window.ts';

/**
 * Where a request repeats the end of a history: the copies run from request
 * index `from` up to the end compared, and hold the history's messages from
 * index `historyFrom` on.
 */
interface RepeatedSpan {
  /** Index in the request of its first copy of a history message (the end compared when there is none). */
  readonly from: number;
  /** Index in the history of the first message the request repeats (the end compared when there is none). */
  readonly historyFrom: number;
  /** How many messages (a run of tool messages counting as one) the request repeats. */
  readonly repeated: number;
  /** Whether every history message before the end compared is repeated: the history starts within the copies. */
  readonly coversHistory: boolean;
  /** Whether every request message before the end compared is a copy (its system messages aside). */
  readonly coversRequest: boolean;
}

/**
 * How far `request`, up to index `requestEnd`, repeats `history` up to index
 * `historyEnd`, walking back from both ends and comparing what the messages
 * say (see {@link saidBy}). A run of tool messages is compared as one, by
 * the calls its results answer: the memory keeps a claimed approval's answer
 * in a message of its own, a client may hold a round's results in one message
 * or in several, and a result's output in another form (a denial as
 * `error-text`); the calls were compared, with their inputs, just before.
 * Approval answers are not compared, nor the results the memory makes up on
 * reading for calls the conversation moved on from (the client has none),
 * nor system messages (the history's go into the instructions; the
 * request's stay where they are).
 */
export function repeatedSpan(history: readonly ModelMessage[], historyEnd: number, request: readonly ModelMessage[], requestEnd: number): RepeatedSpan {
  const closed = closedAsNotAnswered(history);
  const held = saidIn(history, historyEnd, closed);
  const sent = saidIn(request, requestEnd, closed);
  let h = held.length;
  let r = sent.length;
  while (h > 0 && r > 0 && sameValue(held[h - 1]!.said, sent[r - 1]!.said)) {
    h--;
    r--;
  }
  return {
    from: sent[r]?.at ?? requestEnd,
    historyFrom: held[h]?.at ?? historyEnd,
    repeated: sent.length - r,
    coversHistory: h === 0,
    coversRequest: r === 0,
  };
}

/**
 * Whether `request`, up to `requestEnd`, is a copy of `history` up to its
 * end or up to one of its user messages (latest first), as
 * {@link repeatedSpan} judges a copy (something repeated, covering either
 * side): a client one turn behind repeats the conversation as it was before
 * a later turn. Each side is read once; each end tried costs its walk back,
 * which stops at the first message that differs.
 */
export function repeatsHistoryUpToATurn(history: readonly ModelMessage[], request: readonly ModelMessage[], requestEnd: number): boolean {
  const closed = closedAsNotAnswered(history);
  const held = saidIn(history, history.length, closed);
  const sent = saidIn(request, requestEnd, closed);
  for (let end = held.length; end > 0; end--) {
    // A user message starts an entry of its own, so the history up to one is a prefix of what it says.
    if (end < held.length && history[held[end]!.at]?.role !== 'user') continue;
    let h = end;
    let r = sent.length;
    while (h > 0 && r > 0 && sameValue(held[h - 1]!.said, sent[r - 1]!.said)) {
      h--;
      r--;
    }
    if (r < sent.length && (h === 0 || r === 0)) return true;
  }
  return false;
}

/**
 * Where `request`, up to `requestEnd`, goes on past a copy of the whole
 * `history`: the index of its first message after the latest such copy, when
 * a model reply is among the messages after it. That is a client that kept
 * what the memory did not store (an answer cut off mid-way; the rounds after
 * the last one whose tools ran), not one that only answers the history's open
 * calls. A copy is judged as by {@link repeatedSpan}, and must hold every
 * history message (the request may hold older ones before it: a window);
 * `undefined` when there is no such copy, or nothing the model said after it.
 * A history with no message at all (the conversation's first answer was cut
 * off) is copied by nothing: all the request holds is what the client kept.
 */
export function continuedAfter(history: readonly ModelMessage[], request: readonly ModelMessage[], requestEnd: number): number | undefined {
  const closed = closedAsNotAnswered(history);
  const held = saidIn(history, history.length, closed);
  const sent = saidIn(request, requestEnd, closed);
  const replied = (entries: readonly Said[]): boolean => entries.some((entry) => request[entry.at]?.role === 'assistant');
  // A conversation the memory holds nothing of (its first answer was cut off): all of it is what the client kept.
  if (history.length === 0) return replied(sent) ? sent[0]!.at : undefined;
  for (let end = sent.length; end >= held.length; end--) {
    let h = held.length;
    let r = end;
    while (h > 0 && sameValue(held[h - 1]!.said, sent[r - 1]!.said)) {
      h--;
      r--;
    }
    if (h > 0) continue;
    const rest = sent.slice(end);
    return replied(rest) ? rest[0]!.at : undefined;
  }
  return undefined;
}

/** A message, or a run of tool messages, by what it says; `at` is where it starts. */
interface Said {
  readonly at: number;
  readonly said: unknown;
}

/**
 * The calls of `history` whose (latest) result is the one the memory makes
 * up on reading for a call the conversation went on from (see
 * `closeUnansweredToolCalls`): a client has no result for them, and may not
 * have the call either (`convertToModelMessages` leaves out a call that
 * still waits for an approval).
 */
export function closedAsNotAnswered(history: readonly ModelMessage[]): Set<string> {
  const closed = new Set<string>();
  for (const message of history) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      if (isClosingResult(part)) closed.add(part.toolCallId);
      else closed.delete(part.toolCallId);
    }
  }
  return closed;
}

/**
 * What `messages` up to `end` say, one entry per message and per run of tool
 * messages; what is not compared is left out, and so are the `closed` calls
 * (see {@link closedAsNotAnswered}), and a message that said only those.
 */
function saidIn(messages: readonly ModelMessage[], end: number, closed: ReadonlySet<string>): Said[] {
  const said: Said[] = [];
  for (let at = 0; at < end; ) {
    const message = messages[at]!;
    if (message.role !== 'tool') {
      const what = message.role === 'system' ? undefined : saidBy(message, closed);
      if (what !== undefined) said.push({ at, said: what });
      at++;
      continue;
    }
    // The memory may split a round's results and answers over several tool messages, the client put them in one.
    const results: string[] = [];
    let next = at;
    for (; next < end && (messages[next]!.role === 'tool' || messages[next]!.role === 'system'); next++) {
      const run = messages[next]!;
      if (run.role !== 'tool') continue;
      for (const part of run.content) if (part.type === 'tool-result' && !isClosingResult(part)) results.push(part.toolCallId);
    }
    if (results.length > 0) said.push({ at, said: { role: 'tool', results: results.sort() } });
    at = next;
  }
  return said;
}

/**
 * What a user or assistant message says, as two copies of one message are
 * compared: its role; its text (the text parts joined, a string content
 * being one text part); in order, its tool calls (id, tool name and input),
 * the results of the provider's own calls (by call id), its files and images
 * (by their data), and the type of any other part; and its approval requests
 * (by approval id, in any order: the memory holds a round's calls then its
 * approval requests, `convertToModelMessages` each call with its request).
 * The `closed` calls and their approval requests are left out, and a message
 * that said nothing else is `undefined`. Provider options and metadata, reasoning and
 * provider-specific (`custom`) parts are left out: one side may carry them and
 * the other not (a client that keeps UI messages, a store round trip), and
 * they are not what was said; the memory's copy stands for both.
 */
function saidBy(message: ModelMessage & { role: 'user' | 'assistant' }, closed: ReadonlySet<string>): unknown {
  if (typeof message.content === 'string') return { role: message.role, text: message.content, parts: [], approvals: [] };
  let text = '';
  const parts: unknown[] = [];
  const approvals: string[] = [];
  let left = false;
  for (const part of message.content) {
    if ((part.type === 'tool-call' || part.type === 'tool-approval-request') && closed.has(part.toolCallId)) {
      left = true;
      continue;
    }
    switch (part.type) {
      case 'text':
        text += part.text;
        break;
      case 'reasoning':
      case 'reasoning-file':
      case 'custom':
        break;
      case 'tool-call':
        parts.push({ call: part.toolCallId, name: part.toolName, input: part.input });
        break;
      case 'tool-result':
        parts.push({ result: part.toolCallId });
        break;
      case 'tool-approval-request':
        approvals.push(part.approvalId);
        break;
      case 'image':
        parts.push({ file: fileData(part.image) });
        break;
      case 'file':
        parts.push({ file: fileData(part.data) });
        break;
      default:
        parts.push({ type: (part as { type: string }).type });
    }
  }
  if (left && text === '' && parts.length === 0 && approvals.length === 0) return undefined;
  return { role: message.role, text, parts, approvals: approvals.sort() };
}

/** A file's data without the AI SDK's tag (`{ type: 'data', data }`, `{ type: 'url', url }`, ...), which one side may use and the other not. */
function fileData(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || ArrayBuffer.isView(data) || data instanceof ArrayBuffer || data instanceof URL) return data;
  const tagged = data as { type?: unknown; data?: unknown; url?: unknown; reference?: unknown; text?: unknown };
  switch (tagged.type) {
    case 'data':
      return tagged.data;
    case 'url':
      return tagged.url;
    case 'reference':
      return tagged.reference;
    case 'text':
      return tagged.text;
    default:
      return data;
  }
}

/**
 * Deep equality as a store round trip keeps it: a property set to
 * `undefined` is the same as a missing one, binary data is compared by its
 * bytes, a URL or a date by its value.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const bytesA = bytesOf(a);
  const bytesB = bytesOf(b);
  if (bytesA !== undefined || bytesB !== undefined) return bytesA !== undefined && bytesB !== undefined && Buffer.from(bytesA).equals(bytesB);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameValue(item, b[index]));
  }
  const proto = Object.getPrototypeOf(a);
  if (proto !== Object.getPrototypeOf(b)) return false;
  if (proto !== Object.prototype && proto !== null) {
    const value = a.valueOf();
    return typeof value === 'object' ? String(a) === String(b) : Object.is(value, b.valueOf());
  }
  const keys = (o: object): string[] => Object.keys(o).filter((key) => (o as Record<string, unknown>)[key] !== undefined);
  const keysA = keys(a);
  return (
    keysA.length === keys(b).length &&
    keysA.every((key) => Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

function bytesOf(value: object): Uint8Array | undefined {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return value instanceof ArrayBuffer ? new Uint8Array(value) : undefined;
}
