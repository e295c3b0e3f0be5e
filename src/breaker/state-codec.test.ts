import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { initialState, type BreakerSessionState } from './index.ts';
import { decodeState, encodeState, InvalidStateError } from './state-codec.ts';
import { replayCorpusFile, StateCheckingStore } from './test-support/replay-corpus.ts';

function roundTrip(state: BreakerSessionState): string {
  const encoded = encodeState(state);
  assert.deepEqual(decodeState(encoded), state);
  return encoded;
}

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Replays a corpus file, checking after every operation that the state survives encoding unchanged. */
async function replayFile(file: string): Promise<{ checked: number; failures: readonly unknown[]; verbatim: number }> {
  /** Records kept as they were because the encoder did not know their shape. */
  let verbatim = 0;
  const store = new StateCheckingStore((state) => {
    const encoded = roundTrip(state);
    const kept = encoded.split('{"s":').length - 1;
    if (kept > 0 && process.env.SHOW) console.log(encoded);
    verbatim += kept;
  });
  await replayCorpusFile(file, store);
  return { checked: store.checked, failures: store.failures, verbatim };
}

describe('state codec', () => {
  test('a fresh state round-trips and is small', () => {
    const encoded = roundTrip(initialState(1_700_000_000_000));
    assert.ok(encoded.startsWith('G1'));
    assert.ok(encoded.length < JSON.stringify(initialState(1_700_000_000_000)).length + 10);
  });

  test('reads the plain JSON states older versions stored', () => {
    const state = { ...initialState(5), seen: [1, 2 ** 52], tools: [{ s: 0, t: 'x', a: { h: 1, f: 'p|v00001' }, r: 0, e: 0, p: 1 }] };
    assert.deepEqual(decodeState(JSON.stringify(state)), state);
  });

  test('an OPEN state with evidence, every optional field and unicode or delimiter-laden names round-trips', () => {
    const names = ['naïve_工具', 'a"b\\c', 'x|y~z,{}[]', '', '🙂'];
    const state: BreakerSessionState = {
      ...initialState(1_700_000_000_000),
      status: 'OPEN',
      openedAt: 1_700_000_000_123,
      openCategory: 'tool_spiral',
      openReason: 'repeated "get_status" ✓',
      openEvidence: { pattern: 'same_call', tool: names[0], calls: 6 } as never,
      openPending: 1,
      seq: 100,
      userSeq: 3,
      tools: [
        // Packed fields (paths interned), then texts that are not packed fields (kept as they are).
        ...names.map((t, i) => ({
          s: 80 + i,
          t,
          a: { h: 2 ** 53 - 1 - i, f: `${t}|i0000${i}content|t1abcq!uery|v#####` },
          r: i === 0 ? 0 : 2 ** 40 + i,
          e: (i % 3) as 0 | 1 | 2,
          p: i,
        })),
        { s: 86, t: 'x', a: { h: 0, f: '' }, r: 0, e: 0, p: 7 },
        { s: 87, t: 'x', a: { h: 1, f: 'empty|t0' }, r: 0, e: 2, p: 0 },
        ...['p|ath|i00000', 'path|i0000', 'path|t2abc', 'path|x00000', 'no bar', 'a|i00000b'].map((f, i) => ({
          s: 88 + i,
          t: 'y',
          a: { h: i, f },
          r: 0,
          e: 0 as const,
          p: 1,
        })),
      ],
      seen: [0, 1, 84, 85, 2 ** 53 - 1],
      texts: [
        { s: 10, k: '~000' },
        { s: 11, k: '', c: 0 },
        { s: 12, k: '~abc', c: 123_456_789, u: 1, b: [-2_147_483_648, 2_147_483_647, 0, -1] },
      ],
      retrievals: [
        { s: 20, q: '~111', r: null },
        { s: 21, q: '~222', r: 0, k: 0, f: 1, n: [5, 0], o: [7] },
        { s: 22, q: '', r: 9, k: 4_000_000_000 },
        { s: 23, q: '~555', r: 3, k: 9, f: 1, n: [6, 0, 6], o: [2], w: [8, 4_000_000_000], v: [8, 4_000_000_000, 5] },
        { s: 24, q: '~666', r: 4, w: [], v: [7, 5], c: 7 },
      ],
      delegations: [
        { s: 30, g: names[1]!, i: '~333', o: '', n: 0, k: 0, e: 2 },
        { s: 31, g: names[2]!, i: '', o: '~444', n: 12 },
      ],
      userTurns: { s: 89, f: [4_000_000_000, 0], w: 7.5, v: [[-1, 1], []], n: 3 },
      cycleTools: ['a', 'b'],
      handled: ['k1', 'k2'],
      escalations: { tool_spiral: 2 },
      escalatedIn: { tool_spiral: 7 },
    };
    const encoded = roundTrip(state);
    assert.equal(encoded.split('{"s":').length, 1, 'every record is in the compact form');
  });

  test('records of shapes it does not know (older versions) are kept as they are', () => {
    const state = {
      ...initialState(5),
      seq: 10,
      // Unpacked sketches and field arrays, a negative and a fractional number, a record from a later sequence, keys in another order.
      tools: [
        { s: 1, t: 'x', a: { h: 1, f: [['path', 'i', 5]] }, r: 0, e: 0, p: 1 },
        { s: 2, t: 'x', a: { h: -1, f: '' }, r: 0, e: 0, p: 1 },
        { s: 11, t: 'x', a: { h: 1, f: '' }, r: 0, e: 0, p: 1 },
        { t: 'x', s: 3, a: { h: 1, f: '' }, r: 0, e: 0, p: 1 },
      ],
      texts: [{ s: 4, k: [1, 2, 3] }],
      retrievals: [{ s: 5, q: '~000', r: 1.5 }],
      delegations: [{ s: 6, g: 'a', i: [1], o: [2], n: 3, k: 0 }],
      seen: [1, -2],
      userTurns: { s: 9, f: [1], w: 1, v: [[2 ** 33]], n: 1 },
    } as unknown as BreakerSessionState;
    const encoded = encodeState(state);
    assert.deepEqual(decodeState(encoded), state);
    assert.equal(encoded.split('{"s":').length - 1 + encoded.split('{"t":').length - 1, 8, 'the records it does not know are kept as objects');
  });

  test('rejects text that is not a stored state', () => {
    const fresh = initialState(5);
    // JSON of another shape: another program's value, or a state of a schema this version does not know.
    const shapes = [{}, { ...fresh, v: 2 }, { ...fresh, status: 'BROKEN' }, { ...fresh, seq: -1 }, { ...fresh, tools: {} }, { ...fresh, counters: null }];
    const { budget: _budget, ...withoutBudget } = fresh;
    shapes.push(withoutBudget);
    const texts = ['', 'hello', 'G2[]', 'G1[', 'G1[[],{"seq":1,"tools":[["1"]]}]', 'G1[[],{"seq":1,"tools":[[5]]}]', 'G1{}', '[1]'];
    for (const shape of shapes) texts.push(JSON.stringify(shape), `G1${JSON.stringify([[], shape])}`);
    for (const text of texts) {
      assert.throws(
        () => decodeState(text),
        (error: unknown) => InvalidStateError.isInstance(error) && (error as InvalidStateError).code === 'GOVERNOR_INVALID_STATE',
        text,
      );
    }
  });

  test('every state of every trajectory of bench/corpus round-trips, after every event, in the compact form', async () => {
    const dir = path.join(repoRoot, 'bench/corpus');
    let checked = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
      const store = await replayFile(path.join(dir, file));
      assert.deepEqual(store.failures, [], `${file}: states that did not round-trip`);
      assert.equal(store.verbatim, 0, `${file}: records kept verbatim`);
      checked += store.checked;
    }
    assert.ok(checked > 10_000, `${checked} states checked`);
  });

  const realRuns = path.join(repoRoot, '../shared/corpus/real-dev.jsonl');
  test('every state of the recorded real runs round-trips after every event', {
    skip: !existsSync(realRuns) && 'no real-run corpus beside the repository',
  }, async () => {
    const store = await replayFile(realRuns);
    assert.deepEqual(store.failures, []);
    assert.equal(store.verbatim, 0);
    assert.ok(store.checked > 5_000, `${store.checked} states checked`);
  });
});
