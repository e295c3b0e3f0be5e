/**
 * PromptChatMemoryAdvisor going on with a round of tool calls whose results
 * the memory already holds: a tool the loop ran before it paused for an
 * approval, or the caller's own tool results that a failed call stored. The
 * round goes to the model as messages, each call with its one result, and not
 * as text too, whether the caller sends only its answer or the round again
 * with it (as `AgentLoop.resume` does), on a real store as on the in-memory one.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import {
  ChatClient,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  ToolCallingAdvisor,
  toolApprovalResponse,
  type ChatMemoryRepository,
  type ChatResponse,
  type GovernedToolSet,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_RESULTS,
  clientSideTools,
  inConversation,
  lookupTool,
  refundTool,
  REPOSITORIES,
  RESUMES,
  sentPrompts,
  type Resume,
} from './test-support/paused-round.ts';

/** The system prompt of a request's lines, and the rest. */
function split(lines: readonly string[]): { system: string; messages: string[] } {
  const [first = '', ...rest] = lines;
  assert.ok(first.startsWith('system: '), first);
  return { system: first, messages: rest };
}

/**
 * Runs 'Hi', then a turn whose round calls `lookup` (runs at once) and a tool
 * that makes the loop pause, resumes it the `resume` way, then asks once more.
 */
async function pausedAfterLookup(options: {
  readonly mode: Mode;
  readonly resume: Resume;
  readonly repository: ChatMemoryRepository;
  readonly paused: MockTurn;
  readonly tools: GovernedToolSet;
  readonly answer: (paused: ChatResponse) => ModelMessage;
}) {
  const { mode, resume, repository } = options;
  const model = mockModel([{ text: 'Hello.' }, options.paused, { text: 'Done.' }, { text: 'You are welcome.' }]);
  const memory = new MessageWindowChatMemory({ repository });
  const client = ChatClient.builder(model)
    .defaultTools(options.tools)
    .defaultAdvisors(new ToolCallingAdvisor(), new PromptChatMemoryAdvisor({ memory }))
    .build();

  await runMode(inConversation(client.prompt('Hi')), mode);
  const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
  const resumed = await runMode(inConversation(client.prompt().messages(...RESUMES[resume](paused, options.answer(paused)))), mode);
  const stored = await memory.get('c1');
  const later = await runMode(inConversation(client.prompt('Thanks')), mode);
  return { paused, resumed, stored, later, prompts: sentPrompts(model, mode), storedAtEnd: await memory.get('c1') };
}

describe('PromptChatMemoryAdvisor resumes a round in which a tool ran before the pause', () => {
  for (const mode of MODES) {
    for (const resume of Object.keys(RESUMES) as Resume[]) {
      for (const [store, open] of REPOSITORIES) {
        test(`${mode}, ${store}, ${resume}: an approval — the call that ran goes out with its result, as messages, and is stored once`, async () => {
          const runs: string[] = [];
          const refund = refundTool(runs);
          using opened = open();
          const { paused, resumed, stored, later, prompts, storedAtEnd } = await pausedAfterLookup({
            mode,
            resume,
            repository: opened.repository,
            paused: {
              toolCalls: [
                { name: 'lookup', input: { id: 7 }, id: 'l1' },
                { name: 'refund', input: { amount: 10 }, id: 'r1' },
              ],
            },
            tools: { lookup: lookupTool(runs), refund },
            answer: (response) => toolApprovalResponse((response.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved: true }))),
          });

          assert.equal(paused.pendingApprovals?.length, 1);
          assert.equal(resumed.text, 'Done.');
          assert.deepEqual(runs, ['lookup 7', 'refund 10'], 'each tool ran once');

          // The resumed request: the round as messages (lookup's result included), and not as text too.
          const { system, messages } = split(prompts[2]!);
          assert.match(system, /user: Hi\nassistant: Hello\./, 'earlier turns stay text');
          assert.doesNotMatch(system, /lookup|refund/, 'the round is not in the text');
          const round = ['assistant: -> lookup | -> refund', 'tool lookup: order 7: 10 EUR | refund: refunded 10'];
          assert.deepEqual(messages, resume === 'only the answer' ? ['user: Refund order 7', ...round] : round);
          if (resume !== 'only the answer') assert.match(system, /assistant: Hello\.\nuser: Refund order 7$/m);

          // Stored: every call with exactly one result, and the next turn has it all as text.
          assertOneResultPerCall(stored);
          assert.deepEqual(
            stored.map((m) => m.role),
            ['user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'tool', 'assistant'],
          );
          assert.equal(later.text, 'You are welcome.');
          const next = split(prompts[3]!);
          assert.deepEqual(next.messages, ['user: Thanks']);
          assert.match(
            next.system,
            /user: Refund order 7\nassistant called lookup\(\{"id":7\}\)\nassistant called refund\(\{"amount":10\}\)\nlookup returned: order 7: 10 EUR\nrefund returned: refunded 10\nassistant: Done\./,
          );
          assertOneResultPerCall(storedAtEnd);
        });
      }

      test(`${mode}, ${resume}: client-side tools — a retry after the round failed sends the stored results with their calls, as messages`, async () => {
        // No tool loop: the caller runs the tools and sends their results back.
        using rig = clientSideTools((memory) => new PromptChatMemoryAdvisor({ memory }), [{ text: 'You are welcome.' }]);
        const { model, memory, client } = rig;

        await runMode(inConversation(client.prompt('Hi')), mode);
        const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
        const results = CLIENT_SIDE_RESULTS;
        await assert.rejects(runMode(inConversation(client.prompt().messages(results)), mode), /upstream overloaded/);
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant', 'tool'],
          'the results the caller sent are stored although the round failed',
        );

        const retried = await runMode(inConversation(client.prompt().messages(...RESUMES[resume](paused, results))), mode);
        assert.equal(retried.text, 'Done.');
        const { system, messages } = split(sentPrompts(model, mode)[3]!);
        assert.doesNotMatch(system, /lookup|locate/, 'the round is not in the text');
        const round = ['assistant: -> lookup | -> locate', 'tool lookup: order 7: 10 EUR | locate: Paris'];
        assert.deepEqual(messages, resume === 'only the answer' ? ['user: Refund order 7', ...round] : round);
        const stored = await memory.get('c1');
        assertOneResultPerCall(stored);
        assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');
        assert.match(split(sentPrompts(model, mode)[4]!).system, /lookup returned: order 7: 10 EUR\nlocate returned: Paris\nassistant: Done\./);
      });
    }
  }
});

describe('PromptChatMemoryAdvisor: a caller that sends the whole conversation again with its answer', () => {
  for (const mode of MODES) {
    test(`${mode}: every earlier message reaches the model once, as a message, and not as text too`, async () => {
      const runs: string[] = [];
      const model = mockModel([
        { text: 'Hello.' },
        {
          toolCalls: [
            { name: 'lookup', input: { id: 7 }, id: 'l1' },
            { name: 'refund', input: { amount: 10 }, id: 'r1' },
          ],
        },
        { text: 'Done.' },
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultTools({ lookup: lookupTool(runs), refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new PromptChatMemoryAdvisor({ memory }))
        .build();

      const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
      const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
      const answer = toolApprovalResponse((paused.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved: true })));
      const conversation: ModelMessage[] = [
        { role: 'user', content: 'Hi' },
        ...hello.messages,
        { role: 'user', content: 'Refund order 7' },
        ...paused.messages,
      ];
      const resumed = await runMode(inConversation(client.prompt().messages(...conversation, answer)), mode);

      assert.equal(resumed.text, 'Done.');
      assert.deepEqual(runs, ['lookup 7', 'refund 10']);
      assert.deepEqual(sentPrompts(model, mode)[2], [
        'user: Hi',
        'assistant: Hello.',
        'user: Refund order 7',
        'assistant: -> lookup | -> refund',
        'tool lookup: order 7: 10 EUR | refund: refunded 10',
      ]);
      assertOneResultPerCall(await memory.get('c1'));
    });
  }
});
