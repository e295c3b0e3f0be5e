/** `idleResetMs`: repeats that come after a pause start from fresh evidence; a loop, however slow its calls, does not. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker, InMemoryBreakerStore, InvalidOptionError, type AgentBreakerOptions, type BreakerDecision } from '../index.ts';

const MINUTE = 60_000;
const call = { tool: 'get_weather', args: { city: 'Oslo' } };

/** A breaker on a clock the test moves. */
function clocked(options: AgentBreakerOptions = {}): { breaker: AgentBreaker; advance(ms: number): void } {
  let now = Date.parse('2026-11-26T08:00:00Z');
  const breaker = new AgentBreaker({ telemetry: false, now: () => now, ...options });
  return { breaker, advance: (ms) => (now += ms) };
}

/** The check's action, then the observation's, of one call that takes `runsMs`. */
async function oneCall(breaker: AgentBreaker, advance: (ms: number) => void, runsMs = 0, session = 's'): Promise<string> {
  const check = await breaker.checkToolCall(session, call);
  if (check.action === 'block' || check.action === 'stop') return check.action;
  advance(runsMs);
  const seen: BreakerDecision = await breaker.observe(session, { kind: 'tool_call', ...call, result: 'Oslo: 3 °C, cloudy' });
  return seen.action === 'allow' ? check.action : `${check.action}/${seen.action}`;
}

describe('AgentBreakerOptions.idleResetMs', () => {
  test('the same call every 20 minutes: escalated by default, judged afresh each time with idleResetMs 15 minutes', async () => {
    for (const [idleResetMs, expected] of [
      [undefined, ['allow', 'allow', 'steer', 'block', 'stop', 'stop']],
      [15 * MINUTE, ['allow', 'allow', 'allow', 'allow', 'allow', 'allow']],
    ] as const) {
      const { breaker, advance } = clocked(idleResetMs === undefined ? {} : { idleResetMs });
      const actions: string[] = [];
      for (let i = 0; i < 6; i++) {
        actions.push(await oneCall(breaker, advance));
        advance(20 * MINUTE);
      }
      assert.deepEqual(actions, expected, `idleResetMs ${idleResetMs}`);
      assert.equal((await breaker.snapshot('s')).counters.toolCalls, expected.filter((a) => a !== 'block' && a !== 'stop').length, 'counters are kept');
    }
  });

  test('a loop of calls that each run 40 minutes is caught as quickly as one of instant calls', async () => {
    const { breaker, advance } = clocked({ idleResetMs: 15 * MINUTE });
    const actions: string[] = [];
    for (let i = 0; i < 5; i++) {
      actions.push(await oneCall(breaker, advance, 40 * MINUTE));
      // The model answers within a minute: no pause between the loop's steps.
      advance(MINUTE);
    }
    assert.deepEqual(actions, ['allow', 'allow', 'steer', 'block', 'stop']);
  });

  test('a stopped session keeps its stop until the cooldown ends; after a pause its probe is judged afresh and closes it', async () => {
    const { breaker, advance } = clocked({ idleResetMs: 15 * MINUTE, budget: { maxTokens: 1_000_000 } });
    for (let i = 0; i < 5; i++) await oneCall(breaker, advance);
    assert.equal((await breaker.snapshot('s')).state, 'OPEN');
    // An open breaker still counts what is spent.
    await breaker.observe('s', { kind: 'model', promptTokens: 4_000, completionTokens: 100, text: 'checking the weather' });
    advance(30_000);
    assert.equal(await oneCall(breaker, advance), 'stop', 'within the cooldown');
    advance(30 * MINUTE);
    // The cooldown ended long ago: the next round probes, and with the old evidence gone the same call passes.
    assert.deepEqual(await breaker.checkModelCall('s'), { action: 'allow', probe: true });
    assert.equal(await oneCall(breaker, advance), 'allow');
    await breaker.observe('s', { kind: 'model', promptTokens: 4_000, completionTokens: 100, text: 'it is 3 °C in Oslo' });
    const after = await breaker.snapshot('s');
    assert.equal(after.state, 'CLOSED');
    assert.equal(after.budget.tokens, 8_200, 'the budget is kept');
  });

  test('the pause is forgotten once, in the store: another breaker on the same store judges the next call against it', async () => {
    const store = new InMemoryBreakerStore();
    let now = Date.parse('2026-11-26T08:00:00Z');
    const options = { telemetry: false, idleResetMs: 15 * MINUTE, now: () => now, store, checkFreshnessMs: 0 };
    const first = new AgentBreaker(options);
    const second = new AgentBreaker(options);
    const advance = (ms: number) => (now += ms);
    for (let i = 0; i < 2; i++) await oneCall(first, advance);
    advance(20 * MINUTE);
    assert.equal(await oneCall(first, advance), 'allow', 'after the pause: afresh');
    // Back to back now: the second breaker counts from the call after the pause, not from the two before it.
    assert.equal(await oneCall(second, advance), 'allow');
    assert.equal(await oneCall(second, advance), 'steer');
  });

  test('a bad value is refused with the option named', () => {
    for (const idleResetMs of [-1, 1.5, Number.NaN, '15m'])
      assert.throws(
        () => new AgentBreaker({ idleResetMs: idleResetMs as number }),
        (error: unknown) => InvalidOptionError.isInstance(error) && /idleResetMs/.test(error.message),
        String(idleResetMs),
      );
  });
});
