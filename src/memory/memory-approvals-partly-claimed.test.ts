/**
 * Two requests that answer overlapping sets of one round's approvals at once
 * (approvals answered a few at a time in two tabs, two replicas): the first
 * claim wins all of its approvals, the other request loses the shared one and
 * fails with ToolApprovalConflictError before anything of it runs. Its other
 * approval is not left claimed with no one to run it: it stays open, and
 * answered again it runs, once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { ChatClient, MessageWindowChatMemory, ToolApprovalConflictError, ToolCallingAdvisor, toolApprovalResponse, type ChatResponse } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { assertOneResultPerCall, inConversation, MEMORY_ADVISORS, type MemoryAdvisorName, refundTool } from './test-support/paused-round.ts';
import { ReadMeeting, SHARED_STORES } from '../test-support/shared-chat-stores.ts';

const approve = (response: ChatResponse, indexes: readonly number[]): ModelMessage =>
  toolApprovalResponse(indexes.map((index) => ({ approvalId: response.pendingApprovals![index]!.approvalId, approved: true })));

/** Every approval answer the conversation holds, by approval id. */
const answers = (messages: readonly ModelMessage[]): string[] =>
  messages.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-approval-response' ? [p.approvalId] : [])) : []));

describe('two requests answer overlapping approvals of one round at once', () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const [store, open] of SHARED_STORES) {
        test(`${mode}, ${advisor}, ${store}: the loser's other approval is not locked; answered again, it runs once`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const runs: string[] = [];
          const model = mockModel([
            {
              toolCalls: [
                { name: 'refund', input: { amount: 10 }, id: 'r1' },
                { name: 'refund', input: { amount: 20 }, id: 'r2' },
                { name: 'refund', input: { amount: 30 }, id: 'r3' },
              ],
            },
            { text: 'Refunded all three.' },
          ]);
          const replica = () =>
            ChatClient.builder(model)
              .defaultTools({ refund: refundTool(runs) })
              .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](new MessageWindowChatMemory({ repository: meeting.wrap(shared.handle()) })))
              .build();
          const [a, b] = [replica(), replica()];
          const paused = (await runMode(inConversation(a.prompt('Refund orders 7, 8 and 9')), mode)).response;
          assert.equal(paused.pendingApprovals?.length, 3);
          const ids = paused.pendingApprovals!.map((p) => p.approvalId);

          // A approves the first two, B the last two; both read the round before either claims.
          meeting.arm(2);
          const outcomes = await Promise.allSettled([
            runMode(inConversation(a.prompt().messages(approve(paused, [0, 1]))), mode),
            runMode(inConversation(b.prompt().messages(approve(paused, [1, 2]))), mode),
          ]);
          const errors = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as unknown) : o.value.text));
          const loser = errors.findIndex((e) => ToolApprovalConflictError.isInstance(e));
          assert.notEqual(loser, -1, String(errors));
          assert.deepEqual((errors[loser] as ToolApprovalConflictError).approvalIds, [ids[1]], 'the approval both answered');
          // The winner ran its two; the model cannot answer a round with a call still waiting for approval.
          assert.match(String(errors[1 - loser]), /Tool result is missing for tool call r[13]/);
          const [client, rest, ran, left] = loser === 0 ? [a, 0, ['refund 20', 'refund 30'], 'refund 10'] : [b, 2, ['refund 10', 'refund 20'], 'refund 30'];
          assert.deepEqual([...runs].sort(), ran, "nothing of the loser's ran");

          // The approval only the loser answered is still open: answered again, it runs, and the round is complete.
          assert.equal((await runMode(inConversation(client.prompt().messages(approve(paused, [rest]))), mode)).text, 'Refunded all three.');
          assert.deepEqual([...runs].sort(), [...ran, left].sort(), 'each approved call ran once');

          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assertOneResultPerCall(stored);
          assert.deepEqual(answers(stored).sort(), [...ids].sort(), 'each approval is answered once');
          await assert.rejects(runMode(inConversation(a.prompt().messages(approve(paused, [1]))), mode), ToolApprovalConflictError);
          assert.equal(runs.length, 3);
        });
      }
    }
  }
});
