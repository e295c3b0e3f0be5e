/**
 * Two requests that answer overlapping sets of one round's approvals at once
 * (approvals answered a few at a time in two tabs, two replicas), each
 * leaving one of the round's approvals unanswered: each fails with
 * UnansweredToolApprovalError before anything runs or is claimed, so no
 * approval is left claimed with no one to run it. Answered whole, the round
 * runs each approved call once, and the other request's whole answer then
 * fails with ToolApprovalConflictError.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import {
  ChatClient,
  MessageWindowChatMemory,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  toolApprovalResponse,
  UnansweredToolApprovalError,
  type ChatResponse,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { assertOneResultPerCall, inConversation, MEMORY_ADVISORS, type MemoryAdvisorName, refundTool } from './test-support/paused-round.ts';
import { ReadMeeting, SHARED_STORES } from '../test-support/shared-chat-stores.ts';

const approve = (response: ChatResponse, indexes: readonly number[]): ModelMessage =>
  toolApprovalResponse(indexes.map((index) => ({ approvalId: response.pendingApprovals![index]!.approvalId, approved: true })));

/** Every approval answer the conversation holds, by approval id. */
const answers = (messages: readonly ModelMessage[]): string[] =>
  messages.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-approval-response' ? [p.approvalId] : [])) : []));

describe("two requests answer overlapping parts of one round's approvals at once", () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const [store, open] of SHARED_STORES) {
        test(`${mode}, ${advisor}, ${store}: neither partial answer runs or claims anything; answered whole, each call runs once`, async () => {
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

          // A approves the first two, B the last two; both read the round before either would claim.
          meeting.arm(2);
          const outcomes = await Promise.allSettled([
            runMode(inConversation(a.prompt().messages(approve(paused, [0, 1]))), mode),
            runMode(inConversation(b.prompt().messages(approve(paused, [1, 2]))), mode),
          ]);
          const errors = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as unknown) : o.value.text));
          assert.ok(
            errors.every((e) => UnansweredToolApprovalError.isInstance(e)),
            String(errors),
          );
          assert.deepEqual((errors[0] as UnansweredToolApprovalError).approvalIds, [ids[2]]);
          assert.deepEqual((errors[1] as UnansweredToolApprovalError).approvalIds, [ids[0]]);
          assert.deepEqual(runs, [], 'nothing ran');
          assert.deepEqual(answers(await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1')), [], 'nothing was claimed');

          // Answered whole, the round runs each approved call once; the other replica's whole answer is then a second one.
          assert.equal((await runMode(inConversation(a.prompt().messages(approve(paused, [0, 1, 2]))), mode)).text, 'Refunded all three.');
          assert.deepEqual([...runs].sort(), ['refund 10', 'refund 20', 'refund 30']);
          await assert.rejects(runMode(inConversation(b.prompt().messages(approve(paused, [0, 1, 2]))), mode), ToolApprovalConflictError);
          assert.equal(runs.length, 3);

          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assertOneResultPerCall(stored);
          assert.deepEqual(answers(stored).sort(), [...ids].sort(), 'each approval is answered once');
        });
      }
    }
  }
});
