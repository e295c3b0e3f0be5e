import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { initialState, type BreakerSessionState } from './index.ts';
import { encodeState, InvalidStateError } from './state-codec.ts';
import { compressState, decompressState } from './state-compression.ts';
import { replayCorpusFile, StateCheckingStore } from './test-support/replay-corpus.ts';

const isInvalidState = (error: unknown) => InvalidStateError.isInstance(error) && (error as InvalidStateError).code === 'GOVERNOR_INVALID_STATE';

/** Bytes in the compressed form's layout: the marker, then `body` deflated. */
function compressedForm(body: string | Buffer, version = '1'): Uint8Array {
  return Buffer.concat([Buffer.from(`Z${version}`), deflateRawSync(body)]);
}

describe('state compression', () => {
  test('every state of a corpus round-trips after every event, and takes fewer bytes than the text form', async () => {
    let compressedBytes = 0;
    let textBytes = 0;
    const store = new StateCheckingStore((state) => {
      const bytes = compressState(state);
      assert.deepEqual(decompressState(bytes), state);
      compressedBytes += bytes.length;
      textBytes += Buffer.byteLength(encodeState(state));
    });
    await replayCorpusFile(path.resolve(import.meta.dirname, '../../bench/corpus/multi-agent.jsonl'), store);
    assert.deepEqual(store.failures, [], 'states that did not round-trip');
    assert.ok(store.checked > 1_000, `${store.checked} states checked`);
    assert.ok(compressedBytes < textBytes * 0.8, `${compressedBytes} bytes compressed against ${textBytes} as text`);
  });

  test('reads both text forms as UTF-8 bytes, names in any script included', () => {
    const state: BreakerSessionState = {
      ...initialState(5),
      status: 'OPEN',
      openedAt: 6,
      openCategory: 'tool_spiral',
      openReason: 'läs_fil 反复 called with the same arguments',
      seq: 3,
      tools: [{ s: 3, t: 'läs_fil', a: { h: 2 ** 52 + 1, f: 'p|v00001' }, r: 7, e: 0, p: 1 }],
    };
    assert.deepEqual(decompressState(compressState(state)), state);
    assert.deepEqual(decompressState(Buffer.from(encodeState(state))), state);
    assert.deepEqual(decompressState(Buffer.from(JSON.stringify(state))), state);
  });

  test('rejects bytes that are not a stored state with a typed error', () => {
    const good = compressState(initialState(5));
    const rejected: Array<[string, Uint8Array]> = [
      ['nothing', new Uint8Array(0)],
      ['an unknown version', compressedForm(encodeState(initialState(5)), '9')],
      ['a cut-off body', good.subarray(0, good.length - 4)],
      ['a body that is not deflate', Buffer.from('Z1not deflate at all')],
      ['text that is no state', compressedForm('G1[]')],
      ['a state of another schema', compressedForm(JSON.stringify({ ...initialState(5), v: 2 }))],
      // Inflates far past any real state: refused before it is all held.
      ['a body that inflates without end', compressedForm(Buffer.alloc(17 * 1024 * 1024, 0x20))],
    ];
    for (const [what, bytes] of rejected) assert.throws(() => decompressState(bytes), isInvalidState, what);
  });
});
