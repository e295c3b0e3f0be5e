import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool } from 'ai';
import { z } from 'zod';
import { ChatClient, InvalidOptionError, ToolCallingAdvisor } from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { AgentLoop } from './agent-loop.ts';
import { submitTool } from './submit-tool.ts';

const weather = tool({ description: 'The weather in a city.', inputSchema: z.object({ city: z.string() }), execute: async () => '15°C' });

/** The README's client: one `weather` tool, no finish tool. */
function weatherClient(turns: MockTurn[]) {
  const model = mockModel(turns);
  return { model, client: ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build() };
}

describe('AgentLoop finishTool and the client tools', () => {
  test('left out, on a client without a `submit` tool: the run completes on an answer without tool calls', async () => {
    const { model, client } = weatherClient([
      { toolCalls: [{ name: 'weather', input: { city: 'Paris' } }] },
      { text: 'It is 15°C in Paris.' },
      ...Array.from({ length: 6 }, () => ({ text: 'It is 15°C in Paris.' })),
    ]);
    const result = await new AgentLoop({ client, maxInvocations: 8 }).run('Weather in Paris?');
    assert.equal(result.status, 'completed');
    assert.equal(result.output, 'It is 15°C in Paris.');
    assert.equal(result.invocations, 2);
    assert.equal(model.doGenerateCalls.length, 2);
    assert.ok(!JSON.stringify(result.messages).includes('You have not called'), 'no continuation asks for a tool the model was never offered');
  });

  test('left out, on a client with a `submit` tool: an answer without tool calls still gets a continuation', async () => {
    const model = mockModel([{ text: 'Done, I think.' }, { toolCalls: [{ name: 'submit', input: { summary: 'done' } }] }]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather, submit: submitTool() }).build();
    const result = await new AgentLoop({ client, maxInvocations: 8 }).run('task');
    assert.equal(result.status, 'completed');
    assert.equal(result.output, 'done');
    assert.equal(result.turns, 2);
  });

  test('given, but not among the client tools (a typo): refused naming finishTool, before any model call', async () => {
    const model = mockModel(Array.from({ length: 8 }, () => ({ text: 'Done.' })));
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit: submitTool() }).build();
    const result = await new AgentLoop({ client, maxInvocations: 8, finishTool: 'sumbit' }).run('task');
    assert.equal(result.status, 'error');
    assert.ok(InvalidOptionError.isInstance(result.error), String(result.error));
    assert.equal(result.error.option, 'finishTool');
    assert.match(result.reason ?? '', /"sumbit".*submitTool\(\).*finishTool: null/);
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test('given as `submit` on the README client: refused, saying what to do', async () => {
    const { model, client } = weatherClient(Array.from({ length: 8 }, () => ({ text: 'It is 15°C.' })));
    const result = await new AgentLoop({ client, maxInvocations: 8, finishTool: 'submit' }).run('Weather in Paris?');
    assert.equal(result.status, 'error');
    assert.ok(InvalidOptionError.isInstance(result.error));
    assert.match(result.reason ?? '', /finishTool/);
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test('a tool without execute (client-side) is refused naming it, before any model call: a run has no caller to hand its calls to', async () => {
    const askUser = tool({ description: 'Ask the user.', inputSchema: z.object({ question: z.string() }) });
    for (const finishTool of [undefined, 'submit'] as const) {
      const model = mockModel([{ toolCalls: [{ name: 'askUser', input: { question: 'Paris?' } }] }, ...Array.from({ length: 6 }, () => ({ text: 'done' }))]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather, askUser, submit: submitTool() }).build();
      const result = await new AgentLoop({ client, maxInvocations: 8, ...(finishTool === undefined ? {} : { finishTool }) }).run('task');
      assert.equal(result.status, 'error');
      assert.ok(InvalidOptionError.isInstance(result.error), String(result.error));
      assert.equal(result.error.option, 'tools');
      assert.match(result.reason ?? '', /"askUser" has no execute function/);
      assert.equal(model.doGenerateCalls.length, 0);
    }
  });
});
