/**
 * A client's default messages with a chat memory advisor: they are a fixed
 * preamble, so they go before the conversation the memory holds, are not
 * stored, and do not come between a round of tool calls that paused for an
 * approval and the answer that goes on with it, whichever way the caller
 * sends the answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { ChatClient, MessageWindowChatMemory, ToolCallingAdvisor, toolApprovalResponse } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import {
  assertOneResultPerCall,
  inConversation,
  FORMS,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  type Form,
  refundTool,
  sentPrompts,
} from './test-support/paused-round.ts';

/** Few-shot examples, and a lone user message of context (which looks like a turn of its own). */
const PREAMBLES: ReadonlyArray<readonly [string, readonly ModelMessage[], readonly string[]]> = [
  [
    'few-shot examples',
    [
      { role: 'user', content: 'example question' },
      { role: 'assistant', content: 'example answer' },
    ],
    ['user: example question', 'assistant: example answer'],
  ],
  ['a user message of context', [{ role: 'user', content: 'Amounts are in EUR.' }], ['user: Amounts are in EUR.']],
];

const ROUND = ['assistant: -> refund', 'tool refund: refunded 10'];

/** What the resumed request sends after the preamble (its system prompt aside): what each advisor puts as messages. */
const RESUMED: Record<MemoryAdvisorName, Record<Form, readonly string[]>> = {
  MessageChatMemoryAdvisor: {
    'only the answer': ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', ...ROUND],
    'the round again with the answer': ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', ...ROUND],
    'the conversation again with the answer': ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', ...ROUND],
  },
  // The earlier turns are text in the system prompt, except what the request carries again.
  PromptChatMemoryAdvisor: {
    'only the answer': ['user: Refund order 7', ...ROUND],
    'the round again with the answer': ROUND,
    'the conversation again with the answer': ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', ...ROUND],
  },
};

/** A stored message in a few words: its role and its text or tool calls. */
const said = (message: ModelMessage): string => {
  if (message.role === 'tool') return 'tool';
  const content =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((p) => (p.type === 'text' ? p.text : p.type === 'tool-call' ? `-> ${p.toolName}` : '')).join('');
  return `${message.role}: ${content}`;
};

const withoutSystem = (lines: readonly string[]): string[] => lines.filter((line) => !line.startsWith('system: '));

describe('default messages with a chat memory advisor', () => {
  for (const mode of MODES) {
    for (const advisor of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
      for (const [kind, preamble, preambleLines] of PREAMBLES) {
        for (const form of Object.keys(FORMS) as Form[]) {
          test(`${mode}, ${advisor}, ${kind}, ${form}: the approved call runs once and the preamble stays first`, async () => {
            const runs: string[] = [];
            const memory = new MessageWindowChatMemory();
            const model = mockModel([
              { text: 'Hello.' },
              { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
              { text: 'Done.' },
              { text: 'You are welcome.' },
            ]);
            const client = ChatClient.builder(model)
              .defaultMessages(...preamble)
              .defaultTools({ refund: refundTool(runs) })
              .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
              .build();

            const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
            const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
            assert.equal(paused.pendingApprovals?.length, 1);
            const answer = toolApprovalResponse(paused.pendingApprovals!.map((p) => ({ approvalId: p.approvalId, approved: true })));
            const before: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }];
            const resumed = await runMode(inConversation(client.prompt().messages(...FORMS[form](paused, answer, before))), mode);

            assert.equal(resumed.text, 'Done.');
            assert.deepEqual(runs, ['refund 10']);
            const prompts = sentPrompts(model, mode).map(withoutSystem);
            if (advisor === 'MessageChatMemoryAdvisor') {
              assert.deepEqual(prompts[1], [...preambleLines, 'user: Hi', 'assistant: Hello.', 'user: Refund order 7'], 'the preamble before the history');
            }
            assert.deepEqual(prompts[2], [...preambleLines, ...RESUMED[advisor][form]], 'the preamble first, the round with its result');

            const stored = await memory.get('c1');
            assertOneResultPerCall(stored);
            assert.deepEqual(
              stored.map(said),
              ['user: Hi', 'assistant: Hello.', 'user: Refund order 7', 'assistant: -> refund', 'tool', 'tool', 'assistant: Done.'],
              'the preamble is not stored',
            );

            assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');
            assert.equal(prompts.length, 3, 'no model call besides the resumed one');
            const next = withoutSystem(sentPrompts(model, mode)[3]!);
            assert.deepEqual(next.slice(0, preambleLines.length), [...preambleLines]);
            assert.equal(next.at(-1), 'user: Thanks');
          });
        }
      }
    }
  }
});
