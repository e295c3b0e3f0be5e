/**
 * The AgentBreaker as LangChain v1 middleware (`agent-governor/langchain`), with
 * LangChain's real `ChatOpenAI` over real HTTP against the scripted stand-in
 * model. What the model received is read from the recorded requests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';
import { AgentBreaker, BudgetExceededError, ToolSpiralError, type BreakerEventRecord } from '../index.ts';
import { governorMiddleware } from '../langchain/index.ts';
import { ScriptedModelServer, type RecordedRequest } from '../testing/index.ts';

const PROMPT = 'Is build b-17 done?';

function chatModel(server: ScriptedModelServer): ChatOpenAI {
  return new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
}

function spiralServer(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] }],
    onExhausted: 'repeat-last',
  }).start();
}

function recordingBreaker(options: ConstructorParameters<typeof AgentBreaker>[0] = {}) {
  const breaker = new AgentBreaker({ telemetry: false, ...options });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events };
}

function checkBuild(statuses: (run: number) => string) {
  const executions: string[] = [];
  const check = tool(
    async ({ buildId }) => {
      const status = statuses(executions.length);
      executions.push(buildId);
      return `build ${buildId}: ${status}`;
    },
    { name: 'check_build', description: 'Status of a CI build', schema: z.object({ buildId: z.string() }) },
  );
  return { check, executions };
}

function lastToolResult(request: RecordedRequest | undefined): string {
  assert.ok(request, 'the request reached the stand-in model');
  const last = request.body.messages.at(-1);
  assert.equal(last?.role, 'tool', 'the request ends with a tool result');
  return String(last.content);
}

function escalations(events: readonly BreakerEventRecord[]): string[] {
  return events.flatMap((e) => (e.type === 'escalation' ? [`${e.category}:${e.action}`] : []));
}

describe('governorMiddleware on createAgent with ChatOpenAI', () => {
  test('a tool-call spiral is steered, then blocked, then stopped with ToolSpiralError before the tool runs again', async () => {
    await using server = await spiralServer();
    const { breaker, events } = recordingBreaker();
    const { check, executions } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)] });

    const error = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, { configurable: { thread_id: 'lc-spiral' } }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.equal(error.sessionId, 'lc-spiral', 'the session is the LangGraph thread');
    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17'], 'the blocked and the stopped call did not run');
    assert.equal(server.requests.length, 5, 'no model request after the stop');
    assert.equal(lastToolResult(server.requests[2]), 'build b-17: running');
    assert.match(lastToolResult(server.requests[3]), /^build b-17: running\n\n\[AgentBreaker\] .*"check_build" 3 times/s, 'the 3rd result carries the steer');
    const blocked = lastToolResult(server.requests[4]);
    assert.match(blocked, /^\[AgentBreaker\] This call was NOT executed\./);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal((await breaker.snapshot('lc-spiral')).state, 'OPEN');
  });
});
