import { randomUUID } from 'node:crypto';
import type { ModelMessage, ToolApprovalResponse } from 'ai';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';

/**
 * Where a claim is marked: the claiming tool message's provider options,
 * under a namespace no provider reads. A claim must tell two identical
 * answers apart, and every repository keeps provider options as they are.
 */
const NAMESPACE = 'governor';
const MARK = 'approvalClaim';

/**
 * Claims `answers` in a conversation: appends them as one tool message
 * marked with a fresh claim id, then reads the conversation back. An append
 * is atomic and every writer's batch lands wholly before or after another's,
 * so of two claims to one approval, every reader sees the same one first.
 *
 * @returns the ids of the approvals whose first recorded answer is not this claim's.
 */
export async function claimApprovalsIn(repository: ChatMemoryRepository, conversationId: string, answers: readonly ToolApprovalResponse[]): Promise<string[]> {
  if (answers.length === 0) return [];
  const claim = randomUUID();
  await repository.append(conversationId, [
    { role: 'tool', content: answers.map((answer) => ({ ...answer })), providerOptions: { [NAMESPACE]: { [MARK]: claim } } },
  ]);
  const first = new Map<string, unknown>();
  for (const message of await repository.findByConversationId(conversationId)) {
    if (message.role !== 'tool') continue;
    const mark = message.providerOptions?.[NAMESPACE]?.[MARK];
    for (const part of message.content) {
      if (part.type === 'tool-approval-response' && !first.has(part.approvalId)) first.set(part.approvalId, mark);
    }
  }
  // An answer this caller cannot see first (not even its own) is not claimed: the call runs at most once.
  return answers.filter((answer) => first.get(answer.approvalId) !== claim).map((answer) => answer.approvalId);
}

/**
 * The stored `messages` as the conversation: a claim that lost (an answer to
 * an approval that an earlier message answered first) is left out, and the
 * claim marks, which serve the claim check only, are removed. The lost claim
 * stays in the repository, which can only append: a rewrite of the
 * conversation to drop it could lose a concurrent writer's messages (the
 * winner's turn among them).
 */
export function withClaimsSettled(messages: readonly ModelMessage[]): ModelMessage[] {
  const first = new Map<string, unknown>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-approval-response' && !first.has(part.approvalId)) first.set(part.approvalId, part);
  }
  const settled: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' || message.providerOptions?.[NAMESPACE]?.[MARK] === undefined) {
      settled.push(message);
      continue;
    }
    const won = message.content.filter((part) => part.type !== 'tool-approval-response' || first.get(part.approvalId) === part);
    if (won.length === 0) continue;
    const { [NAMESPACE]: ours, ...others } = message.providerOptions;
    const { [MARK]: _mark, ...rest } = ours ?? {};
    const options = Object.keys(rest).length === 0 ? others : { ...others, [NAMESPACE]: rest };
    const { providerOptions: _options, ...plain } = message;
    settled.push(Object.keys(options).length === 0 ? { ...plain, content: won } : { ...plain, content: won, providerOptions: options });
  }
  return settled;
}
