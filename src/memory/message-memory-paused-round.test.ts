/**
 * MessageChatMemoryAdvisor going on with a round of tool calls that paused
 * for the caller: an approval (with or without a tool that ran before the
 * pause) or a client-side tool's result. The caller may send only its answer,
 * the round again with it, or the whole conversation again with it: the model
 * gets each message once, every call with exactly one result; the approved
 * tool runs once; the memory stores the round once; and an approval answered
 * twice at once still runs once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import {
  ChatClient,
  InMemoryChatMemoryRepository,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  toolApprovalResponse,
  type ChatResponse,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_RESULTS,
  clientSideTools,
  inConversation,
  lookupTool,
  refundTool,
  REPOSITORIES,
  FORMS,
  type Form,
  RESUMES,
  sentPrompts,
} from './test-support/paused-round.ts';

const FORM_NAMES = Object.keys(FORMS) as Form[];

const approve = (response: ChatResponse, approved = true): ModelMessage =>
  toolApprovalResponse((response.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved, ...(approved ? {} : { reason: 'too much' }) })));

/** Assistant messages with tool calls: a round stored (or sent) twice has two. */
const rounds = (messages: readonly ModelMessage[]): number =>
  messages.filter((m) => m.role === 'assistant' && typeof m.content !== 'string' && m.content.some((p) => p.type === 'tool-call')).length;

const ROUNDS: ReadonlyArray<{ readonly name: string; readonly paused: MockTurn; readonly ran: string[]; readonly round: readonly string[] }> = [
  {
    name: 'a tool ran before the pause',
    paused: {
      toolCalls: [
        { name: 'lookup', input: { id: 7 }, id: 'l1' },
        { name: 'refund', input: { amount: 10 }, id: 'r1' },
      ],
    },
    ran: ['lookup 7', 'refund 10'],
    round: ['assistant: -> lookup | -> refund', 'tool lookup: order 7: 10 EUR | refund: refunded 10'],
  },
  {
    name: 'a lone approval',
    paused: { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
    ran: ['refund 10'],
    round: ['assistant: -> refund', 'tool refund: refunded 10'],
  },
];

describe('MessageChatMemoryAdvisor resumes a round that paused for an approval', () => {
  for (const mode of MODES) {
    for (const form of FORM_NAMES) {
      for (const [store, open] of REPOSITORIES) {
        for (const { name, paused: pausedTurn, ran, round } of ROUNDS) {
          test(`${mode}, ${store}, ${form}, ${name}: the model gets each message once, the tool runs once, the round is stored once`, async () => {
            const runs: string[] = [];
            using opened = open();
            const memory = new MessageWindowChatMemory({ repository: opened.repository });
            const model = mockModel([{ text: 'Hello.' }, pausedTurn, { text: 'Done.' }, { text: 'You are welcome.' }]);
            const client = ChatClient.builder(model)
              .defaultTools({ lookup: lookupTool(runs), refund: refundTool(runs) })
              .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
              .build();

            const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
            const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
            assert.equal(paused.pendingApprovals?.length, 1);
            const before: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }];
            const resumed = await runMode(inConversation(client.prompt().messages(...FORMS[form](paused, approve(paused), before))), mode);

            assert.equal(resumed.text, 'Done.');
            assert.deepEqual(runs, ran, 'each tool ran once');
            const conversation = ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', ...round];
            assert.deepEqual(sentPrompts(model, mode)[2], conversation, 'the resumed request: the round once, each call with one result');

            const stored = await memory.get('c1');
            assertOneResultPerCall(stored);
            assert.equal(rounds(stored), 1, 'the round is stored once');
            assert.deepEqual(
              stored.filter((m) => m.role !== 'tool').map((m) => m.role),
              ['user', 'assistant', 'user', 'assistant', 'assistant'],
            );

            assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');
            assert.deepEqual(sentPrompts(model, mode)[3], [...conversation, 'assistant: Done.', 'user: Thanks']);
          });
        }
      }
    }

    test(`${mode}: a denial sent with the round again reaches the model once, as the denial, and nothing runs`, async () => {
      const runs: string[] = [];
      const memory = new MessageWindowChatMemory();
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'No refund then.' }]);
      const client = ChatClient.builder(model)
        .defaultTools({ refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();
      const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
      const resumed = await runMode(inConversation(client.prompt().messages(...paused.messages, approve(paused, false))), mode);
      assert.equal(resumed.text, 'No refund then.');
      assert.deepEqual(runs, []);
      assert.deepEqual(sentPrompts(model, mode)[1], [
        'user: Refund order 7',
        'assistant: -> refund',
        'tool refund: {"type":"execution-denied","reason":"too much"}',
      ]);
      const stored = await memory.get('c1');
      assertOneResultPerCall(stored);
      assert.equal(rounds(stored), 1);
    });

    for (const form of FORM_NAMES) {
      test(`${mode}, ${form}: client-side tools — the results, sent before and after a failed model round stored them, go out once`, async () => {
        // No tool loop: the caller runs the tools and sends their results back.
        using rig = clientSideTools((memory) => new MessageChatMemoryAdvisor({ memory }));
        const { model, memory, client } = rig;
        const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
        const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
        const before: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }];
        const results = CLIENT_SIDE_RESULTS;
        const conversation = [
          'user: Hi',
          'assistant: Hello.',
          'user: Refund order 7',
          'assistant: -> lookup | -> locate',
          'tool lookup: order 7: 10 EUR | locate: Paris',
        ];
        await assert.rejects(runMode(inConversation(client.prompt().messages(...FORMS[form](paused, results, before))), mode), /upstream overloaded/);
        assert.deepEqual(sentPrompts(model, mode)[2], conversation, 'each call with its one result, the round once');
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant', 'tool'],
          'the results are stored although the round failed, the round once',
        );

        const retried = await runMode(inConversation(client.prompt().messages(...FORMS[form](paused, results, before))), mode);
        assert.equal(retried.text, 'Done.');
        assert.deepEqual(sentPrompts(model, mode)[3], conversation);
        const stored = await memory.get('c1');
        assertOneResultPerCall(stored);
        assert.deepEqual(
          stored.map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant'],
        );
      });
    }
  }
});

describe('MessageChatMemoryAdvisor: an approval answered twice at once with the round again runs once', () => {
  for (const mode of MODES) {
    for (const [first, second] of [
      ['the round again with the answer', 'the round again with the answer'],
      ['only the answer', 'the round again with the answer'],
    ] as const) {
      test(`${mode}, ${first} and ${second}: one request runs the call, the other gets ToolApprovalConflictError`, async () => {
        const runs: string[] = [];
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const repository = new InMemoryChatMemoryRepository();
        const replica = (turns: MockTurn[]) =>
          ChatClient.builder(mockModel(turns))
            .defaultTools({ lookup: lookupTool(runs), refund: refundTool(runs, gate) })
            .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository }) }))
            .build();
        const a = replica([
          {
            toolCalls: [
              { name: 'lookup', input: { id: 7 }, id: 'l1' },
              { name: 'refund', input: { amount: 10 }, id: 'r1' },
            ],
          },
          { text: 'Refunded (A).' },
        ]);
        const b = replica([{ text: 'Refunded (B).' }]);

        const paused = (await runMode(inConversation(a.prompt('Refund order 7')), mode)).response;
        const answer = approve(paused);
        const both = Promise.allSettled([
          runMode(inConversation(a.prompt().messages(...RESUMES[first](paused, answer))), mode),
          runMode(inConversation(b.prompt().messages(...RESUMES[second](paused, answer))), mode),
        ]);
        setTimeout(release, 50);
        const outcomes = (await both).map((r) => (r.status === 'fulfilled' ? r.value.text : r.reason));

        assert.deepEqual(runs, ['lookup 7', 'refund 10'], 'each tool ran once');
        assert.equal(outcomes.filter((o) => typeof o === 'string').length, 1, String(outcomes));
        const refused = outcomes.filter((o) => ToolApprovalConflictError.isInstance(o));
        assert.equal(refused.length, 1, String(outcomes));
        assert.deepEqual((refused[0] as ToolApprovalConflictError).approvalIds, [paused.pendingApprovals![0]!.approvalId]);
        const stored = await new MessageWindowChatMemory({ repository }).get('c1');
        assertOneResultPerCall(stored);
        assert.equal(rounds(stored), 1);
      });
    }

    test(`${mode}: the round sent again while another request runs the approved call is refused before the model is called`, async () => {
      const runs: string[] = [];
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
      const client = ChatClient.builder(model)
        .defaultTools({ refund: refundTool(runs, gate) })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory() }))
        .build();
      const calls = () => (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).length;

      const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
      const answer = approve(paused);
      const running = runMode(inConversation(client.prompt().messages(answer)), mode);
      while (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      // Should the second request run the tool too, it must not wait for the gate for ever.
      const fallback = setTimeout(release, 2000);
      await assert.rejects(runMode(inConversation(client.prompt().messages(...paused.messages, answer)), mode), ToolApprovalConflictError);
      clearTimeout(fallback);
      assert.equal(calls(), 1, 'the second request made no model call');
      release();
      assert.equal((await running).text, 'Refunded.');
      assert.deepEqual(runs, ['refund 10']);
    });
  }
});
