/**
 * An approval answer sent again after its turn is over (the approved call ran,
 * or the denial went out, and the model answered; the memory holds it all):
 * with either memory advisor and whichever way the caller sends it, the
 * request fails with ToolApprovalConflictError before anything happens: no
 * tool runs, the model is not called, the memory is left as it was. A retry
 * of a turn that is not over (a model round failed after the tool ran) still
 * goes on from what ran.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { ChatClient, MessageWindowChatMemory, ToolApprovalConflictError, ToolCallingAdvisor, toolApprovalResponse, type ChatResponse } from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import {
  failingOnce,
  inConversation,
  lookupTool,
  FORMS,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  type Form,
  refundTool,
  REPOSITORIES,
  sentPrompts,
} from './test-support/paused-round.ts';

const answer = (response: ChatResponse, approved: boolean): ModelMessage =>
  toolApprovalResponse((response.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved, ...(approved ? {} : { reason: 'too much' }) })));

const ROUNDS: ReadonlyArray<{ readonly name: string; readonly paused: MockTurn; readonly approved: boolean; readonly ran: readonly string[] }> = [
  { name: 'an approval', paused: { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, approved: true, ran: ['refund 10'] },
  { name: 'a denial', paused: { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, approved: false, ran: [] },
  {
    name: 'an approval in a round where a tool ran before the pause',
    paused: {
      toolCalls: [
        { name: 'lookup', input: { id: 7 }, id: 'l1' },
        { name: 'refund', input: { amount: 10 }, id: 'r1' },
      ],
    },
    approved: true,
    ran: ['lookup 7', 'refund 10'],
  },
];

describe('an approval answered again after its turn is over', () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const form of Object.keys(FORMS) as Form[]) {
        for (const round of ROUNDS) {
          test(`${mode}, ${advisor}, ${form}, ${round.name}: ToolApprovalConflictError; nothing runs, no model call, the memory unchanged`, async () => {
            const runs: string[] = [];
            const memory = new MessageWindowChatMemory();
            const model = mockModel([{ text: 'Hello.' }, round.paused, { text: 'Done.' }, { text: 'You are welcome.' }]);
            const client = ChatClient.builder(model)
              .defaultTools({ lookup: lookupTool(runs), refund: refundTool(runs) })
              .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
              .build();
            const requests = (): number => sentPrompts(model, mode).length;

            const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
            const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
            const reply = answer(paused, round.approved);
            assert.equal((await runMode(inConversation(client.prompt().messages(reply)), mode)).text, 'Done.');
            assert.deepEqual(runs, round.ran);
            const stored = await memory.get('c1');
            const sent = requests();

            const before: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }];
            await assert.rejects(runMode(inConversation(client.prompt().messages(...FORMS[form](paused, reply, before))), mode), (error: unknown) => {
              assert.ok(ToolApprovalConflictError.isInstance(error), String(error));
              assert.equal(error.code, 'GOVERNOR_TOOL_APPROVAL_CONFLICT');
              assert.deepEqual(error.approvalIds, [paused.pendingApprovals![0]!.approvalId]);
              assert.match(error.message, /already answered/);
              return true;
            });
            assert.deepEqual(runs, round.ran, 'no tool ran again');
            assert.equal(requests(), sent, 'the model was not called');
            assert.deepStrictEqual(await memory.get('c1'), stored, 'the memory is unchanged');

            assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');
          });
        }
      }
    }
  }
});

describe('an approval answered again while a later round waits for another approval', () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      test(`${mode}, ${advisor}: the stale answer is refused; the waiting approval can still be answered`, async () => {
        const runs: string[] = [];
        const memory = new MessageWindowChatMemory();
        const model = mockModel([
          { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
          { text: 'Refunded 10.' },
          { toolCalls: [{ name: 'refund', input: { amount: 20 }, id: 'r2' }] },
          { text: 'Refunded 20.' },
        ]);
        const client = ChatClient.builder(model)
          .defaultTools({ refund: refundTool(runs) })
          .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
          .build();

        const first = (await runMode(inConversation(client.prompt('Refund 10')), mode)).response;
        await runMode(inConversation(client.prompt().messages(answer(first, true))), mode);
        const second = (await runMode(inConversation(client.prompt('Refund 20')), mode)).response;
        const stored = await memory.get('c1');
        const sent = sentPrompts(model, mode).length;

        await assert.rejects(
          runMode(inConversation(client.prompt().messages(answer(first, true))), mode),
          (error: unknown) => ToolApprovalConflictError.isInstance(error) && error.approvalIds[0] === first.pendingApprovals![0]!.approvalId,
        );
        assert.equal(sentPrompts(model, mode).length, sent);
        assert.deepStrictEqual(await memory.get('c1'), stored);

        assert.equal((await runMode(inConversation(client.prompt().messages(answer(second, true))), mode)).text, 'Refunded 20.');
        assert.deepEqual(runs, ['refund 10', 'refund 20']);
      });
    }
  }
});

describe('a retry of a turn that is not over goes on from what ran', () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const [store, open] of REPOSITORIES) {
        test(`${mode}, ${advisor}, ${store}: the model failed in a round after the approved one; the answer sent again goes on, nothing runs twice`, async () => {
          const runs: string[] = [];
          using opened = open();
          const memory = new MessageWindowChatMemory({ repository: opened.repository });
          // The approved round, then a round that looks an order up; the model's answer to that fails once.
          const model = failingOnce(
            mockModel([
              { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
              { toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
              { text: 'Refunded; order 7 was 10 EUR.' },
            ]),
            3,
          );
          const client = ChatClient.builder(model)
            .defaultOptions({ maxRetries: 0 })
            .defaultTools({ lookup: lookupTool(runs), refund: refundTool(runs) })
            .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
            .build();

          const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
          const reply = answer(paused, true);
          await assert.rejects(runMode(inConversation(client.prompt().messages(reply)), mode), /upstream overloaded/);
          assert.deepEqual(runs, ['refund 10', 'lookup 7']);

          assert.equal((await runMode(inConversation(client.prompt().messages(reply)), mode)).text, 'Refunded; order 7 was 10 EUR.');
          assert.deepEqual(runs, ['refund 10', 'lookup 7'], 'nothing ran twice');
        });
      }
    }
  }
});
