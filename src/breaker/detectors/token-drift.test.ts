import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

async function rounds(d: BreakerDriver, prompts: ReadonlyArray<number | null>) {
  const out = [];
  for (const p of prompts) out.push(await d.model('', p, 100));
  return out;
}

describe('token drift', () => {
  test('three rounds in a row growing by ≥ 1.35× trip', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await rounds(d, [10_000, 14_000, 19_000, 26_000]);
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'steer'],
    );
    assert.equal(out[3]!.category, 'token_drift');
    assert.deepEqual(out[3]!.evidence?.promptTokens, [10_000, 14_000, 19_000, 26_000]);
  });

  test('continued growth escalates to a stop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await rounds(d, [10_000, 14_000, 19_000, 26_000, 36_000]);
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'steer', 'stop'],
    );
  });

  test('compaction is not fooling it: a fall restarts the run', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await rounds(d, [10_000, 14_000, 19_000, 9_000, 13_000, 18_000, 8_000, 11_000, 15_000]);
    assert.ok(out.every((x) => x.action === 'allow'));
    // … and growing again three times after the fall does trip.
    const more = await rounds(d, [21_000]);
    assert.equal(more[0]!.action, 'steer');
  });

  test('rounds without token counts are ignored, not counted as a fall', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await rounds(d, [10_000, null, 14_000, null, 19_000, 26_000]);
    assert.equal(out.at(-1)!.category, 'token_drift');
  });

  test('slow growth and small early contexts do not trip', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const slow = await rounds(d, [10_000, 12_000, 14_500, 17_000, 20_000, 24_000]);
    assert.ok(slow.every((x) => x.action === 'allow'));
    const early = new BreakerDriver(new AgentBreaker(), 'early');
    const small = await rounds(early, [500, 1_200, 2_600, 5_000]);
    assert.ok(
      small.every((x) => x.action === 'allow'),
      'under minPromptTokens',
    );
  });

  test('a small context filling up fast is accumulation, not drift, even past the floor', async () => {
    // A 1.8k-token start reading three large files: ×2.7, ×1.6, ×1.7, then steady.
    const d = new BreakerDriver(new AgentBreaker());
    const out = await rounds(d, [1_800, 5_000, 8_200, 14_100, 14_200, 14_800]);
    assert.ok(out.every((x) => x.action === 'allow'));
    // The same factors from a context that already holds material compound: drift.
    const later = new BreakerDriver(new AgentBreaker(), 'later');
    const compounding = await rounds(later, [5_400, 8_300, 13_600, 23_400]);
    assert.equal(compounding.at(-1)!.category, 'token_drift');
  });

  test('is configurable', async () => {
    const d = new BreakerDriver(new AgentBreaker({ tokenDrift: { growthFactor: 1.2, consecutive: 2, minPromptTokens: 0 } }));
    const out = await rounds(d, [1_000, 1_250, 1_500]);
    assert.equal(out[2]!.action, 'steer');
  });
});
