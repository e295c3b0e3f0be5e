/** `budget.maxCostUsd` in the ChatClient path: each round priced from the model id in the response. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, BudgetExceededError, ChatClient, CONVERSATION_ID, ToolCallingAdvisor, type BreakerEventRecord } from '../index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';

const lookup = tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped` });

describe('budget.maxCostUsd without AgentLoop', () => {
  for (const mode of MODES) {
    test(`${mode}: a priced model's rounds spend the cost budget: wrap-up, then BudgetExceededError`, async () => {
      // gpt-4o input is $2.50 per million tokens: 20,000 prompt tokens cost $0.05 a round.
      await using server = await new ScriptedModelServer({
        modelId: 'gpt-4o',
        script: [
          { toolCalls: [{ name: 'lookup', arguments: { id: 'A1' } }], usage: { promptTokens: 20_000, completionTokens: 10 } },
          { text: 'Order A1 has shipped.', usage: { promptTokens: 20_100, completionTokens: 10 } },
        ],
      }).start();
      const breaker = new AgentBreaker({ budget: { maxCostUsd: 0.04 } });
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ lookup }).build();
      const session = `cost-${mode}`;
      const { text } = await runMode(
        client.prompt('Where is A1?').advisors((a) => a.param(CONVERSATION_ID, session)),
        mode,
      );
      assert.equal(text, 'Order A1 has shipped.');
      const snapshot = await breaker.snapshot(session);
      assert.ok(snapshot.budget.costUsd > 0.04 && snapshot.budget.costUsd < 0.2, `cost ${snapshot.budget.costUsd}`);
      assert.equal(snapshot.budget.phase, 'exhausted');
      assert.match(JSON.stringify(server.requests[1]!.body.messages), /Wrap up now/, 'the model was told to wrap up');
      await assert.rejects(
        runMode(
          client.prompt('And A2?').advisors((a) => a.param(CONVERSATION_ID, session)),
          mode,
        ),
        BudgetExceededError,
      );
      assert.equal(server.requests.length, 2, 'the round past the budget was not sent');
      assert.equal((await breaker.health()).costBudget, 'enforced');
    });
  }

  test('a model without a price: the cost budget is reported as not enforceable (event and health)', async () => {
    await using server = await new ScriptedModelServer({ modelId: 'house-model-1', script: [{ text: 'hi' }], onExhausted: 'repeat-last' }).start();
    const breaker = new AgentBreaker({ budget: { maxCostUsd: 1 } });
    const warnings: BreakerEventRecord[] = [];
    breaker.on((e) => void (e.type === 'warning' && warnings.push(e)));
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).build();
    await client.prompt('hello').call().content();
    await client.prompt('hello again').call().content();
    assert.equal(warnings.length, 1, 'warned once');
    assert.match(warnings[0]!.message ?? '', /maxCostUsd is not enforceable.*house-model-1/);
    assert.equal(warnings[0]!.code, 'cost_not_enforceable');
    const health = await breaker.health();
    assert.equal(health.costBudget, 'not_enforceable');
    assert.deepEqual(health.unpricedModels, ['house-model-1']);
  });

  test('health names an unpriced model by its whole id, also one with a colon in it', async () => {
    await using server = await new ScriptedModelServer({ modelId: 'llama3.1:8b', script: [{ text: 'hi' }], onExhausted: 'repeat-last' }).start();
    const breaker = new AgentBreaker({ budget: { maxCostUsd: 1 } });
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).build();
    await client.prompt('hello').call().content();
    assert.deepEqual((await breaker.health()).unpricedModels, ['llama3.1:8b']);
  });
});

describe('budget.maxCostUsd for rounds observed with their model id (the framework doors)', () => {
  test('a priced model prices the round; an unknown one makes the cost budget not enforceable, once', async () => {
    const breaker = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 1 } });
    const warnings: string[] = [];
    breaker.on((event) => {
      if (event.type === 'warning') warnings.push(event.message ?? '');
    });
    await breaker.observe('s', { kind: 'model', promptTokens: 100_000, completionTokens: 1_000, text: '', model: 'gpt-4o' });
    // gpt-4o: $2.50 per million input tokens, $10 per million output tokens.
    assert.equal((await breaker.snapshot('s')).budget.costUsd, 0.26);
    assert.equal((await breaker.health()).costBudget, 'enforced');
    for (let i = 0; i < 2; i++) await breaker.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '', model: 'house-model-7' });
    assert.equal((await breaker.snapshot('s')).budget.costUsd, 0.26, 'an unpriced round adds nothing');
    const health = await breaker.health();
    assert.equal(health.costBudget, 'not_enforceable');
    assert.deepEqual(health.unpricedModels, ['house-model-7']);
    assert.equal(warnings.filter((w) => w.includes('house-model-7')).length, 1);
    await assert.rejects(breaker.observe('s', { kind: 'model', promptTokens: 1, completionTokens: 1, text: '', model: 5 as never }), {
      name: 'InvalidOptionError',
      option: 'event.model',
    });
  });

  test('a round observed with neither its cost nor its model makes the cost budget not enforceable, once; one with its cost does not', async () => {
    const breaker = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 1 } });
    const warnings: string[] = [];
    breaker.on((event) => {
      if (event.type === 'warning') warnings.push(event.message ?? '');
    });
    await breaker.observe('s', { kind: 'model', promptTokens: 100_000, completionTokens: 1_000, text: '', costUsd: 0.26 });
    assert.equal((await breaker.health()).costBudget, 'enforced');
    for (let i = 0; i < 2; i++) await breaker.observe('s', { kind: 'model', promptTokens: 100_000, completionTokens: 1_000, text: '' });
    const health = await breaker.health();
    assert.equal(health.costBudget, 'not_enforceable');
    assert.deepEqual(health.unpricedModels, []);
    assert.deepEqual(warnings, [
      'budget.maxCostUsd is not enforceable: a model round named neither its cost (costUsd) nor its model (model); give one of them.',
    ]);
    const uncapped = new AgentBreaker({ telemetry: false });
    await uncapped.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '' });
    assert.equal((await uncapped.health()).costBudget, 'off');
  });

  test('model ids with colons (Ollama tags, Bedrock versions) are listed whole and apart', async () => {
    const breaker = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 1 } });
    for (const model of ['llama3.1:8b', 'llama3.1:70b', 'anthropic.claude-3-haiku-20240307-v1:0']) {
      await breaker.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '', model });
    }
    assert.deepEqual((await breaker.health()).unpricedModels, ['anthropic.claude-3-haiku-20240307-v1:0', 'llama3.1:70b', 'llama3.1:8b']);
  });

  test('a cost that is not a finite number is refused, not counted as $0', async () => {
    const breaker = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 5 } });
    for (const costUsd of [Number.POSITIVE_INFINITY, Number.NaN, -1]) {
      await assert.rejects(breaker.observe('s', { kind: 'model', promptTokens: 1, completionTokens: 1, text: '', costUsd }), {
        name: 'InvalidOptionError',
        option: 'event.costUsd',
      });
    }
    assert.equal((await breaker.snapshot('s')).counters.events, 0);
  });
});
