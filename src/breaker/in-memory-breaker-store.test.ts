import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InMemoryBreakerStore, initialState } from './index.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';

describe('InMemoryBreakerStore', () => {
  test('compare-and-set writes only on the expected version and returns the current one otherwise', async () => {
    const store = new InMemoryBreakerStore();
    const s0 = initialState(0);
    assert.deepEqual(await store.compareAndSet('a', undefined, s0), { ok: true, version: 1 });
    const conflict = await store.compareAndSet('a', undefined, s0);
    assert.equal(conflict.ok, false);
    assert.equal(conflict.ok === false && conflict.current?.version, 1);
    assert.deepEqual(await store.compareAndSet('a', 1, { ...s0, seq: 5 }), { ok: true, version: 2 });
    assert.equal((await store.load('a'))?.state.seq, 5);
    const missing = await store.compareAndSet('b', 3, s0);
    assert.deepEqual(missing, { ok: false, current: undefined });
  });

  test('evicts the least recently used session beyond maxSessions', async () => {
    const store = new InMemoryBreakerStore({ maxSessions: 2 });
    await store.compareAndSet('a', undefined, initialState(0));
    await store.compareAndSet('b', undefined, initialState(0));
    await store.load('a');
    await store.compareAndSet('c', undefined, initialState(0));
    assert.equal(store.size, 2);
    assert.ok(await store.load('a'));
    assert.equal(await store.load('b'), undefined);
  });

  test('forgets idle sessions after idleTtlMs', async () => {
    let now = 0;
    const store = new InMemoryBreakerStore({ idleTtlMs: 1_000, now: () => now });
    await store.compareAndSet('a', undefined, initialState(0));
    now = 999;
    assert.ok(await store.load('a'));
    now = 2_000;
    assert.equal(await store.load('a'), undefined);
  });

  test('lists open sessions and deletes', async () => {
    const store = new InMemoryBreakerStore();
    await store.compareAndSet('a', undefined, { ...initialState(0), status: 'OPEN' });
    await store.compareAndSet('b', undefined, initialState(0));
    assert.deepEqual(await store.listOpen(), ['a']);
    await store.delete('a');
    assert.deepEqual(await store.listOpen(), []);
  });

  test('rejects bad options', () => {
    assert.throws(() => new InMemoryBreakerStore({ maxSessions: 0 }), (e) => e instanceof InvalidOptionError && e.option === 'maxSessions');
    assert.throws(() => new InMemoryBreakerStore({ idleTtlMs: -1 }), (e) => e instanceof InvalidOptionError && e.option === 'idleTtlMs');
  });
});
