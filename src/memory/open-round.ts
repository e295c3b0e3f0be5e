import type { ModelMessage } from 'ai';
import { repeatedSpan } from './repeated-messages.ts';

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
  /**
   * Whether the request repeats every history message before the round: the
   * request messages before `from` are then older than what the memory gives
   * (a window of the conversation), not copies.
   */
  readonly coversHistory: boolean;
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
 * what the history's message before it says is a copy as well (see
 * `repeatedSpan` for what counts as the same).
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
  const { from, historyFrom, coversHistory } = repeatedSpan(history, at, request, carried);
  return { at, toolMessages, resent: { carried, from, historyFrom, coversHistory } };
}
