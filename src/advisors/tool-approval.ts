import { randomUUID } from 'node:crypto';
import type { ModelMessage, ToolApprovalRequest, ToolApprovalResponse, ToolCallPart, ToolResultPart } from 'ai';
import { GovernorError } from '../errors/governor-error.ts';
import type { PendingToolApproval, ToolCallRequest } from '../chat/chat-response.ts';
import type { ValidToolCall } from './tool-execution.ts';

/**
 * Thrown when a request answers an approval that no earlier assistant message
 * asked for (a wrong or stale `approvalId`).
 */
export class InvalidToolApprovalError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_TOOL_APPROVAL';
  readonly approvalId: string;

  constructor(approvalId: string) {
    super(
      'GOVERNOR_INVALID_TOOL_APPROVAL',
      `Tool approval response references unknown approvalId "${approvalId}": no tool-approval-request with that id is in the messages. ` +
        "Send the previous response's messages (response.messages) before the approval response.",
    );
    this.approvalId = approvalId;
  }
}

/**
 * Thrown when a request answers some of the approvals a round of tool calls
 * waits for, but not all: the round's answers go in one tool message, so the
 * model never gets a round with a call that has no result. Nothing ran.
 */
export class UnansweredToolApprovalError extends GovernorError {
  declare readonly code: 'GOVERNOR_UNANSWERED_TOOL_APPROVAL';
  /** The approvals of the round that the request leaves unanswered. */
  readonly approvalIds: readonly string[];

  constructor(approvalIds: readonly string[]) {
    super(
      'GOVERNOR_UNANSWERED_TOOL_APPROVAL',
      `The round of tool calls waits for approval ${approvalIds.map((id) => `"${id}"`).join(', ')} too, which the request does not answer; nothing ran. ` +
        'Answer every approval of the round (approved or denied) in one tool message.',
    );
    this.approvalIds = approvalIds;
  }
}

/** An approval the caller answered, with the call it is for. */
export interface AnsweredApproval {
  readonly call: ToolCallRequest;
  readonly response: ToolApprovalResponse;
}

/**
 * Whether a tool call must wait for the caller's approval: the tool's
 * `needsApproval`, a boolean or a function of the input, as in the AI SDK.
 * Asked of a checked call only, with its parsed input (schema defaults
 * applied): a call with invalid arguments gets its error result, not a human.
 */
export async function needsApproval({ call, tool, input }: ValidToolCall, messages: readonly ModelMessage[], context: unknown): Promise<boolean> {
  const flag = (tool as { needsApproval?: unknown }).needsApproval;
  if (typeof flag === 'function') {
    return (await (flag as (input: unknown, options: unknown) => unknown)(input, { toolCallId: call.toolCallId, messages: [...messages], context })) === true;
  }
  return flag === true;
}

/** A fresh pending approval for `call`. */
export function pendingApproval(call: ToolCallRequest): PendingToolApproval {
  return { approvalId: `approval-${randomUUID()}`, toolCall: call };
}

/** The assistant message of a round with an approval request part after each call that waits. */
export function withApprovalRequests(assistant: ModelMessage | undefined, pending: readonly PendingToolApproval[]): ModelMessage[] {
  const requests: ToolApprovalRequest[] = pending.map((p) => ({ type: 'tool-approval-request', approvalId: p.approvalId, toolCallId: p.toolCall.toolCallId }));
  if (assistant === undefined || assistant.role !== 'assistant') return [{ role: 'assistant', content: requests }];
  const content = typeof assistant.content === 'string' ? [{ type: 'text' as const, text: assistant.content }] : assistant.content;
  return [{ ...assistant, content: [...content, ...requests] }];
}

/**
 * The approvals answered by the request's last message, when it is a tool
 * message holding `tool-approval-response` parts (the AI SDK's shape). Answers
 * whose call already has a result are skipped, so a resumed call runs once.
 *
 * An answer is for the call its approval request was made for: the latest
 * call with the request's `toolCallId` before the request. Some providers
 * number calls per turn (`call_0` in every turn), so a result for an earlier
 * call under the same id does not answer it; only a result after the call does.
 *
 * @throws InvalidToolApprovalError for an answer to an approval never requested
 */
export function answeredApprovals(messages: readonly ModelMessage[]): AnsweredApproval[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const responses = last.content.filter((p): p is ToolApprovalResponse => p.type === 'tool-approval-response' && p.providerExecuted !== true);
  if (responses.length === 0) return [];
  // By identity: the call part each id names at this point of the conversation, and the calls that got a result.
  const latestCall = new Map<string, ToolCallPart>();
  const callOfRequest = new Map<string, ToolCallPart | undefined>();
  const answered = new Set<ToolCallPart>();
  for (const message of messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      for (const part of message.content) {
        if (part.type === 'tool-call') latestCall.set(part.toolCallId, part);
        else if (part.type === 'tool-approval-request') callOfRequest.set(part.approvalId, latestCall.get(part.toolCallId));
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        const call = part.type === 'tool-result' ? latestCall.get(part.toolCallId) : undefined;
        if (call !== undefined) answered.add(call);
      }
    }
  }
  const out: AnsweredApproval[] = [];
  for (const response of responses) {
    const part = callOfRequest.get(response.approvalId);
    if (part === undefined) throw new InvalidToolApprovalError(response.approvalId);
    if (answered.has(part)) continue;
    answered.add(part);
    out.push({ call: callRequestOf(part), response });
  }
  return out;
}

/** A call of the round that asked for approvals, with the result it got before the loop paused, if it ran then. */
export interface PausedCall {
  readonly call: ToolCallRequest;
  readonly result: ToolResultPart | undefined;
}

/**
 * The calls of the round that asked for approval `approvalId`, in the
 * model's order, each with the result it got before the loop paused: the
 * calls that needed no approval ran then, and their results follow the
 * round's assistant message. Empty when no message asks for the approval.
 */
export function pausedRound(messages: readonly ModelMessage[], approvalId: string): PausedCall[] {
  const at = messages.findLastIndex(
    (m) => m.role === 'assistant' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'tool-approval-request' && p.approvalId === approvalId),
  );
  const assistant = messages[at];
  if (assistant?.role !== 'assistant' || typeof assistant.content === 'string') return [];
  const results = new Map<string, ToolResultPart>();
  for (const message of messages.slice(at + 1)) {
    // A later answer starts another round: a reused call id there is not this round's.
    if (message.role === 'assistant') break;
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') results.set(part.toolCallId, part);
  }
  return assistant.content.flatMap((part) => (part.type === 'tool-call' ? [{ call: callRequestOf(part), result: results.get(part.toolCallId) }] : []));
}

/**
 * The approvals of the round that asked for `answers` that neither they nor
 * a result after the round answer: the calls a request answering only some of
 * them would leave without a result.
 */
export function unansweredApprovals(messages: readonly ModelMessage[], answers: readonly AnsweredApproval[]): string[] {
  if (answers.length === 0) return [];
  const answered = new Set(answers.map((a) => a.response.approvalId));
  const resultOf = new Map(pausedRound(messages, answers[0]!.response.approvalId).map(({ call, result }) => [call.toolCallId, result]));
  const at = messages.findLastIndex(
    (m) => m.role === 'assistant' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'tool-approval-request' && answered.has(p.approvalId)),
  );
  const assistant = messages[at];
  if (assistant?.role !== 'assistant' || typeof assistant.content === 'string') return [];
  return assistant.content.flatMap((part) =>
    part.type === 'tool-approval-request' && !answered.has(part.approvalId) && resultOf.has(part.toolCallId) && resultOf.get(part.toolCallId) === undefined
      ? [part.approvalId]
      : [],
  );
}

/**
 * The calls that the request's last message denies with a result of its own
 * (`execution-denied`), as the AI SDK's `convertToModelMessages` sends a
 * denial made in `useChat`: the conversation needs nothing more, but a stream
 * still tells each as denied, so that the client closes the call.
 */
export function deniedWithResult(messages: readonly ModelMessage[]): Array<{ readonly call: ToolCallRequest; readonly reason: string | undefined }> {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
  }
  return last.content.flatMap((part) => {
    if (part.type !== 'tool-result' || part.output.type !== 'execution-denied') return [];
    const call = calls.get(part.toolCallId);
    return call === undefined ? [] : [{ call: callRequestOf(call), reason: part.output.reason }];
  });
}

function callRequestOf(part: ToolCallPart): ToolCallRequest {
  const rawInput = typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {});
  return { toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, rawInput };
}

/**
 * The tool message answering approval requests, to send after the response's
 * messages: `approve(pending)` / `deny(pending, reason)` for each pending call.
 *
 * ```ts
 * const first = await client.prompt().messages(...history).call().chatResponse();
 * const answer = toolApprovalResponse(first.pendingApprovals.map((p) => ({ approvalId: p.approvalId, approved: true })));
 * await client.prompt().messages(...history, ...first.messages, answer).call().content();
 * ```
 */
export function toolApprovalResponse(
  answers: ReadonlyArray<{ readonly approvalId: string; readonly approved: boolean; readonly reason?: string }>,
): ModelMessage {
  return {
    role: 'tool',
    content: answers.map((a) => ({
      type: 'tool-approval-response',
      approvalId: a.approvalId,
      approved: a.approved,
      ...(a.reason === undefined ? {} : { reason: a.reason }),
    })),
  };
}
