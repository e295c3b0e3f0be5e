import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { health } from '../telemetry/health.ts';
import { AgentBreaker } from './agent-breaker.ts';
import type { BreakerStore } from './breaker-store.ts';
import { InMemoryBreakerStore } from './in-memory-breaker-store.ts';

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
});
