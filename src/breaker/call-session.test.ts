/** Breaker sessions without a conversation id, and the breaker's order in the chain. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AdvisorOrder,
  AgentBreaker,
  BreakerOpenError,
  ChatClient,
  CONVERSATION_ID,
  InvalidOptionError,
  ToolCallingAdvisor,
  ToolSpiralError,
  type BreakerEventRecord,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type RecordedRequest } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';

const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'job 7: FAILED' });

/** Loops on one check when asked about job 7; answers anything else. */
function script(request: RecordedRequest) {
  const user = request.body.messages.find((m) => m.role === 'user');
  return String(user?.content).includes('job 7') ? { toolCalls: [{ name: 'status', arguments: { job: '7' } }] } : { text: 'Paris is the capital of France.' };
}

describe('a request without a conversation id', () => {
  for (const mode of MODES) {
    test(`${mode}: gets a session of its own: one looping request does not open the breaker for others`, async () => {
      await using server = await new ScriptedModelServer({ script }).start();
      const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
      const debug: BreakerEventRecord[] = [];
      breaker.on((e) => void (e.type === 'debug' && debug.push(e)));
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ status }).build();
      await assert.rejects(runMode(client.prompt('Is job 7 done?'), mode), ToolSpiralError);
      const { text } = await runMode(client.prompt('Capital of France?'), mode);
      assert.equal(text, 'Paris is the capital of France.');
      assert.equal(debug.length, 2, 'each call announced its own session');
      assert.notEqual(debug[0]!.sessionId, debug[1]!.sessionId);
      assert.match(debug[0]!.message ?? '', /no conversation id/);
      assert.deepEqual(await breaker.openSessions(), [debug[0]!.sessionId]);
    });

    test(`${mode}: sharing breaker state across calls needs an explicit id`, async () => {
      await using server = await new ScriptedModelServer({ script }).start();
      const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ status }).build();
      const shared = (text: string) => client.prompt(text).advisors((a) => a.param(CONVERSATION_ID, `shared-${mode}`));
      await assert.rejects(runMode(shared('Is job 7 done?'), mode), ToolSpiralError);
      await assert.rejects(runMode(shared('Capital of France?'), mode), BreakerOpenError);
    });
  }
});

describe('the breaker order', () => {
  test('is an option; a breaker placed outside the tool loop warns that it judges one round per call', async () => {
    assert.equal(new AgentBreaker().order, AdvisorOrder.BREAKER);
    assert.equal(new AgentBreaker({ order: AdvisorOrder.BREAKER + 10 }).order, AdvisorOrder.BREAKER + 10);
    assert.throws(() => new AgentBreaker({ order: 'inside' as unknown as number }), InvalidOptionError);

    await using server = await new ScriptedModelServer({ script: [{ text: 'hi' }], onExhausted: 'repeat-last' }).start();
    for (const [order, warns] of [
      [AdvisorOrder.BREAKER + 10, false],
      [AdvisorOrder.TOOL_LOOP - 10, true],
    ] as const) {
      const breaker = new AgentBreaker({ order });
      const warnings: BreakerEventRecord[] = [];
      breaker.on((e) => void (e.type === 'warning' && warnings.push(e)));
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).build();
      assert.equal(await client.prompt('hello').call().content(), 'hi');
      assert.deepEqual(
        warnings.map((w) => w.code),
        warns ? ['advisor_order'] : [],
        `order ${order}`,
      );
      if (warns) assert.match(warnings[0]!.message ?? '', /outside the tool loop/);
    }
  });
});
