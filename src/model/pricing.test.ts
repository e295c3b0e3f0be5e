import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { DEFAULT_PRICES, estimateCost, findPrice, mergePrices, projectCallCost } from './pricing.ts';

const usage = (inputTokens?: number, outputTokens?: number, cachedInputTokens?: number) => ({
  inputTokens,
  outputTokens,
  cachedInputTokens,
});

function usd(estimate: ReturnType<typeof estimateCost>): number {
  assert.equal(typeof estimate.usd, 'number', `expected a number, got ${JSON.stringify(estimate)}`);
  return estimate.usd as number;
}

describe('estimateCost', () => {
  test('prices non-cached input, cached input and output at their own rates', () => {
    // gpt-4o: 2.5 in, 1.25 cached, 10 out per million.
    const estimate = estimateCost(usage(1_000_000, 100_000, 400_000), 'gpt-4o');
    assert.deepEqual(estimate, { usd: 0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10 });
  });

  test('an unknown model is unknown, never zero', () => {
    const estimate = estimateCost(usage(10, 10, 0), 'my-local-llama');
    assert.equal(estimate.usd, 'unknown');
    assert.match('reason' in estimate ? estimate.reason : '', /my-local-llama/);
  });

  test('an unknown input or output count is unknown', () => {
    assert.equal(estimateCost(usage(undefined, 10, 0), 'gpt-4o').usd, 'unknown');
    assert.equal(estimateCost(usage(10, undefined, 0), 'gpt-4o').usd, 'unknown');
    assert.equal(estimateCost(usage(Number.NaN, 10, 0), 'gpt-4o').usd, 'unknown');
  });

  test('cached tokens above the input total make the usage inconsistent', () => {
    assert.equal(estimateCost(usage(10, 10, 11), 'gpt-4o').usd, 'unknown');
  });

  test('an unknown cached count prices all input at the full rate and says it is an upper bound', () => {
    const estimate = estimateCost(usage(1_000_000, 0, undefined), 'gpt-4o');
    assert.deepEqual(estimate, { usd: 2.5, upperBound: true });
  });

  test('a model without a cached price prices cached input as input, flagged as an upper bound', () => {
    const estimate = estimateCost(usage(1_000_000, 0, 500_000), 'gpt-4o-2024-05-13');
    assert.deepEqual(estimate, { usd: 5, upperBound: true });
  });

  test('zero tokens cost exactly zero (a known count, not a guess)', () => {
    assert.deepEqual(estimateCost(usage(0, 0, 0), 'o3'), { usd: 0 });
  });

  test('overrides merge over the defaults', () => {
    const prices = { 'my-model': { inputPerMillion: 1, outputPerMillion: 2 }, 'gpt-4o': { inputPerMillion: 100, outputPerMillion: 0 } };
    assert.equal(usd(estimateCost(usage(1_000_000, 1_000_000, 0), 'my-model', prices)), 3);
    assert.equal(usd(estimateCost(usage(1_000_000, 0, 0), 'gpt-4o', prices)), 100);
    assert.equal(usd(estimateCost(usage(1_000_000, 0, 0), 'gpt-4o-mini', prices)), 0.15);
  });

  test('invalid overrides are rejected naming the option', () => {
    assert.throws(
      () => estimateCost(usage(1, 1, 0), 'x', { x: { inputPerMillion: -1, outputPerMillion: 1 } }),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'prices.x.inputPerMillion',
    );
    assert.throws(() => mergePrices({ x: { inputPerMillion: 1, outputPerMillion: Number.POSITIVE_INFINITY } }), InvalidOptionError);
  });
});

describe('findPrice', () => {
  test('tolerates provider prefixes and snapshot suffixes', () => {
    for (const id of ['openai:gpt-4o', 'openai/gpt-4o', 'gpt-4o-2024-08-06', 'GPT-4o', 'openai:gpt-4o-2024-11-20']) {
      assert.equal(findPrice(id), DEFAULT_PRICES['gpt-4o'], id);
    }
    assert.equal(findPrice('claude-sonnet-4-20250514'), DEFAULT_PRICES['claude-sonnet-4']);
    assert.equal(findPrice('claude-sonnet-4@20250514'), DEFAULT_PRICES['claude-sonnet-4']);
    assert.equal(findPrice('anthropic:claude-3-5-haiku-latest'), DEFAULT_PRICES['claude-3-5-haiku']);
    assert.equal(findPrice('us.anthropic.claude-3-5-haiku-20241022-v1:0'), DEFAULT_PRICES['claude-3-5-haiku']);
    assert.equal(findPrice('o4-mini-2025-04-16'), DEFAULT_PRICES['o4-mini']);
  });

  test('never prices a model as another family', () => {
    assert.equal(findPrice('gpt-4o-mini-2024-07-18'), DEFAULT_PRICES['gpt-4o-mini']);
    assert.equal(findPrice('gpt-4o-audio-preview'), undefined);
    assert.equal(findPrice('gpt-4.1-mini'), DEFAULT_PRICES['gpt-4.1-mini']);
    assert.equal(findPrice('o3-pro'), undefined);
    assert.equal(findPrice('ft:gpt-4o-mini-2024-07-18:acme::abc123'), undefined);
  });

  test('an exact snapshot entry wins over its family', () => {
    assert.equal(findPrice('gpt-4o-2024-05-13'), DEFAULT_PRICES['gpt-4o-2024-05-13']);
    assert.notEqual(findPrice('gpt-4o-2024-05-13'), DEFAULT_PRICES['gpt-4o']);
  });
});

describe('projectCallCost', () => {
  test('prices the previous prompt plus its answer as input and the output ceiling as output, without cache discount', () => {
    const projected = projectCallCost({ modelId: 'gpt-4o', lastInputTokens: 800_000, lastOutputTokens: 200_000, maxOutputTokens: 100_000 });
    assert.deepEqual(projected, { usd: 1 * 2.5 + 0.1 * 10 });
  });

  test('falls back to the previous output when no ceiling is set', () => {
    const projected = projectCallCost({ modelId: 'gpt-4o', lastInputTokens: 0, lastOutputTokens: 100_000 });
    assert.deepEqual(projected, { usd: 0.1 * 2.5 + 0.1 * 10 });
  });

  test('is unknown without a previous prompt, an output size or a price', () => {
    assert.equal(projectCallCost({ modelId: 'gpt-4o', lastInputTokens: undefined, maxOutputTokens: 10 }).usd, 'unknown');
    assert.equal(projectCallCost({ modelId: 'gpt-4o', lastInputTokens: 10 }).usd, 'unknown');
    assert.equal(projectCallCost({ modelId: 'nope', lastInputTokens: 10, maxOutputTokens: 10 }).usd, 'unknown');
  });
});
