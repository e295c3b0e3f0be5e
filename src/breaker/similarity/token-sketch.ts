import { hash32 } from './hash.ts';
import { tokenHashes, tokenize } from './tokenize.ts';

/**
 * A bounded summary of a token set: the `k` smallest distinct token hashes,
 * each cut to its top {@link SKETCH_HASH_BITS} bits, ascending (a bottom-k
 * sketch). Below `k` distinct tokens it *is* the set (up to the rare tokens
 * whose cut hashes collide), so similarity is exact; above, Jaccard is
 * estimated without bias from the sketches alone, which keeps stored evidence
 * small however long the text.
 */
export type TokenSketch = readonly number[];

/**
 * A {@link TokenSketch} packed into a string as session state keeps it: a
 * `~`, then 3 characters per hash (base 85, the Z85 alphabet: nothing JSON
 * escapes). One flat string on the heap instead of an array of doubles, a
 * third of the JSON of a number array. Strings without the `~` are the
 * 5-character form of 32-bit hashes that older versions stored.
 */
export type PackedSketch = string;

/** Either form of a sketch; the comparisons take both. */
export type AnySketch = TokenSketch | PackedSketch;

/**
 * Bits kept of each token hash. Collisions only nudge estimates: the
 * sketches of two unrelated texts of ~200 tokens share a wrong hash in about
 * 1 of 400 comparisons, and those of 4,000 tokens each read as 0.005 alike
 * (with 12 bits, 0.45). 19 bits is what 3 base-85 digits hold (85³ > 2¹⁹).
 */
export const SKETCH_HASH_BITS = 19;
const HASH_SHIFT = 32 - SKETCH_HASH_BITS;
const HASH_LIMIT = 2 ** SKETCH_HASH_BITS;

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const BASE = DIGITS.length;
const DIGIT_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < DIGITS.length; i++) DIGIT_VALUES[DIGITS.charCodeAt(i)] = i;
/** The character code of each digit, by its value. */
export const DIGIT_CODES: readonly number[] = Array.from(DIGITS, (d) => d.charCodeAt(0));
/** Marks the packed form of cut hashes; not a digit, so older 32-bit sketches are told apart. */
const MARK = '~';
const MARK_CODE = MARK.charCodeAt(0);
/** Digits per cut hash. */
export const PACKED_HASH_WIDTH = 3;
const LEGACY_WIDTH = 5;

/** Writes `h` (below 85³) as 3 digit codes into `codes` (an array, or the bytes of a buffer) from `at`. */
export function writeHashDigits(codes: { [index: number]: number }, at: number, h: number): void {
  codes[at + 2] = DIGIT_CODES[h % BASE]!;
  h = Math.floor(h / BASE);
  codes[at + 1] = DIGIT_CODES[h % BASE]!;
  codes[at] = DIGIT_CODES[Math.floor(h / BASE)]!;
}

/** The hash whose 3 digits start at `at` in `text`. */
function readHashDigits(text: string, at: number): number {
  return (
    DIGIT_VALUES[text.charCodeAt(at) & 127]! * (BASE * BASE) +
    DIGIT_VALUES[text.charCodeAt(at + 1) & 127]! * BASE +
    DIGIT_VALUES[text.charCodeAt(at + 2) & 127]!
  );
}

/** The digit of `n` (below 85). */
export function digitOf(n: number): string {
  return DIGITS[n]!;
}

/** The value of the digit at `at` in `text`. */
export function digitAt(text: string, at: number): number {
  return DIGIT_VALUES[text.charCodeAt(at) & 127]!;
}

/** Packs a sketch (see {@link PackedSketch}); lossless for a sketch of cut hashes, an empty sketch packs to ''. */
export function packSketch(sketch: TokenSketch): PackedSketch {
  const hashes = cutHashes(sketch);
  if (hashes.length === 0) return '';
  const codes = new Array<number>(1 + hashes.length * PACKED_HASH_WIDTH);
  codes[0] = MARK_CODE;
  for (let i = 0; i < hashes.length; i++) writeHashDigits(codes, 1 + i * PACKED_HASH_WIDTH, hashes[i]!);
  // One flat string (appending piece by piece would keep a rope of small strings).
  return String.fromCharCode(...codes);
}

/** The hashes of a packed sketch, cut (a sketch that is not packed is returned as it is, once cut). */
export function unpackSketch(sketch: AnySketch): TokenSketch {
  if (typeof sketch !== 'string') return cutHashes(sketch);
  if (sketch.length === 0) return [];
  if (sketch.charCodeAt(0) === MARK_CODE) {
    const out = new Array<number>((sketch.length - 1) / PACKED_HASH_WIDTH);
    for (let i = 0; i < out.length; i++) out[i] = readHashDigits(sketch, 1 + i * PACKED_HASH_WIDTH);
    return out;
  }
  const full = new Array<number>(sketch.length / LEGACY_WIDTH);
  for (let i = 0, c = 0; i < full.length; i++, c += LEGACY_WIDTH) {
    let h = 0;
    for (let d = 0; d < LEGACY_WIDTH; d++) h = h * BASE + DIGIT_VALUES[sketch.charCodeAt(c + d) & 127]!;
    full[i] = h;
  }
  return cutHashes(full);
}

/**
 * A sketch of cut hashes as it is; one of full 32-bit hashes (stored by
 * older versions) cut to the same bits. Cutting keeps the order, so the cut
 * sketch is the bottom-k of the cut hashes, only shorter where two collide.
 * A sketch of full hashes has all of them below 2¹⁹ by chance only: 1 in
 * 8,192 for a one-token text, far rarer with every further token.
 */
function cutHashes(sketch: TokenSketch): TokenSketch {
  if (sketch.length === 0 || sketch[sketch.length - 1]! < HASH_LIMIT) return sketch;
  const out: number[] = [];
  for (const h of sketch) {
    const cut = h >>> HASH_SHIFT;
    if (out.length === 0 || out[out.length - 1] !== cut) out.push(cut);
  }
  return out;
}

/** Default sketch size: exact up to 16 distinct tokens, about ±0.12 beyond. */
export const DEFAULT_SKETCH_SIZE = 16;

/** Sketch of the distinct tokens of `text`. */
export function sketchText(text: string, k = DEFAULT_SKETCH_SIZE): TokenSketch {
  return sketchHashes(tokenHashes(text), k);
}

/** Sketch of already tokenised text. */
export function sketchTokens(tokens: readonly string[], k = DEFAULT_SKETCH_SIZE): TokenSketch {
  return sketchHashes(tokens.map(hash32), k);
}

/**
 * Sketch of tokens already hashed with {@link hash32} (cut to
 * {@link SKETCH_HASH_BITS} bits here). A few tokens are kept in a sorted
 * list as they come. More are first counted by the top bits of their
 * hashes: only the tokens of the lowest buckets that hold `k` of them can be
 * in the sketch, and sorting those few is cheaper than keeping a sorted list
 * of `k` through all of them, where most new tokens land inside the list.
 */
export function sketchHashes(hashes: ArrayLike<number>, k = DEFAULT_SKETCH_SIZE): TokenSketch {
  if (hashes.length <= FEW_TOKENS * k) return sortedAsTheyCome(hashes, k);
  const counts = bucketCounts;
  counts.fill(0);
  for (let i = 0; i < hashes.length; i++) counts[hashes[i]! >>> BUCKET_SHIFT]!++;
  let bucket = -1;
  let total = 0;
  // The lowest buckets holding k tokens.
  do total += counts[++bucket]!;
  while (total < k && bucket < counts.length - 1);
  const sketch = lowestDistinct(hashes, bucket, total, k);
  if (sketch.length === k || bucket === counts.length - 1) return sketch;
  // Repeated tokens left fewer than k distinct there. Widening a bucket at a time would scan and sort them all
  // again for each of up to 64 buckets (a long text of a few words: 10× the cost of an event); one pass keeping
  // a sorted list of k rejects a repeat in a comparison or a few.
  return sortedAsTheyCome(hashes, k);
}

/** Tokens per sketch slot up to which {@link sortedAsTheyCome} is the cheaper way. */
const FEW_TOKENS = 3;
const BUCKET_BITS = 6;
const BUCKET_SHIFT = 32 - BUCKET_BITS;
const bucketCounts = new Int32Array(1 << BUCKET_BITS);
/** Longest candidate list sorted by insertion; a longer one (tokens crowded into few buckets) goes to the native sort. */
const INSERTION_SORT_MAX = 64;
let candidates = new Int32Array(64);

/** The `k` smallest distinct cut hashes among the `count` tokens in buckets up to `bucket`, ascending. */
function lowestDistinct(hashes: ArrayLike<number>, bucket: number, count: number, k: number): number[] {
  if (candidates.length < count) candidates = new Int32Array(count);
  let c = 0;
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]!;
    if (h >>> BUCKET_SHIFT <= bucket) candidates[c++] = h >>> HASH_SHIFT;
  }
  if (c > INSERTION_SORT_MAX) candidates.subarray(0, c).sort();
  else {
    for (let i = 1; i < c; i++) {
      const v = candidates[i]!;
      let j = i - 1;
      for (; j >= 0 && candidates[j]! > v; j--) candidates[j + 1] = candidates[j]!;
      candidates[j + 1] = v;
    }
  }
  const out: number[] = [];
  for (let i = 0; i < c && out.length < k; i++) if (i === 0 || candidates[i] !== candidates[i - 1]) out.push(candidates[i]!);
  return out;
}

/** A sorted list of at most `k` hashes kept as the tokens come: once it is full, most are rejected by one comparison. */
function sortedAsTheyCome(hashes: ArrayLike<number>, k: number): number[] {
  const kept: number[] = [];
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]! >>> HASH_SHIFT;
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

/** Whether `sketch` is in the packed form of cut hashes (compared in place, without unpacking). */
function isPacked(sketch: AnySketch): sketch is string {
  return typeof sketch === 'string' && (sketch.length === 0 || sketch.charCodeAt(0) === MARK_CODE);
}

/**
 * Jaccard similarity of the sets two sketches summarise (estimated when a
 * sketch is full). Two empty sketches are identical (1); one empty, 0.
 */
export function sketchJaccard(packedA: AnySketch, packedB: AnySketch, k = DEFAULT_SKETCH_SIZE): number {
  if (isPacked(packedA) && isPacked(packedB)) return packedJaccard(packedA, 1, packedA.length, packedB, 1, packedB.length, k);
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
 * {@link sketchJaccard} of two packed sketches' digits, `a` from `aStart` to
 * `aEnd` and `b` likewise (after the mark), read in place: comparisons run
 * on every event, and unpacking would allocate two arrays each time.
 */
export function packedJaccard(a: string, aStart: number, aEnd: number, b: string, bStart: number, bEnd: number, k = DEFAULT_SKETCH_SIZE): number {
  const emptyA = aEnd <= aStart;
  const emptyB = bEnd <= bStart;
  if (emptyA || emptyB) return emptyA && emptyB ? 1 : 0;
  let i = aStart;
  let j = bStart;
  let x = readHashDigits(a, i);
  let y = readHashDigits(b, j);
  let union = 0;
  let both = 0;
  while (union < k && (i < aEnd || j < bEnd)) {
    if (x === y) {
      both++;
      i += PACKED_HASH_WIDTH;
      j += PACKED_HASH_WIDTH;
      x = i < aEnd ? readHashDigits(a, i) : Infinity;
      y = j < bEnd ? readHashDigits(b, j) : Infinity;
    } else if (x < y) {
      i += PACKED_HASH_WIDTH;
      x = i < aEnd ? readHashDigits(a, i) : Infinity;
    } else {
      j += PACKED_HASH_WIDTH;
      y = j < bEnd ? readHashDigits(b, j) : Infinity;
    }
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
