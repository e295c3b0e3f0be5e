/**
 * Fast non-cryptographic string hashes. The breaker only compares its own
 * fingerprints with each other, so collisions cost at worst one wrong
 * "same"/"different" verdict, never a security property.
 */

/** 32-bit FNV-1a of a string's UTF-16 code units; used for tokens. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * 53-bit hash (cyrb53) of a string; used for whole arguments and results,
 * where a 32-bit hash would collide too easily across a long session.
 * Fits a JSON number exactly.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * 53-bit hash of the first `length` bytes of `view`: {@link hash53}'s mixing
 * fed 32-bit little-endian words instead of UTF-16 units (a quarter of the
 * steps), for the exact content of long texts once they are UTF-8 encoded.
 * Plain multiply-xor passes a difference confined to bit 31 through
 * unchanged, so two of them could cancel out; in UTF-8 that is bit 7 of a
 * byte, which never differs alone between two valid encodings.
 */
export function hashBytes(view: DataView, length: number): number {
  let h1 = 0xdeadbeef ^ length;
  let h2 = 0x41c6ce57 ^ length;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    const w = view.getInt32(i, true);
    h1 = Math.imul(h1 ^ w, 2654435761);
    h2 = Math.imul(h2 ^ w, 1597334677);
  }
  for (; i < length; i++) {
    const b = view.getUint8(i);
    h1 = Math.imul(h1 ^ b, 2654435761);
    h2 = Math.imul(h2 ^ b, 1597334677);
  }
  return finishBytesHash(h1, h2);
}

/** The last mixing of {@link hashBytes}: its two 32-bit states into one 53-bit hash. */
export function finishBytesHash(h1: number, h2: number): number {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * 53-bit hash of a sequence of 32-bit values (such as token hashes):
 * {@link hash53}'s mixing fed whole values, instead of hashing their decimal
 * text, whose number-to-string conversions cost far more than the hashing.
 */
export function hashSequence(values: readonly number[]): number {
  let h1 = 0xdeadbeef ^ values.length;
  let h2 = 0x41c6ce57 ^ values.length;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]! | 0;
    h1 = Math.imul(h1 ^ v, 2654435761);
    h2 = Math.imul(h2 ^ v, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * 53-bit hash of a collection of (key, value) pairs in any order: each pair
 * is hashed on its own and the pair hashes are summed, so order does not
 * matter without sorting, repeated pairs still count, and values (53-bit
 * hashes) never go through text.
 */
export class UnorderedHash {
  // Non-zero start, so that an empty collection does not hash to 0 (which callers read as "no information").
  #a = 0x9e3779b9 | 0;
  #b = 0x85ebca6b | 0;

  add(key: string, value: number): void {
    // Low and high halves of the value seed one hash of the key each, so all 53 bits count. hash53 reads its seed's
    // low 32 bits itself (as an int32), so the low half is the value as it is: `value % 2 ** 32` is a call to fmod.
    this.#a = (this.#a + (hash53(key, value) | 0)) | 0;
    this.#b = (this.#b + (hash53(key, ~Math.floor(value / 4294967296)) | 0)) | 0;
  }

  digest(): number {
    let h1 = Math.imul(this.#a ^ (this.#a >>> 16), 2246822507);
    h1 ^= Math.imul(this.#b ^ (this.#b >>> 13), 3266489909);
    let h2 = Math.imul(this.#b ^ (this.#b >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return 4294967296 * (2097151 & h2) + (h1 >>> 0);
  }
}
