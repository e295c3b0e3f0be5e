import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LruMap } from './lru-map.ts';

const keys = (map: LruMap<string, number>) => [...map.entries()].map(([key]) => key);

describe('LruMap', () => {
  test('keeps entries least recently used first; touching one makes it the newest', () => {
    const map = new LruMap<string, number>();
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) map.set(key, i);
    assert.deepEqual(keys(map), ['a', 'b', 'c', 'd']);
    assert.equal(map.touch('b'), 1);
    assert.deepEqual(keys(map), ['a', 'c', 'd', 'b']);
    assert.equal(map.touch('a'), 0);
    assert.equal(map.touch('a'), 0);
    assert.deepEqual(keys(map), ['c', 'd', 'b', 'a']);
    assert.deepEqual([map.oldest()?.key, map.oldest()?.value], ['c', 2]);
    assert.equal(map.touch('missing'), undefined);
    assert.equal(map.size, 4);
  });

  test('setting a known key changes its value in place, as a Map does', () => {
    const map = new LruMap<string, number>();
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    assert.deepEqual(
      [...map.entries()],
      [
        ['a', 3],
        ['b', 2],
      ],
    );
    assert.equal(map.get('a'), 3);
    assert.equal(map.get('b'), 2);
    assert.equal(map.get('c'), undefined);
  });

  test('deleting the oldest, the newest or one between keeps the rest in order', () => {
    const map = new LruMap<string, number>();
    for (const [i, key] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(key, i);
    assert.equal(map.delete('a'), true);
    assert.equal(map.delete('e'), true);
    assert.equal(map.delete('c'), true);
    assert.equal(map.delete('c'), false);
    assert.deepEqual(keys(map), ['b', 'd']);
    assert.equal(map.oldest()?.key, 'b');
    map.set('f', 5);
    assert.deepEqual(keys(map), ['b', 'd', 'f']);
    map.delete('b');
    map.delete('d');
    map.delete('f');
    assert.equal(map.size, 0);
    assert.equal(map.oldest(), undefined);
    assert.deepEqual(keys(map), []);
    map.set('g', 6);
    assert.deepEqual(keys(map), ['g']);
  });

  test('a walk may delete or move the entry it has just read', () => {
    const map = new LruMap<string, number>();
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) map.set(key, i);
    const seen: string[] = [];
    for (const [key, value] of map.entries()) {
      seen.push(key);
      if (value % 2 === 0) map.delete(key);
      else if (key === 'b') map.touch(key);
    }
    // Moved to the end, `b` is read again there, as a Map's walk reads a key set again.
    assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'b']);
    assert.deepEqual(keys(map), ['d', 'b']);
  });

  test('matches a Map re-inserted on every use over a long random mix of operations', () => {
    const map = new LruMap<number, number>();
    const model = new Map<number, number>();
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    for (let i = 0; i < 20_000; i++) {
      const key = next() % 64;
      const op = next() % 4;
      if (op === 0) {
        map.set(key, i);
        model.set(key, i);
      } else if (op === 1) {
        const value = model.get(key);
        assert.equal(map.touch(key), value);
        if (value !== undefined) {
          model.delete(key);
          model.set(key, value);
        }
      } else if (op === 2) assert.equal(map.delete(key), model.delete(key));
      else {
        const oldest = map.oldest();
        const first = model.entries().next().value;
        assert.deepEqual(oldest === undefined ? undefined : [oldest.key, oldest.value], first);
      }
      assert.equal(map.size, model.size);
    }
    assert.deepEqual([...map.entries()], [...model.entries()]);
  });
});
