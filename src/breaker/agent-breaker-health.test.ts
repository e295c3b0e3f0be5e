import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { health } from '../telemetry/health.ts';
import { AgentBreaker } from './agent-breaker.ts';
import type { BreakerStore } from './breaker-store.ts';
import { InMemoryBreakerStore } from './in-memory-breaker-store.ts';
import { BreakerDriver } from './test-support/breaker-driver.ts';

describe('AgentBreaker.health', () => {
  test('a store without a ping that refuses writes but still lists open sessions is degraded until a write succeeds', async () => {
    const inner = new InMemoryBreakerStore();
    let full = true;
    const store: BreakerStore = {
      read: (sessionId) => inner.read(sessionId),
      delete: (sessionId) => inner.delete(sessionId),
      listOpen: (now) => inner.listOpen(now),
      apply: (sessionId, op, reducer) =>
        full ? Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'.")) : inner.apply(sessionId, op, reducer),
    };
    const breaker = new AgentBreaker({ telemetry: false, store });
    for (let i = 0; i < 3; i++) assert.equal((await breaker.observe('s', { kind: 'user', text: `hello ${i}` })).action, 'allow');
    // Twice: listing the open sessions for the first report must not clear the refusal for the second.
    for (let i = 0; i < 2; i++) {
      const h = await breaker.health();
      assert.deepEqual([h.status, h.storeReachable, h.unjudged], ['degraded', false, 3]);
      assert.match(h.storeError ?? '', /^OOM command not allowed/);
      assert.equal((await health({ breakers: { main: breaker } })).components['main']?.status, 'DOWN');
    }
    full = false;
    await breaker.observe('s', { kind: 'user', text: 'hello again' });
    const h = await breaker.health();
    assert.deepEqual([h.status, h.storeReachable, h.storeError, h.unjudged], ['ok', true, undefined, 3]);
    assert.match(h.lastStoreError ?? '', /^OOM/);
    assert.equal((await health({ breakers: { main: breaker } })).components['main']?.status, 'UP');
  });

  test('health() lists open sessions redacted, as logs show them; openSessions() as they are, to reset one', async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const id = 'loop-postgres://appuser:Hunter2Pa55@db.internal:5432/prod';
    await new BreakerDriver(breaker, id).repeat(6, 'get_status', { job: 'build' }, () => 'queued');
    const h = await breaker.health();
    assert.equal(h.open.length, 1);
    assert.doesNotMatch(h.open[0]!, /Hunter2Pa55/);
    assert.deepEqual(await breaker.openSessions(), [id]);
    await breaker.reset(id);
    assert.deepEqual((await breaker.health()).open, []);
  });
});
