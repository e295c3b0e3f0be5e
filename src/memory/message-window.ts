import type { ModelMessage, ToolResultPart } from 'ai';

/** What the model is told about a tool call whose result never came. */
const NOT_ANSWERED = 'not answered: the conversation went on before this tool call got a result';

/**
 * `history` with a closing result for every tool call that was left without
 * one when the user moved on: a call (not provider-executed) with no
 * `tool-result` before a later user message, in `history` or in `following`
 * (the request the history is put in front of). A turn that ended waiting for
 * an approval the user never gave, or a client-side tool whose result was
 * never sent, leave such calls; the AI SDK and providers refuse a prompt that
 * holds one, so without a result the conversation could never go on.
 *
 * The result is an `execution-denied` output saying the call was not
 * answered, in a tool message placed right after the call's own tool
 * messages. It is derived from the messages alone, never stored, so every
 * repository gives the same history. A call still waiting is left as it is:
 * nothing but its results after it, or an answer to its approval request
 * after the user message (a caller that sends the transcript again with
 * the answer, as `AgentLoop.resume` does, is answering, not moving on). A
 * second result for one call (two requests that raced to store the caller's
 * answer, or a result that came after the call was closed) is dropped, as
 * providers refuse it too.
 */
export function closeUnansweredToolCalls(history: readonly ModelMessage[], following: readonly ModelMessage[] = []): ModelMessage[] {
  const messages = [...history, ...following];
  const approvalAnsweredAt = lastApprovalAnswers(messages);
  const open = new Map<string, { readonly part: ToolResultPart; readonly after: number }>();
  const closing = new Map<number, ToolResultPart[]>();
  // A second result for a call (two requests that raced to store one answer, or one that came after the
  // call was closed): providers refuse it, so it is dropped.
  const answered = new Set<string>();
  const duplicates = new Set<unknown>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant' && typeof message.content !== 'string' && index < history.length) {
      for (const part of message.content) {
        if (part.type === 'tool-call' && part.providerExecuted !== true) {
          const result: ToolResultPart = {
            type: 'tool-result',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            output: { type: 'execution-denied', reason: NOT_ANSWERED },
          };
          open.set(part.toolCallId, { part: result, after: endOfToolMessages(history, index) });
          // Some providers number calls per turn (call_0, call_1, …): a new call under an old id starts afresh.
          answered.delete(part.toolCallId);
        }
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        if (index < history.length && !open.has(part.toolCallId) && answered.has(part.toolCallId)) duplicates.add(part);
        open.delete(part.toolCallId);
        answered.add(part.toolCallId);
      }
    } else if (message.role === 'user') {
      for (const [toolCallId, { part, after }] of open) {
        if ((approvalAnsweredAt.get(toolCallId) ?? -1) > index) continue;
        closing.set(after, [...(closing.get(after) ?? []), part]);
        open.delete(toolCallId);
        answered.add(toolCallId);
      }
    }
  }
  if (closing.size === 0 && duplicates.size === 0) return [...history];

  const closed: ModelMessage[] = [];
  for (let index = 0; index <= history.length; index++) {
    const results = closing.get(index);
    if (results !== undefined) closed.push({ role: 'tool', content: results });
    if (index === history.length) break;
    const message = history[index]!;
    if (message.role !== 'tool' || !message.content.some((part) => duplicates.has(part))) {
      closed.push(message);
      continue;
    }
    const content = message.content.filter((part) => !duplicates.has(part));
    if (content.length > 0) closed.push({ ...message, content });
  }
  return closed;
}

/** For each tool call whose approval request is answered, where the last answer is. */
function lastApprovalAnswers(messages: readonly ModelMessage[]): Map<string, number> {
  const callOf = new Map<string, string>();
  const answeredAt = new Map<string, number>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      for (const part of message.content) if (part.type === 'tool-approval-request') callOf.set(part.approvalId, part.toolCallId);
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        const toolCallId = part.type === 'tool-approval-response' ? callOf.get(part.approvalId) : undefined;
        if (toolCallId !== undefined) answeredAt.set(toolCallId, index);
      }
    }
  }
  return answeredAt;
}

/** Whether a group (see toolSafeGroups) holds a tool call, not run by the provider, without its result. */
function waitsForCaller(group: readonly ModelMessage[]): boolean {
  const [assistant, ...tools] = group;
  if (assistant?.role !== 'assistant' || typeof assistant.content === 'string') return false;
  const answered = new Set<string>();
  for (const message of tools) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
  }
  return assistant.content.some((part) => part.type === 'tool-call' && part.providerExecuted !== true && !answered.has(part.toolCallId));
}

/** Whether a tool result is one {@link closeUnansweredToolCalls} made up for a call left without one. */
export function isClosingResult(part: ToolResultPart): boolean {
  return part.output.type === 'execution-denied' && part.output.reason === NOT_ANSWERED;
}

/** The index after the assistant message at `index` and the tool messages that follow it. */
function endOfToolMessages(messages: readonly ModelMessage[], index: number): number {
  let end = index + 1;
  while (messages[end]?.role === 'tool') end++;
  return end;
}

/**
 * Splits a history into groups that must stay together: a message plus the
 * tool messages that follow it (the results of the tool calls it made, or
 * answers to its approval requests). Tool messages with nothing before them
 * answer calls that are no longer in the history; they are dropped, because
 * providers reject a tool result whose call they cannot see.
 */
export function toolSafeGroups(messages: readonly ModelMessage[]): ModelMessage[][] {
  const groups: ModelMessage[][] = [];
  for (const message of messages) {
    const current = groups.at(-1);
    if (message.role === 'tool') {
      if (current !== undefined) current.push(message);
    } else {
      groups.push([message]);
    }
  }
  return groups;
}

/**
 * The most recent part of a history that fits a budget.
 *
 * - Only the latest system message is kept (a newer one replaces older ones);
 *   it is always kept, placed first, and its cost counts against the budget.
 * - Other messages are kept newest first, by whole {@link toolSafeGroups}
 *   group, until the next older group does not fit; so the window never starts
 *   with an orphan tool result and never splits a tool call from its result.
 *   A newest group larger than the whole budget leaves the window without it,
 *   unless it is a round that waits for the caller (a tool call without its
 *   result: a client-side tool's, or one waiting for approval): that round
 *   is the window, whatever it costs, as its results and answers could not
 *   be given without it.
 *
 * @param budget how much the window may cost in total.
 * @param cost what one message costs (1 for a message count, its tokens for a token budget).
 */
export function selectWindow(messages: readonly ModelMessage[], budget: number, cost: (message: ModelMessage) => number): ModelMessage[] {
  let system: ModelMessage | undefined;
  const conversation: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') system = message;
    else conversation.push(message);
  }

  let remaining = budget - (system === undefined ? 0 : cost(system));
  const groups = toolSafeGroups(conversation);
  let start = groups.length;
  while (start > 0) {
    const group = groups[start - 1] ?? [];
    const groupCost = group.reduce((sum, message) => sum + cost(message), 0);
    if (groupCost > remaining) {
      // A round waiting for the caller's results or approval answers: without it they could not be given.
      if (start === groups.length && waitsForCaller(group)) start--;
      break;
    }
    remaining -= groupCost;
    start--;
  }

  const window = groups.slice(start).flat();
  return system === undefined ? window : [system, ...window];
}
