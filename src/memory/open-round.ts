import type { ModelMessage } from 'ai';

/**
 * The round of tool calls a history ends with: an assistant message with
 * calls (not provider-executed) and the tool messages after it (results of
 * calls that ran before the loop paused for an approval, answers already
 * recorded). Its calls wait for an approval or a client-side result, or have
 * results the model has not answered yet, so the request may continue it.
 */
export interface OpenRound {
  /** Index in the history of the round's assistant message. */
  readonly at: number;
  /** The round's tool messages as the history holds them (system messages left out). */
  readonly toolMessages: readonly ModelMessage[];
  /** Where the request sends the round again, when it does. */
  readonly resent: ResentRound | undefined;
}

/**
 * A request that carries a copy of the history's open round: a caller that
 * sends the paused round again with its answer, or `AgentLoop.resume`, which
 * sends the run's whole transcript with it. Both memory advisors decide from
 * this which copy reaches the model, so that each message does so once.
 */
interface ResentRound {
  /** Index in the request of its copy of the round's assistant message. */
  readonly carried: number;
  /**
   * Index in the request of its first copy of a history message (at most
   * `carried`): the messages just before the round that the request repeats
   * in the history's order are copies too (a run's earlier turns).
   */
  readonly from: number;
  /** Index in the history of the first message the request repeats (at most `at`). */
  readonly historyFrom: number;
}

/**
 * The history's open round (see {@link OpenRound}), and where `request`
 * carries it again; `undefined` when the history does not end with one. The
 * one place that decides both, for both memory advisors.
 *
 * The request carries the round when one of its assistant messages asks for
 * one of the round's approvals (approval ids are unique), or, in a round with
 * no approval request, holds one of its calls (call ids are unique only
 * within a turn). Walking back from that copy, each request message that says
 * what the history's message before it says (same role and content; tool
 * messages compared on their results, as the memory may keep a claimed
 * approval answer in a message of its own) is a copy as well.
 */
export function openRound(history: readonly ModelMessage[], request: readonly ModelMessage[]): OpenRound | undefined {
  let start = history.length;
  while (start > 0 && (history[start - 1]?.role === 'tool' || history[start - 1]?.role === 'system')) start--;
  const turn = history[start - 1];
  if (turn?.role !== 'assistant' || typeof turn.content === 'string') return undefined;
  const calls = new Set(turn.content.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [part.toolCallId] : [])));
  if (calls.size === 0) return undefined;
  const at = start - 1;
  const toolMessages = history.slice(start).filter((message) => message.role === 'tool');
  const approvals = new Set(turn.content.flatMap((part) => (part.type === 'tool-approval-request' ? [part.approvalId] : [])));
  const carried = request.findLastIndex(
    (message) =>
      message.role === 'assistant' &&
      typeof message.content !== 'string' &&
      message.content.some((part) =>
        approvals.size > 0 ? part.type === 'tool-approval-request' && approvals.has(part.approvalId) : part.type === 'tool-call' && calls.has(part.toolCallId),
      ),
  );
  if (carried === -1) return { at, toolMessages, resent: undefined };
  let from = carried;
  let historyFrom = at;
  for (let h = at - 1, r = carried - 1; h >= 0 && r >= 0; ) {
    const held = history[h]!;
    const sent = request[r]!;
    if (held.role === 'system' || onlyApprovalAnswers(held)) h--;
    else if (onlyApprovalAnswers(sent)) r--;
    else if (sameMessage(held, sent)) {
      from = r--;
      historyFrom = h--;
    } else break;
  }
  return { at, toolMessages, resent: { carried, from, historyFrom } };
}

/**
 * A tool message of approval answers only: the memory's record of a claimed
 * answer, which the request has inside the message with the call's result
 * (as the tool loop puts them), or the request's copy of such a record.
 */
function onlyApprovalAnswers(message: ModelMessage): boolean {
  return message.role === 'tool' && message.content.every((part) => part.type === 'tool-approval-response');
}

/** Whether two messages say the same: role and content, a tool message's approval answers aside. */
function sameMessage(a: ModelMessage, b: ModelMessage): boolean {
  return a.role === b.role && sameValue(said(a), said(b));
}

function said(message: ModelMessage): unknown {
  return message.role === 'tool' ? message.content.filter((part) => part.type !== 'tool-approval-response') : message.content;
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
