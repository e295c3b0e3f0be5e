// What `governed.run` rejects with on a stop, as a TypeScript user reads it: `GovernedRunStop.isInstance` gives
// `error.state` its type without a cast; the documented cast keeps compiling. The SDK's own OpenAI provider, over
// real HTTP against the scripted stand-in model.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, OpenAIProvider, tool } from '@openai/agents';
import { z } from 'zod';
import { AgentBreaker, InMemoryBreakerStore, ToolSpiralError, type BreakerStore } from '../index.ts';
import { ScriptedModelServer } from '../testing/index.ts';
import { breakerForOpenAIAgents, GovernedRunStop } from './index.ts';

const checkBuild = tool({
  name: 'check_build',
  description: 'Status of a CI build',
  parameters: z.object({ buildId: z.string() }),
  execute: async ({ buildId }) => `build ${buildId}: running`,
});

function door(server: ScriptedModelServer, breaker: AgentBreaker, sessionId: string) {
  const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
  return breakerForOpenAIAgents(breaker, { sessionId, runConfig: { modelProvider, tracingDisabled: true } });
}

test("GovernedRunStop.isInstance gives a stop's state its type: after a reset the run resumes from it", async () => {
  // The model checks the build until stopped; asked again, it answers.
  await using server = await new ScriptedModelServer({
    script: (_request, index) => (index < 5 ? { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] } : { text: 'b-17 is still running.' }),
  }).start();
  const breaker = new AgentBreaker({ telemetry: false });
  const governed = door(server, breaker, 'c-42');
  const agent = new Agent({ name: 'ops', model: server.modelId, tools: governed.tools([checkBuild]) });

  let answer: unknown;
  try {
    await governed.run(agent, 'Is build b-17 done?', { maxTurns: 30 });
    assert.fail('the breaker must end the run');
  } catch (error) {
    assert.ok(GovernedRunStop.isInstance(error), `expected a breaker stop, got ${String(error)}`);
    assert.ok(ToolSpiralError.isInstance(error));
    await breaker.reset('c-42');
    if (error.state) answer = (await governed.run(agent, error.state)).finalOutput;
  }
  assert.equal(answer, 'b-17 is still running.');
});

test('a store outage that fails closed is a GovernedRunStop too; other errors are not', async () => {
  await using server = await new ScriptedModelServer({ script: [{ text: 'never sent' }] }).start();
  const failing: BreakerStore = Object.assign(new InMemoryBreakerStore(), {
    read: async () => {
      throw new Error('store down');
    },
    apply: async () => {
      throw new Error('store down');
    },
  });
  const breaker = new AgentBreaker({ telemetry: false, store: failing, onStoreError: 'fail-closed', maxStoreRetries: 0 });
  const governed = door(server, breaker, 'c-43');
  const agent = new Agent({ name: 'ops', model: server.modelId });
  const error = await governed.run(agent, 'Hi').then(
    () => assert.fail('a breaker that fails closed must refuse the run'),
    (e: unknown) => e,
  );
  assert.ok(GovernedRunStop.isInstance(error), `expected a breaker stop, got ${String(error)}`);
  assert.equal(error.name, 'BreakerUnavailableError');
  assert.equal(GovernedRunStop.isInstance(new Error('Is build b-17 done?')), false);
  assert.equal(GovernedRunStop.isInstance('stop'), false);
});
