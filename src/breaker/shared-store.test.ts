import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from './test-support/breaker-driver.ts';
import {
  AgentBreaker,
  BreakerUnavailableError,
  InMemoryBreakerStore,
  breakerErrorFor,
  type AppliedOp,
  type BreakerEventRecord,
  type BreakerStore,
  type SessionOp,
  type SessionRead,
  type SessionReducer,
} from './index.ts';

/** An in-memory store that can be made to fail, and counts round trips. */
class FlakyStore implements BreakerStore {
  readonly inner = new InMemoryBreakerStore();
  failing = false;
  loads = 0;
  writes = 0;

  async read(sessionId: string): Promise<SessionRead | undefined> {
    this.loads++;
    if (this.failing) throw new Error('connection refused (redis://user:secret@host)');
    return this.inner.read(sessionId);
  }

  async apply(sessionId: string, op: SessionOp, reducer: SessionReducer): Promise<AppliedOp> {
    this.writes++;
    if (this.failing) throw new Error('connection refused (redis://user:secret@host)');
    return this.inner.apply(sessionId, op, reducer);
  }

  async delete(sessionId: string): Promise<void> {
    await this.inner.delete(sessionId);
  }
}

const statusCall = { tool: 'get_status', args: { job: 'build' } } as const;

async function run(b: AgentBreaker, session: string) {
  const check = await b.checkToolCall(session, statusCall);
  if (check.action === 'allow' || check.action === 'steer') {
    await b.observe(session, { kind: 'tool_call', ...statusCall, result: 'queued' });
  }
  return check.action;
}

describe('shared store', () => {
  test('two breakers on one store judge one session together and trip together', async () => {
    const store = new InMemoryBreakerStore();
    const a = new AgentBreaker({ store, checkFreshnessMs: 0 });
    const b = new AgentBreaker({ store, checkFreshnessMs: 0 });
    const decisions = [await run(a, 's'), await run(b, 's'), await run(a, 's'), await run(b, 's'), await run(a, 's')];
    assert.deepEqual(decisions, ['allow', 'allow', 'steer', 'block', 'stop']);
    // Opened by a: b refuses too.
    assert.equal((await b.checkModelCall('s')).reason, 'breaker_open');
    assert.equal((await a.checkModelCall('s')).reason, 'breaker_open');
    assert.equal((await a.snapshot('s')).state, 'OPEN');
  });

  test('concurrent observations from two processes lose no update', async () => {
    const store = new InMemoryBreakerStore();
    const a = new AgentBreaker({ store, checkFreshnessMs: 0 });
    const b = new AgentBreaker({ store, checkFreshnessMs: 0 });
    const work = [];
    for (let i = 0; i < 40; i++) {
      const breaker = i % 2 === 0 ? a : b;
      work.push(breaker.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '' }));
    }
    await Promise.all(work);
    const snap = await a.snapshot('s');
    assert.equal(snap.counters.modelCalls, 40);
    assert.equal(snap.budget.tokens, 440);
  });

  test('an observed event costs one store round trip when nobody else writes', async () => {
    const store = new FlakyStore();
    const b = new AgentBreaker({ store, checkFreshnessMs: 0 });
    await b.observe('s', { kind: 'user', text: 'hi' });
    const before = store.loads + store.writes;
    for (let i = 0; i < 10; i++) await b.observe('s', { kind: 'tool_call', tool: 'read', args: { path: `f${i}` }, result: `content ${i}` });
    assert.equal(store.loads + store.writes - before, 10);
  });

  test("with checkFreshnessMs, another replica's trip is seen by the next observation at once, and by checks after the window", async () => {
    const store = new InMemoryBreakerStore();
    const clock = new ManualClock();
    const a = new AgentBreaker({ store, now: clock.now, checkFreshnessMs: 1_000 });
    const b = new AgentBreaker({ store, now: clock.now, checkFreshnessMs: 1_000 });
    await a.observe('s', { kind: 'user', text: 'hi' });
    for (let i = 0; i < 6; i++) await run(b, 's');
    assert.equal((await b.snapshot('s')).state, 'OPEN');
    assert.equal((await a.observe('s', { kind: 'model', promptTokens: 1, completionTokens: 1, text: '' })).action, 'stop');
    clock.advance(1_000);
    assert.equal((await a.checkModelCall('s')).action, 'stop');
  });

  test('fail-open: a store outage lets calls through and warns, never throws', async () => {
    const store = new FlakyStore();
    const b = new AgentBreaker({ store });
    const warnings: BreakerEventRecord[] = [];
    b.on((e) => e.type === 'warning' && warnings.push(e));
    store.failing = true;
    assert.equal((await b.checkModelCall('s')).action, 'allow');
    assert.equal((await b.checkToolCall('s', statusCall)).action, 'allow');
    assert.equal((await b.observe('s', { kind: 'user', text: 'x' })).action, 'allow');
    assert.equal(warnings.length, 3);
    assert.equal((await b.health()).unjudged, 3, 'what was not judged is counted');
    for (const w of warnings) {
      assert.match(
        w.message ?? '',
        /store (read|apply) failed \(connection refused \(redis:\/\/user:\[REDACTED\]@host\)\); failing open/,
        'the warning says why',
      );
      assert.ok(!(w.message ?? '').includes('secret'), 'but not the credentials');
    }
    const degraded = await b.health();
    assert.equal(degraded.status, 'degraded');
    assert.equal(degraded.storeError, 'connection refused (redis://user:[REDACTED]@host)');
    store.failing = false;
    await b.checkModelCall('s');
    const recovered = await b.health();
    assert.equal(recovered.status, 'ok');
    assert.equal(recovered.storeError, undefined, 'a store that works again has no error to report');
    assert.equal(recovered.lastStoreError, 'connection refused (redis://user:[REDACTED]@host)', 'but why calls went unjudged is kept');
  });

  test('fail-closed: a store outage stops the call with BreakerUnavailableError', async () => {
    const store = new FlakyStore();
    const b = new AgentBreaker({ store, onStoreError: 'fail-closed' });
    store.failing = true;
    const decision = await b.checkModelCall('s');
    assert.equal(decision.action, 'stop');
    assert.equal(decision.reason, 'store_unavailable');
    assert.equal(decision.category, undefined);
    assert.ok(breakerErrorFor(decision) instanceof BreakerUnavailableError);
    assert.match(decision.message ?? '', /^Agent breaker store read failed \(connection refused \(redis:\/\/user:\[REDACTED\]@host\)\); failing closed/);
    assert.equal((await b.observe('s', { kind: 'user', text: 'x' })).action, 'stop');
  });

  test('an outage does not undo a stop: a session this process saw OPEN stays refused until its cooldown ends, under either policy', async () => {
    for (const onStoreError of ['fail-open', 'fail-closed'] as const) {
      const store = new FlakyStore();
      const clock = new ManualClock();
      const tripper = new AgentBreaker({ store, now: clock.now, onStoreError, cooldownMs: 60_000 });
      // Another replica that only read the trip (a check on the open session).
      const reader = new AgentBreaker({ store, now: clock.now, onStoreError, cooldownMs: 60_000, checkFreshnessMs: 0 });
      for (let i = 0; i < 6; i++) await run(tripper, 's');
      assert.equal((await reader.checkModelCall('s')).reason, 'breaker_open', onStoreError);

      store.failing = true;
      for (const breaker of [tripper, reader]) {
        const warnings: BreakerEventRecord[] = [];
        breaker.on((e) => e.type === 'warning' && warnings.push(e));
        const gate = await breaker.checkModelCall('s');
        assert.deepEqual([gate.action, gate.reason, gate.category], ['stop', 'breaker_open', 'tool_spiral'], onStoreError);
        assert.equal((await breaker.observe('s', { kind: 'tool_call', ...statusCall, result: 'queued' })).reason, 'breaker_open');
        assert.match(warnings[0]?.message ?? '', /store read failed .*; the session's breaker is OPEN as this process last saw it: the call is refused/);
        // Judged from what this process saw: not counted as unjudged. Another session still follows the policy.
        assert.equal((await breaker.health()).unjudged, 0);
        assert.equal((await breaker.checkModelCall('other')).action, onStoreError === 'fail-open' ? 'allow' : 'stop');
      }
      clock.advance(60_000);
      assert.equal((await tripper.checkModelCall('s')).reason, onStoreError === 'fail-open' ? undefined : 'store_unavailable', 'the cooldown is over');
    }
  });

  test('a service that has seen ten thousand trips still remembers its newest one through an outage', async () => {
    const store = new FlakyStore();
    const clock = new ManualClock();
    const b = new AgentBreaker({ store, now: clock.now, telemetry: false, cooldownMs: 60_000, toolSpiral: { escalation: ['stop'] } });
    // Sessions that trip and are never seen again, their cooldowns long over.
    for (let i = 0; i < 10_000; i++) while ((await run(b, `old-${i}`)) !== 'stop');
    clock.advance(120_000);
    while ((await run(b, 'fresh')) !== 'stop');
    store.failing = true;
    const gate = await b.checkToolCall('fresh', statusCall);
    assert.deepEqual([gate.action, gate.reason], ['stop', 'breaker_open']);
    assert.deepEqual((await b.health()).open, ['fresh']);
  });

  test('a store that throws: a snapshot says the state is unknown (not a made-up CLOSED one); health and listing do not throw', async () => {
    const store = new FlakyStore();
    const b = new AgentBreaker({ store });
    store.failing = true;
    await assert.rejects(b.snapshot('s'), (e: unknown) => BreakerUnavailableError.isInstance(e) && e.sessionId === 's');
    assert.deepEqual((await b.health()).open, []);
  });

  test('a reset the store cannot make throws: one that did not happen must not look done', async () => {
    const store = new FlakyStore();
    const b = new AgentBreaker({ store });
    store.failing = true;
    await assert.rejects(
      b.reset('s'),
      (e: unknown) => BreakerUnavailableError.isInstance(e) && /nothing was changed/.test(e.message) && !/secret/.test(e.message),
    );
    await assert.rejects(b.reset('s', { evidence: true }), BreakerUnavailableError);
    store.failing = false;
    await b.reset('s');
  });
});
