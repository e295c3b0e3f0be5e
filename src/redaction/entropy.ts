/** Counts of the ASCII characters of the text being measured, reused: entropy is measured synchronously. */
const asciiCounts = new Int32Array(128);

/** Shannon entropy of `text` in bits per character (per code point). */
export function shannonEntropy(text: string): number {
  if (text === '') return 0;
  // ASCII, nearly every value judged, is counted in a typed array; anything else in a map.
  let others: Map<number, number> | undefined;
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    length++;
    if (c < 128) {
      asciiCounts[c]!++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = (c << 16) | low;
        i++;
      }
    }
    others ??= new Map();
    others.set(c, (others.get(c) ?? 0) + 1);
  }
  let bits = 0;
  for (let c = 0; c < 128; c++) {
    const n = asciiCounts[c]!;
    if (n === 0) continue;
    asciiCounts[c] = 0;
    const p = n / length;
    bits -= p * Math.log2(p);
  }
  if (others !== undefined) {
    for (const n of others.values()) {
      const p = n / length;
      bits -= p * Math.log2(p);
    }
  }
  return bits;
}
