import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tool } from 'ai';
import { z } from 'zod';
import { ChatClient, ToolCallingAdvisor } from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { AgentLoop } from './agent-loop.ts';
import { MiniAgent } from './mini-agent.ts';

const ran: string[] = [];
const work = tool({
  inputSchema: z.object({ step: z.string() }),
  execute: async ({ step }) => {
    ran.push(step);
    return `did ${step}`;
  },
});
const note = Object.assign(tool({ inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `noted ${text}` }), { returnDirect: true });

/** The finish tool as a caller may write it: return-direct, or a plain tool. */
const returnDirectSubmit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), {
  returnDirect: true,
});
const plainDone = tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary });

/** The model calls the finish tool and another tool in one answer, then, if it is asked again, keeps doing it. */
function parallelFinish(finish: string): MockTurn[] {
  const turn: MockTurn = {
    text: 'Is there anything else you need?',
    toolCalls: [
      { name: finish, input: { summary: 'Fixed the bug; tests pass.' } },
      { name: 'work', input: { step: 'clean up' } },
    ],
  };
  return Array.from({ length: 6 }, () => turn);
}

describe('AgentLoop: the finish tool called with other tools in one answer', () => {
  for (const [finishTool, finish] of [
    ['submit', returnDirectSubmit],
    ['done', plainDone],
  ] as const) {
    test(`ends the run after the round, without another model call, with its result as the output (${finishTool})`, async () => {
      ran.length = 0;
      const model = mockModel(parallelFinish(finishTool));
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor())
        .defaultTools({ [finishTool]: finish, work })
        .build();
      const result = await new AgentLoop({ client, finishTool, maxInvocations: 6 }).run('fix it');
      assert.equal(result.status, 'completed');
      assert.equal(result.output, 'Fixed the bug; tests pass.');
      assert.equal(model.doGenerateCalls.length, 1);
      assert.equal(result.invocations, 1);
      assert.equal(result.toolCalls, 2);
      assert.deepEqual(ran, ['clean up']);
      // The transcript holds the answer and both results: it can be continued.
      const last = result.messages.at(-1);
      assert.ok(last?.role === 'tool');
      assert.equal(last.content.length, 2);
    });
  }

  test('a return-direct tool called with it does not become part of the output', async () => {
    const model = mockModel([
      {
        toolCalls: [
          { name: 'submit', input: { summary: 'the summary' } },
          { name: 'note', input: { text: 'aside' } },
        ],
      },
    ]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit: returnDirectSubmit, note }).build();
    const result = await new AgentLoop({ client }).run('x');
    assert.equal(result.status, 'completed');
    assert.equal(result.output, 'the summary');
    assert.equal(model.doGenerateCalls.length, 1);
  });

  test('MiniAgent (submit and shell in one answer): the shell command runs, then the run completes with the summary', async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'mini-agent-finish-')));
    try {
      const model = mockModel([
        {
          text: 'Done.',
          toolCalls: [
            { name: 'submit', input: { summary: 'Fixed the bug; tests pass.' } },
            { name: 'shell', input: { command: 'echo cleaned > cleanup.txt' } },
          ],
        },
        { text: 'Is there anything else you need?' },
      ]);
      const result = await new MiniAgent({ model, workingDirectory: dir, sandbox: 'none', breaker: false }).run('fix it');
      assert.equal(result.status, 'completed');
      assert.equal(result.output, 'Fixed the bug; tests pass.');
      assert.equal(result.invocations, 1);
      assert.equal(model.doGenerateCalls.length, 1);
      assert.equal(readFileSync(path.join(dir, 'cleanup.txt'), 'utf8'), 'cleaned\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
