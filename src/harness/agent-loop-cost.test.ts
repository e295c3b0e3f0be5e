import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { ChatClient, DEFAULT_PRICES, ToolCallingAdvisor } from '../index.ts';
import { AgentLoop } from './agent-loop.ts';

const work = tool({ inputSchema: z.object({ step: z.number() }), execute: async ({ step }) => `did ${step}` });
const submit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true });

/** gpt-4o's list price: $2.50 per million input tokens, $10 per million output tokens. */
const INPUT_USD = 2.5 / 1_000_000;
const OUTPUT_USD = 10 / 1_000_000;

/**
 * A model that reports large usage: every answer is a tool call that writes
 * `wants` output tokens, or as many as `maxOutputTokens` allows, as a real
 * provider stops at the bound.
 */
function longWinded(options: { wants: number; inputTokens: number; modelId?: string }) {
  let round = 0;
  return new MockLanguageModelV4({
    modelId: options.modelId ?? 'gpt-4o',
    doGenerate: async (call) => {
      round += 1;
      const output = Math.min(options.wants, call.maxOutputTokens ?? Number.POSITIVE_INFINITY);
      return {
        content: [{ type: 'tool-call' as const, toolCallId: `call-${round}`, toolName: 'work', input: JSON.stringify({ step: round }) }],
        finishReason: { unified: output < options.wants ? ('length' as const) : ('tool-calls' as const), raw: undefined },
        usage: {
          inputTokens: { total: options.inputTokens, noCache: options.inputTokens, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: output, text: output, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
}

function clientOf(model: MockLanguageModelV4, maxOutputTokens?: number): ChatClient {
  const builder = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ work, submit });
  if (maxOutputTokens !== undefined) builder.defaultOptions({ maxOutputTokens });
  return builder.build();
}

describe('AgentLoop: the cost limit is a cap on what each call can spend', () => {
  test("each call's output is bounded to what the budget left can pay for, so a long answer cannot overshoot", async () => {
    // A prompt no larger than projected: what is left approximate (the input) plays no part here.
    const model = longWinded({ wants: 16_384, inputTokens: 5 });
    const result = await new AgentLoop({ client: clientOf(model), costLimitUsd: 0.05, maxInvocations: 20 }).run('say hi');
    assert.equal(result.status, 'cost_limit');
    assert.ok(typeof result.costUsd === 'number' && result.costUsd <= 0.05, `spent $${String(result.costUsd)} of $0.05`);
    const first = model.doGenerateCalls[0]!.maxOutputTokens;
    assert.ok(first !== undefined && first <= 0.05 / OUTPUT_USD && first > 4_000, `first call bounded to ${String(first)} tokens`);
    assert.match(result.reason ?? '', /would take the run past its cost limit of \$0\.05/);
  });

  test('every call is bounded, each to what is left after the calls before it', async () => {
    const model = longWinded({ wants: 2_000, inputTokens: 5 });
    const result = await new AgentLoop({ client: clientOf(model), costLimitUsd: 0.05, maxInvocations: 20 }).run('say hi');
    assert.equal(result.status, 'cost_limit');
    assert.ok(typeof result.costUsd === 'number' && result.costUsd <= 0.05, `spent $${String(result.costUsd)} of $0.05`);
    const bounds = model.doGenerateCalls.map((c) => c.maxOutputTokens);
    assert.ok(bounds.length >= 2, `${bounds.length} calls`);
    for (const [i, bound] of bounds.entries()) {
      assert.ok(bound !== undefined && bound >= 64, bounds.join(', '));
      if (i > 0) assert.ok(bound < bounds[i - 1]!, bounds.join(', '));
    }
  });

  test("a smaller maxOutputTokens of the caller's is never raised", async () => {
    const model = longWinded({ wants: 16_384, inputTokens: 20 });
    await new AgentLoop({ client: clientOf(model, 300), costLimitUsd: 0.05, maxInvocations: 2 }).run('say hi');
    assert.deepEqual(
      model.doGenerateCalls.map((c) => c.maxOutputTokens),
      [300, 300],
    );
  });

  test('no bound is sent when the budget pays for more than the model can write (a provider would refuse it)', async () => {
    for (const modelId of Object.keys(DEFAULT_PRICES)) {
      const model = longWinded({ wants: 100, inputTokens: 20, modelId });
      await new AgentLoop({ client: clientOf(model), costLimitUsd: 1_000, maxInvocations: 1 }).run('say hi');
      assert.equal(model.doGenerateCalls[0]!.maxOutputTokens, undefined, modelId);
    }
    // A model whose maximum is not known gets the bound the budget sets.
    const unknown = longWinded({ wants: 100, inputTokens: 20, modelId: 'my-model' });
    const prices = { 'my-model': { inputPerMillion: 1, outputPerMillion: 1 } };
    await new AgentLoop({ client: clientOf(unknown), costLimitUsd: 1, prices, maxInvocations: 1 }).run('say hi');
    assert.ok((unknown.doGenerateCalls[0]!.maxOutputTokens ?? 0) > 999_000);
    // Its price can say what the model writes at most.
    const known = longWinded({ wants: 100, inputTokens: 20, modelId: 'my-model' });
    const withMaximum = { 'my-model': { inputPerMillion: 1, outputPerMillion: 1, maxOutputTokens: 8_192 } };
    await new AgentLoop({ client: clientOf(known), costLimitUsd: 1, prices: withMaximum, maxInvocations: 1 }).run('say hi');
    assert.equal(known.doGenerateCalls[0]!.maxOutputTokens, undefined);
    assert.throws(
      () =>
        new AgentLoop({ client: clientOf(known), costLimitUsd: 1, prices: { 'my-model': { inputPerMillion: 1, outputPerMillion: 1, maxOutputTokens: 0 } } }),
      /prices\.my-model\.maxOutputTokens.*whole number of tokens/,
    );
  });

  test('a call the budget cannot pay for with its input and a minimal answer is not made', async () => {
    // $0.0005 pays for 50 output tokens of gpt-4o: not enough for an answer.
    const model = longWinded({ wants: 16_384, inputTokens: 20 });
    const result = await new AgentLoop({ client: clientOf(model), costLimitUsd: 0.0005 }).run('say hi');
    assert.equal(result.status, 'cost_limit');
    assert.equal(model.doGenerateCalls.length, 0);
    assert.equal(result.costUsd, 0);
    assert.match(result.reason ?? '', /64 output tokens\) would take the run past its cost limit of \$0\.0005/);
  });

  test('a large prompt reported by the previous call is paid for before the next one starts', async () => {
    // 18,000 input tokens cost $0.045: after one call, what is left cannot pay for that prompt again.
    const model = longWinded({ wants: 200, inputTokens: 18_000 });
    const result = await new AgentLoop({ client: clientOf(model), costLimitUsd: 0.05 }).run('say hi');
    assert.equal(result.status, 'cost_limit');
    assert.equal(model.doGenerateCalls.length, 1);
    assert.ok(typeof result.costUsd === 'number' && Math.abs(result.costUsd - (18_000 * INPUT_USD + 200 * OUTPUT_USD)) < 1e-9);
  });
});
