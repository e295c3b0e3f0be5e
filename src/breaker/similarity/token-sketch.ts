import { hash32 } from './hash.ts';
import { tokenHashes, tokenize } from './tokenize.ts';

/**
 * A bounded summary of a token set: the `k` smallest distinct token hashes,
 * ascending (a bottom-k sketch). Below `k` distinct tokens it *is* the set, so
 * similarity is exact; above, Jaccard is estimated without bias from the
 * sketches alone, which keeps stored evidence small however long the text.
 */
export type TokenSketch = readonly number[];

/**
 * A {@link TokenSketch} packed into a string, 5 characters per hash (base
 * 85, the Z85 alphabet: nothing JSON escapes), as session state keeps it: the
 * same hashes in under half the JSON of a number array, and one flat string
 * on the heap instead of an array of doubles.
 */
export type PackedSketch = string;

/** Either form of a sketch; the comparisons take both. */
export type AnySketch = TokenSketch | PackedSketch;

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const BASE = DIGITS.length;
const DIGIT_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < DIGITS.length; i++) DIGIT_VALUES[DIGITS.charCodeAt(i)] = i;
const DIGIT_CODES = Array.from(DIGITS, (d) => d.charCodeAt(0));
const PACKED_WIDTH = 5;

/** Packs a sketch of 32-bit hashes (see {@link PackedSketch}); lossless. */
export function packSketch(sketch: TokenSketch): PackedSketch {
  const codes = new Array<number>(sketch.length * PACKED_WIDTH);
  for (let i = 0, c = 0; i < sketch.length; i++) {
    // Most significant digit first; 85 ** 5 > 2 ** 32.
    let h = sketch[i]!;
    for (let d = PACKED_WIDTH - 1; d >= 0; d--) {
      codes[c + d] = DIGIT_CODES[h % BASE]!;
      h = Math.floor(h / BASE);
    }
    c += PACKED_WIDTH;
  }
  // One flat string (appending piece by piece would keep a rope of small strings).
  return String.fromCharCode(...codes);
}

/** The hashes of a packed sketch (a sketch that is not packed is returned as it is). */
export function unpackSketch(sketch: AnySketch): TokenSketch {
  if (typeof sketch !== 'string') return sketch;
  const out = new Array<number>(sketch.length / PACKED_WIDTH);
  for (let i = 0, c = 0; i < out.length; i++, c += PACKED_WIDTH) {
    let h = 0;
    for (let d = 0; d < PACKED_WIDTH; d++) h = h * BASE + DIGIT_VALUES[sketch.charCodeAt(c + d) & 127]!;
    out[i] = h;
  }
  return out;
}

/** Default sketch size: exact up to 32 distinct tokens, about ±0.07 beyond. */
export const DEFAULT_SKETCH_SIZE = 32;

/** Sketch of the distinct tokens of `text`. */
export function sketchText(text: string, k = DEFAULT_SKETCH_SIZE): TokenSketch {
  return sketchHashes(tokenHashes(text), k);
}

/** Sketch of already tokenised text. */
export function sketchTokens(tokens: readonly string[], k = DEFAULT_SKETCH_SIZE): TokenSketch {
  return sketchHashes(tokens.map(hash32), k);
}

/**
 * Sketch of tokens already hashed with {@link hash32}. Keeps a sorted array
 * of at most `k` hashes: once it is full, almost every further hash is
 * rejected by one comparison, so the cost is linear in the tokens.
 */
export function sketchHashes(hashes: readonly number[], k = DEFAULT_SKETCH_SIZE): TokenSketch {
  const kept: number[] = [];
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]!;
    if (kept.length === k && h >= kept[k - 1]!) continue;
    // Insertion point from the end: new entries are rare once the sketch fills.
    let pos = kept.length;
    while (pos > 0 && kept[pos - 1]! > h) pos--;
    if (pos > 0 && kept[pos - 1] === h) continue;
    if (kept.length === k) kept.pop();
    kept.push(h);
    for (let m = kept.length - 1; m > pos; m--) kept[m] = kept[m - 1]!;
    kept[pos] = h;
  }
  return kept;
}

/**
 * Jaccard similarity of the sets two sketches summarise (estimated when a
 * sketch is full). Two empty sketches are identical (1); one empty, 0.
 */
export function sketchJaccard(packedA: AnySketch, packedB: AnySketch, k = DEFAULT_SKETCH_SIZE): number {
  const a = unpackSketch(packedA);
  const b = unpackSketch(packedB);
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  // Merge the two sorted sketches, keeping the k smallest of their union.
  let i = 0;
  let j = 0;
  let union = 0;
  let both = 0;
  while (union < k && (i < a.length || j < b.length)) {
    const x = i < a.length ? a[i]! : Infinity;
    const y = j < b.length ? b[j]! : Infinity;
    if (x === y) {
      both++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
    union++;
  }
  return both / union;
}

/**
 * Overlap coefficient of the sets two sketches summarise: the share of the
 * smaller set found in the larger one. Unlike Jaccard it does not fall when
 * one text says more than the other ("retry webhook" vs "how are webhooks
 * retried after a timeout"), which suits short requests reworded. Exact when
 * both sketches hold their whole set; when either is full the sets are not
 * known, and Jaccard (never above the overlap) is returned instead. Two empty
 * sketches are identical (1); one empty, 0.
 */
export function sketchOverlap(packedA: AnySketch, packedB: AnySketch, k = DEFAULT_SKETCH_SIZE): number {
  const a = unpackSketch(packedA);
  const b = unpackSketch(packedB);
  if (a.length >= k || b.length >= k) return sketchJaccard(a, b, k);
  if (a.length === 0 && b.length === 0) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let both = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      both++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return both / Math.min(a.length, b.length);
}

/** Exact Jaccard similarity of two token lists (as sets). */
export function jaccard(a: readonly string[], b: readonly string[]): number {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size === 0 && sb.size === 0) return 1;
  let both = 0;
  for (const t of sa) if (sb.has(t)) both++;
  return both / (sa.size + sb.size - both);
}

/**
 * Containment: the share of the smaller set found in the larger one. Useful
 * when one text extends another ("query" vs "query plus a detail").
 */
export function containment(a: readonly string[], b: readonly string[]): number {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size === 0 && sb.size === 0) return 1;
  if (sa.size === 0 || sb.size === 0) return 0;
  const [small, large] = sa.size <= sb.size ? [sa, sb] : [sb, sa];
  let both = 0;
  for (const t of small) if (large.has(t)) both++;
  return both / small.size;
}

/** Jaccard similarity of two texts' tokens (exact). */
export function textSimilarity(a: string, b: string): number {
  return jaccard(tokenize(a), tokenize(b));
}
