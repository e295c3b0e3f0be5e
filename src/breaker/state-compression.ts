import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { BreakerSessionState } from './breaker-state.ts';
import { decodeState, encodeState, InvalidStateError } from './state-codec.ts';

/**
 * The compressed form starts with these two bytes, `Z` and a version digit:
 * the text forms start with `G` or `{`, so a reader of stored bytes tells
 * every form apart by the first one.
 */
const MARKER = 0x5a;
const VERSION = 0x31;

/**
 * Longest state text a compressed state may inflate to. The detectors'
 * windows bound a real state to tens of kilobytes even when lengthened;
 * this only keeps a corrupt or hostile value from inflating without end.
 */
const MAX_TEXT_BYTES = 16 * 1024 * 1024;

/**
 * A session state as bytes for stores that can hold binary values: the
 * text of {@link encodeState}, deflated, behind a two-byte marker. About 30 %
 * smaller than the text (its hashes are base-85 digits, which deflate packs
 * back towards 8 bits each) at the price of a few tens of microseconds per
 * state. Lossless: `decompressState(compressState(s))` deep-equals `s`.
 */
export function compressState(state: BreakerSessionState): Uint8Array {
  // Deflate's fastest level: the text is mostly hashes, which no search for repeats shortens.
  const body = deflateRawSync(encodeState(state), { level: 1 });
  const out = new Uint8Array(body.length + 2);
  out[0] = MARKER;
  out[1] = VERSION;
  out.set(body, 2);
  return out;
}

/**
 * A session state from {@link compressState}'s bytes, or from either text
 * form {@link decodeState} reads, as UTF-8 bytes (what stores wrote before
 * they compressed).
 * @throws {InvalidStateError} when the bytes are none of these forms, or
 * hold something other than a session state.
 */
export function decompressState(bytes: Uint8Array): BreakerSessionState {
  if (bytes[0] !== MARKER) return decodeState(new TextDecoder().decode(bytes));
  if (bytes[1] !== VERSION) throw new InvalidStateError(`unknown compressed version ${JSON.stringify(String.fromCharCode(bytes[1] ?? 0))}`);
  let text: string;
  try {
    text = inflateRawSync(bytes.subarray(2), { maxOutputLength: MAX_TEXT_BYTES }).toString('utf8');
  } catch (error) {
    throw new InvalidStateError(`compressed form does not inflate (${(error as Error).message})`, { cause: error });
  }
  return decodeState(text);
}
