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

describe('token drift: the rounds of sub-agents run inside a tool call (delegated)', () => {
  /** Lead rounds are numbers; a sub-agent's rounds between them a list of numbers. */
  async function session(d: BreakerDriver, plan: ReadonlyArray<number | readonly number[]>) {
    const lead = [];
    const delegated = [];
    for (const step of plan) {
      if (typeof step === 'number') lead.push(await d.model('', step, 100));
      else for (const p of step) delegated.push(await observeDelegated(d, p));
    }
    return { lead, delegated };
  }

  function observeDelegated(d: BreakerDriver, promptTokens: number) {
    return d.breaker.observe(d.sessionId, { kind: 'model', text: '', promptTokens, completionTokens: 100, delegated: true });
  }

  test("neither advance nor restart the session's run: a lead compounding between delegations trips where it would alone", async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const { lead, delegated } = await session(d, [10_000, [1_200, 1_500], 14_000, [1_200], 19_000, [900, 1_100, 1_300], 26_000]);
    assert.deepEqual(
      lead.map((x) => x.action),
      ['allow', 'allow', 'allow', 'steer'],
    );
    assert.ok(delegated.every((x) => x.action === 'allow'));
    assert.equal(lead[3]!.category, 'token_drift');
    assert.deepEqual(lead[3]!.evidence?.promptTokens, [10_000, 14_000, 19_000, 26_000]);
    const { counters, budget } = await d.breaker.snapshot(d.sessionId);
    assert.equal(counters.modelCalls, 10, 'they are rounds of the session all the same');
    assert.equal(budget.tokens, 10_000 + 14_000 + 19_000 + 26_000 + 1_200 * 2 + 1_500 + 900 + 1_100 + 1_300 + 10 * 100);
  });

  test("a lead round is not growth on a sub-agent's prompt, nor a sub-agent's round on the lead's", async () => {
    // A steady lead; its researcher's context grows twice in each delegation. Mixed into one run, the lead's
    // next round would be the third growth step.
    const d = new BreakerDriver(new AgentBreaker());
    const { lead, delegated } = await session(d, [15_500, [6_000, 8_200, 11_200], 16_000, [6_000, 8_200, 11_200], 16_400]);
    assert.ok([...lead, ...delegated].every((x) => x.action === 'allow'));
  });

  test('a sub-agent whose own context compounds is caught, as its own run', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const { lead, delegated } = await session(d, [30_000, [6_000, 8_200, 11_200, 15_300]]);
    assert.ok(lead.every((x) => x.action === 'allow'));
    assert.deepEqual(
      delegated.map((x) => x.action),
      ['allow', 'allow', 'allow', 'steer'],
    );
    assert.deepEqual(delegated[3]!.evidence?.promptTokens, [6_000, 8_200, 11_200, 15_300]);
    assert.match(delegated[3]!.evidence?.detail ?? '', /^a sub-agent's prompt tokens grew 3 rounds in a row/);
  });

  test("the session's next own round ends its sub-agents' run: the next delegation starts one of its own", async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const { lead, delegated } = await session(d, [30_000, [6_000, 8_200, 11_200], 31_000, [15_300, 21_000]]);
    assert.ok([...lead, ...delegated].every((x) => x.action === 'allow'));
  });

  test('is validated: a flag that is not a boolean is refused', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    await assert.rejects(
      d.breaker.observe(d.sessionId, { kind: 'model', text: '', promptTokens: 1, completionTokens: 1, delegated: 'yes' as unknown as boolean }),
      { name: 'InvalidOptionError', option: 'event.delegated' },
    );
  });
});
