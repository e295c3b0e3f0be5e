import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { InMemoryBreakerStore, initialState, type BreakerSessionState, type BreakerStore, type SessionOp, type SessionReducer } from './index.ts';
import { encodeState, InvalidStateError } from './state-codec.ts';
import { compressState, decompressState } from './state-compression.ts';
import { replayCorpusFile } from './test-support/replay-corpus.ts';

/** A store that checks, after every operation, that the state survives compression unchanged, and sums both forms' sizes. */
class CompressingStore implements BreakerStore {
  readonly inner = new InMemoryBreakerStore({ maxSessions: 100_000, decodedSessions: 100_000 });
  checked = 0;
  compressedBytes = 0;
  textBytes = 0;

  read(sessionId: string) {
    return this.inner.read(sessionId);
  }

  async apply(sessionId: string, op: SessionOp, reducer: SessionReducer) {
    const applied = await this.inner.apply(sessionId, op, reducer);
    const bytes = compressState(applied.state);
    assert.deepEqual(decompressState(bytes), applied.state);
    this.compressedBytes += bytes.length;
    this.textBytes += Buffer.byteLength(encodeState(applied.state));
    this.checked++;
    return applied;
  }

  delete(sessionId: string) {
    return this.inner.delete(sessionId);
  }
}

const isInvalidState = (error: unknown) => InvalidStateError.isInstance(error) && (error as InvalidStateError).code === 'GOVERNOR_INVALID_STATE';

/** Bytes in the compressed form's layout: the marker, then `body` deflated. */
function compressedForm(body: string | Buffer, version = '1'): Uint8Array {
  return Buffer.concat([Buffer.from(`Z${version}`), deflateRawSync(body)]);
}

describe('state compression', () => {
  test('every state of a corpus round-trips after every event, and takes fewer bytes than the text form', async () => {
    const store = new CompressingStore();
    await replayCorpusFile(path.resolve(import.meta.dirname, '../../bench/corpus/multi-agent.jsonl'), store);
    assert.ok(store.checked > 1_000, `${store.checked} states checked`);
    assert.ok(store.compressedBytes < store.textBytes * 0.8, `${store.compressedBytes} bytes compressed against ${store.textBytes} as text`);
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
