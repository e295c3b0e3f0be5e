/**
 * AgentLoop.resume with a chat memory advisor in the client: the first turn
 * of a resumed run sends the run's transcript again (the tool loop needs the
 * calls the answers refer to), and the memory holds that transcript too. Each
 * earlier turn must reach the model once: with PromptChatMemoryAdvisor not as
 * text in the system prompt and as messages as well, with
 * MessageChatMemoryAdvisor not twice as messages.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AgentLoop,
  ChatClient,
  CONVERSATION_ID,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  ToolCallingAdvisor,
  type AgentLoopResult,
  type ChatMemory,
} from '../index.ts';
import { promptLines } from '../memory/test-support/prompt-lines.ts';
import { assertOneResultPerCall, REPOSITORIES } from '../memory/test-support/paused-round.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { orderTools } from '../test-support/order-tools.ts';
import { submitTool } from './submit-tool.ts';

const ADVISORS = {
  PromptChatMemoryAdvisor: (memory: ChatMemory) => new PromptChatMemoryAdvisor({ memory }),
  MessageChatMemoryAdvisor: (memory: ChatMemory) => new MessageChatMemoryAdvisor({ memory }),
} as const;

/** A request's history text (between the default system prompt's markers, one line each), and its messages. */
function sent(lines: readonly string[]): { text: string[]; messages: string[] } {
  const system = lines.find((line) => line.startsWith('system: ')) ?? '';
  const memory = /--- CONVERSATION MEMORY ---\n([\s\S]*)\n--- END OF CONVERSATION MEMORY ---/.exec(system)?.[1];
  return { text: memory === undefined ? [] : memory.split('\n'), messages: lines.filter((line) => !line.startsWith('system: ')) };
}

const approveAll = (result: AgentLoopResult) => result.pendingApprovals.map((p) => ({ approvalId: p.approvalId, approved: true }));

const EARLIER_TEXT = ['user: Earlier question', 'assistant: Earlier answer.'];
const EARLIER_MESSAGES = EARLIER_TEXT;
const CONTINUE =
  'user: You have not called `submit` yet, so the task is not finished. 18 of 20 model calls remain. Continue from where you stopped; when the task is done, call `submit` with a short summary.';

describe('AgentLoop.resume with chat memory: each earlier turn reaches the model once', () => {
  for (const [advisorName, advisor] of Object.entries(ADVISORS)) {
    const asText = advisorName === 'PromptChatMemoryAdvisor';
    for (const [store, open] of REPOSITORIES) {
      test(`${advisorName}, ${store}: a run with a continuation turn before the pause, after an earlier exchange`, async () => {
        const ran: string[] = [];
        const script: MockTurn[] = [
          { text: 'Earlier answer.' },
          { toolCalls: [{ name: 'lookup', input: { id: 'H8' } }] },
          { text: 'Looked it up.' },
          {
            toolCalls: [
              { name: 'lookup', input: { id: 'H9' } },
              { name: 'refund', input: { id: 'H8', amount: 250 } },
            ],
          },
          { toolCalls: [{ name: 'submit', input: { summary: 'Refunded H8.' } }] },
        ];
        const model = mockModel(script);
        using opened = open();
        const memory = new MessageWindowChatMemory({ repository: opened.repository });
        const client = ChatClient.builder(model)
          .defaultAdvisors(advisor(memory), new ToolCallingAdvisor())
          .defaultTools({ ...orderTools(ran), submit: submitTool() })
          .build();
        await client
          .prompt('Earlier question')
          .advisors((a) => a.param(CONVERSATION_ID, 'resume-once'))
          .call()
          .content();
        const loop = new AgentLoop({ client, conversationId: 'resume-once' });
        const first = await loop.run('Refund H8');
        assert.equal(first.status, 'awaiting_approval', first.reason);
        const second = await loop.resume(first, approveAll(first));
        assert.equal(second.status, 'completed', second.reason);
        assert.equal(second.output, 'Refunded H8.');
        assert.deepEqual(ran, ['lookup H8', 'lookup H9', 'refund H8 250'], 'each tool ran once');

        const run = [
          'user: Refund H8',
          'assistant: -> lookup',
          'tool lookup: order H8: shipped',
          'assistant: Looked it up.',
          CONTINUE,
          'assistant: -> lookup | -> refund',
          'tool lookup: order H9: shipped | refund: refunded 250 on H8',
        ];
        const resumed = sent(promptLines(model.doGenerateCalls[4]!.prompt));
        if (asText) {
          assert.deepEqual(resumed.text, EARLIER_TEXT, 'the run is not in the text: it goes as messages');
          assert.deepEqual(resumed.messages, run);
        } else {
          assert.deepEqual(resumed, { text: [], messages: [...EARLIER_MESSAGES, ...run] });
        }
        assertOneResultPerCall(await memory.get('resume-once'));
      });
    }

    test(`${advisorName}: a run that pauses twice sends each earlier round once on the second resume`, async () => {
      const ran: string[] = [];
      const model = mockModel([
        { text: 'Earlier answer.' },
        {
          toolCalls: [
            { name: 'lookup', input: { id: 'H8' } },
            { name: 'refund', input: { id: 'H8', amount: 250 } },
          ],
        },
        {
          toolCalls: [
            { name: 'lookup', input: { id: 'H9' } },
            { name: 'refund', input: { id: 'H9', amount: 300 } },
          ],
        },
        { toolCalls: [{ name: 'submit', input: { summary: 'Refunded both.' } }] },
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultAdvisors(advisor(memory), new ToolCallingAdvisor())
        .defaultTools({ ...orderTools(ran), submit: submitTool() })
        .build();
      await client
        .prompt('Earlier question')
        .advisors((a) => a.param(CONVERSATION_ID, 'twice'))
        .call()
        .content();
      const loop = new AgentLoop({ client, conversationId: 'twice' });
      const first = await loop.run('Refund H8 and H9');
      const second = await loop.resume(first, approveAll(first));
      assert.equal(second.status, 'awaiting_approval', second.reason);
      const third = await loop.resume(second, approveAll(second));
      assert.equal(third.status, 'completed', third.reason);
      assert.equal(third.output, 'Refunded both.');
      assert.deepEqual(ran, ['lookup H8', 'refund H8 250', 'lookup H9', 'refund H9 300'], 'each tool ran once');

      const run = [
        'user: Refund H8 and H9',
        'assistant: -> lookup | -> refund',
        'tool lookup: order H8: shipped | refund: refunded 250 on H8',
        'assistant: -> lookup | -> refund',
        'tool lookup: order H9: shipped | refund: refunded 300 on H9',
      ];
      const resumed = sent(promptLines(model.doGenerateCalls[3]!.prompt));
      assert.deepEqual(resumed, asText ? { text: EARLIER_TEXT, messages: run } : { text: [], messages: [...EARLIER_MESSAGES, ...run] });
      assertOneResultPerCall(await memory.get('twice'));
      assertOneResultPerCall(third.messages);
    });
  }
});
