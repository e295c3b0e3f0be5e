import type { ModelMessage } from 'ai';

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
 *   A newest group larger than the whole budget leaves the window without it.
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
    if (groupCost > remaining) break;
    remaining -= groupCost;
    start--;
  }

  const window = groups.slice(start).flat();
  return system === undefined ? window : [system, ...window];
}
