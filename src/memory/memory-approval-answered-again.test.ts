/**
 * An approval answer sent again after its turn is over (the approved call ran,
 * or the denial went out, and the model answered, or a tool ended the loop;
 * the memory holds it all): with either memory advisor and whichever way the
 * caller sends it, the request fails with ToolApprovalConflictError before
 * anything happens: no tool runs, the model is not called, the memory is left
 * as it was. Client-side tool results sent again after the model answered
 * them fail the same way, with ToolResultConflictError. A retry of a turn
 * that is not over (a model round failed after the tool ran) still goes on
 * from what ran, and a client that sends the whole conversation with a new
 * user message after the results goes on with a new turn.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import {
  ChatClient,
  MessageWindowChatMemory,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  ToolResultConflictError,
  toolApprovalResponse,
  type ChatResponse,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_CALLS,
  CLIENT_SIDE_RESULTS,
  clientSideToolSet,
  failingOnce,
  finishTool,
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

/** The paused rounds answered again; `ended` is the output a tool ended the loop with (no model reply after the round). */
const ROUNDS: ReadonlyArray<{
  readonly name: string;
  readonly paused: MockTurn;
  readonly approved: boolean;
  readonly ran: readonly string[];
  readonly ended?: string;
}> = [
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
  {
    name: 'an approval of a return-direct tool (the loop ended on its output)',
    paused: { toolCalls: [{ name: 'refundDirect', input: { amount: 10 }, id: 'r1' }] },
    approved: true,
    ran: ['refund 10'],
    ended: 'refunded 10',
  },
  {
    name: 'an approval in a round where a loop-ending tool ran before the pause',
    paused: {
      toolCalls: [
        { name: 'finish', input: { summary: 'all set' }, id: 'f1' },
        { name: 'refund', input: { amount: 10 }, id: 'r1' },
      ],
    },
    approved: true,
    ran: ['finish all set', 'refund 10'],
    ended: 'all set',
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
            const model = mockModel([
              { text: 'Hello.' },
              round.paused,
              ...(round.ended === undefined ? [{ text: 'Done.' }] : []),
              { text: 'You are welcome.' },
            ]);
            const client = ChatClient.builder(model)
              .defaultTools({
                lookup: lookupTool(runs),
                refund: refundTool(runs),
                refundDirect: Object.assign(refundTool(runs), { returnDirect: true }),
                finish: finishTool(runs),
              })
              .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
              .build();
            const requests = (): number => sentPrompts(model, mode).length;

            const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
            const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
            const reply = answer(paused, round.approved);
            assert.equal((await runMode(inConversation(client.prompt().messages(reply)), mode)).text, round.ended ?? 'Done.');
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

describe("client-side tools' results sent again after the model answered them", () => {
  /** A client without a tool loop: the caller runs the tools the model asks for and sends their results back, which the model answers. */
  async function answered(mode: Mode, advisor: MemoryAdvisorName) {
    const memory = new MessageWindowChatMemory();
    const model = mockModel([{ text: 'Hello.' }, CLIENT_SIDE_CALLS, { text: 'Done.' }, { text: 'You are welcome.' }]);
    const client = ChatClient.builder(model).defaultTools(clientSideToolSet()).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();
    const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
    const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
    const done = (await runMode(inConversation(client.prompt().messages(CLIENT_SIDE_RESULTS)), mode)).response;
    assert.equal(done.text, 'Done.');
    const before: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }];
    return { memory, model, client, paused, done, before, stored: await memory.get('c1'), sent: sentPrompts(model, mode).length };
  }

  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const form of Object.keys(FORMS) as Form[]) {
        test(`${mode}, ${advisor}, ${form}: ToolResultConflictError; no model call, the memory unchanged`, async () => {
          const { memory, model, client, paused, before, stored, sent } = await answered(mode, advisor);

          await assert.rejects(
            runMode(inConversation(client.prompt().messages(...FORMS[form](paused, CLIENT_SIDE_RESULTS, before))), mode),
            (error: unknown) => {
              assert.ok(ToolResultConflictError.isInstance(error), String(error));
              assert.equal(error.code, 'GOVERNOR_TOOL_RESULT_CONFLICT');
              assert.equal(error.name, 'ToolResultConflictError');
              assert.deepEqual(error.toolCallIds, ['l1', 'loc-1']);
              assert.match(error.message, /already has its result/);
              return true;
            },
          );
          assert.equal(sentPrompts(model, mode).length, sent, 'the model was not called');
          assert.deepStrictEqual(await memory.get('c1'), stored, 'the memory is unchanged');

          assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');
        });
      }

      test(`${mode}, ${advisor}: the whole conversation again with a new user message after the answered results is a new turn`, async () => {
        const { memory, model, client, paused, done, before, stored, sent } = await answered(mode, advisor);
        const conversation: ModelMessage[] = [...before, ...paused.messages, CLIENT_SIDE_RESULTS, ...done.messages, { role: 'user', content: 'Thanks' }];

        assert.equal((await runMode(inConversation(client.prompt().messages(...conversation)), mode)).text, 'You are welcome.');
        assert.equal(sentPrompts(model, mode).length, sent + 1);
        assert.equal(sentPrompts(model, mode).at(-1)!.at(-1), 'user: Thanks');
        const now = await memory.get('c1');
        assert.deepStrictEqual(now.slice(0, stored.length), stored, 'what was stored stays, the results once');
        assert.deepEqual(
          now.slice(stored.length).map((m) => m.role),
          ['user', 'assistant'],
        );
        assertOneResultPerCall(now);
      });
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

      test(`${mode}, ${advisor}: client-side results under a call id an earlier, answered turn used too (call_0 in every turn) go on when retried`, async () => {
        const memory = new MessageWindowChatMemory();
        const lookup = (id: number): MockTurn => ({ toolCalls: [{ name: 'lookup', input: { id }, id: 'call_0' }] });
        // The model's answer to the second turn's result fails once.
        const model = failingOnce(mockModel([lookup(7), { text: 'Order 7: 10 EUR.' }, lookup(8), { text: 'Order 8: 12 EUR.' }]), 4);
        const client = ChatClient.builder(model)
          .defaultOptions({ maxRetries: 0 })
          .defaultTools(clientSideToolSet())
          .defaultAdvisors(MEMORY_ADVISORS[advisor](memory))
          .build();
        const result = (value: string): ModelMessage => ({
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'call_0', toolName: 'lookup', output: { type: 'text', value } }],
        });

        await runMode(inConversation(client.prompt('Order 7?')), mode);
        assert.equal((await runMode(inConversation(client.prompt().messages(result('10 EUR'))), mode)).text, 'Order 7: 10 EUR.');
        await runMode(inConversation(client.prompt('Order 8?')), mode);
        await assert.rejects(runMode(inConversation(client.prompt().messages(result('12 EUR'))), mode), /upstream overloaded/);

        assert.equal((await runMode(inConversation(client.prompt().messages(result('12 EUR'))), mode)).text, 'Order 8: 12 EUR.');
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant'],
        );
      });
    }
  }
});
