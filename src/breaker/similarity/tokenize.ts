/**
 * Unicode-aware tokenisation for similarity.
 *
 * Words are runs of letters, digits and combining marks in any script. Scripts
 * written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
 * Khmer, Myanmar, Tibetan) have no word boundary a regex can see, so their runs
 * become overlapping character bigrams: two different Japanese sentences then
 * share only the bigrams they really share instead of collapsing into one
 * "word" or into nothing.
 */

import { finishBytesHash, hash32, hash53, hashBytes } from './hash.ts';

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const NO_SPACE_SCRIPT =
  /[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}\p{Script_Extensions=Thai}\p{Script_Extensions=Lao}\p{Script_Extensions=Khmer}\p{Script_Extensions=Myanmar}\p{Script_Extensions=Tibetan}]/u;
const MARK = /\p{M}/u;

/**
 * Lower-cases and applies NFKC (full-width letters and digits become their
 * ordinary forms) so that trivially different spellings compare equal.
 */
export function normalizeText(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFKC').toLowerCase() : text.toLowerCase();
}

/** Characters read by {@link tokenHashes} at most: longer texts are judged on their start. */
const MAX_SCAN_CHARS = 65_536;
/** Tokens kept from one text by {@link scanText}. */
const MAX_TOKENS = 4096;
/** Characters of ASCII text whose tokens always fit the staging space (one per two characters at most). */
const WHOLE_SCAN_CHARS = 2 * MAX_TOKENS;

/**
 * Long free-text arguments are tokenised in this many evenly spaced windows
 * of this many characters (the first at the start, the last at the end)
 * rather than whole: their exact content is still hashed in full, and a
 * bottom-k sketch estimates token-set similarity as well from a couple of
 * kilobytes spread over the text as from all of it.
 */
const SAMPLE_WINDOWS = 8;
const WINDOW_CHARS = 256;
/** A window edge moves at most this far to avoid cutting a word in two. */
const SNAP_CHARS = 32;

/** ASCII letters and digits, lower-cased; 0 for the separators of ASCII text. */
const ASCII_WORD = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_WORD[c] = c;
for (let c = 97; c <= 122; c++) ASCII_WORD[c] = c;
for (let c = 65; c <= 90; c++) ASCII_WORD[c] = c + 32;

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

const encoder = new TextEncoder();
// UTF-8 scratch space reused by every (synchronous) scan, so a scan allocates
// nothing per event. Encoding is native and near free, tells ASCII text apart
// (as many bytes as characters), and gives typed-array reads, which are much
// cheaper than charCodeAt. It grows to 3 bytes per character of the longest
// text scanned; callers bound that (65,536 characters by default).
let scratch = new Uint8Array(16_384);
let scratchView = new DataView(scratch.buffer);

/** UTF-8 encodes `text` into the scratch space; returns the number of bytes. */
function encode(text: string): number {
  if (scratch.length < text.length * 3) {
    scratch = new Uint8Array(text.length * 3);
    scratchView = new DataView(scratch.buffer);
  }
  return encoder.encodeInto(text, scratch).written;
}

/**
 * The {@link hash32} of each token of {@link tokenize}, computed without
 * building the token strings for ASCII text (the common case for arguments
 * and code), which makes fingerprinting large inputs several times cheaper.
 * At most `limit` tokens, from at most the first 65,536 characters.
 */
export function tokenHashes(text: string, limit = 4096): number[] {
  const head = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  if (encode(head) !== head.length) return tokenize(head, limit).map(hash32);
  // Its tokens fit the staging space: staged all, the first `limit` kept (its content hash is not needed here).
  if (head.length <= WHOLE_SCAN_CHARS) return unstage(Math.min(stageAsciiTokensHashing(head.length), limit));
  // A text has at most one token per two characters: no larger staging is needed, whatever the limit.
  return unstage(stageAsciiTokens(0, head.length, 0, Math.min(limit, (head.length + 1) >> 1)));
}

/** Token hashes of a text and a 53-bit hash of its whole content, in one pass. */
export interface ScannedText {
  /**
   * A view of the scan's own staging space, which the next scan overwrites:
   * read it (sketch it) before scanning again. A copy would be a new array
   * per free-text field of every tool call.
   */
  readonly tokens: Uint32Array;
  /** Hash of the exact text (every character, not only the tokens). */
  readonly content: number;
}

/**
 * The token hashes of `text` (as {@link tokenHashes}) and a hash of its
 * exact content, encoding it once. With `sample`, a text longer than
 * 2,048 characters gives the tokens of 8 evenly spaced windows of 256
 * characters, so its cost is bounded whatever its length; the content hash
 * always reads all of it.
 */
export function scanText(text: string, sample = false): ScannedText {
  const bytes = encode(text);
  if (bytes === text.length && !worthSampling(text)) {
    // ASCII read whole (the common case of an argument): tokens and content hash in one pass.
    const count = stageAsciiTokensHashing(bytes);
    return { tokens: staged.subarray(0, count), content: stagedContent };
  }
  const content = hashBytes(scratchView, bytes);
  const windows = sample && worthSampling(text) ? sampleWindows(text) : [0, text.length];
  if (bytes === text.length) {
    // ASCII: byte offsets are character offsets.
    let count = 0;
    for (let w = 0; w < windows.length; w += 2) count = stageAsciiTokens(windows[w]!, windows[w + 1]!, count, MAX_TOKENS);
    return { tokens: staged.subarray(0, count), content };
  }
  // The staging space only grows from MAX_TOKENS + 1: it holds them all.
  let count = 0;
  for (let w = 0; w < windows.length; w += 2) {
    const part = windows.length === 2 ? text : text.slice(windows[w], windows[w + 1]);
    for (const token of tokenize(part, MAX_TOKENS - count)) staged[count++] = hash32(token);
  }
  return { tokens: staged.subarray(0, count), content };
}

/**
 * A 53-bit hash of a text's exact content: of its UTF-8 bytes (see
 * {@link hashBytes}), a quarter of the steps of {@link hash53} over its
 * characters. A text longer than the scratch space is meant for (65,536
 * characters) is hashed by hash53, so the space stays bounded; equal texts
 * have equal lengths, so they still hash alike.
 */
export function textHash(text: string): number {
  if (text.length > MAX_SCAN_CHARS) return hash53(text);
  // Encoded first: encoding may replace the scratch space (and its view) with a larger one.
  const bytes = encode(text);
  return hashBytes(scratchView, bytes);
}

/** Whether a token of {@link tokenize} is a character pair of a script written without spaces: about half a word. */
export function isUnspacedToken(token: string): boolean {
  return NON_ASCII.test(token) && NO_SPACE_SCRIPT.test(token);
}

/** Whether `text` is long enough for {@link sampleWindows} to read less than all of it. */
export function worthSampling(text: string): boolean {
  return text.length > SAMPLE_WINDOWS * WINDOW_CHARS;
}

/**
 * Start and end of each sampled window of a long text (8 of 256 characters),
 * evenly spaced from its start to its end, each edge moved (a little) off the
 * middle of a word so that a cut word does not count as a token.
 */
export function sampleWindows(text: string): number[] {
  const bounds: number[] = [];
  const stride = (text.length - WINDOW_CHARS) / (SAMPLE_WINDOWS - 1);
  for (let w = 0; w < SAMPLE_WINDOWS; w++) {
    let start = Math.round(w * stride);
    let end = Math.min(text.length, start + WINDOW_CHARS);
    for (let k = 0; k < SNAP_CHARS && start > 0 && start < end && isWordUnit(text.charCodeAt(start - 1)); k++) start++;
    for (let k = 0; k < SNAP_CHARS && end < text.length && end > start && isWordUnit(text.charCodeAt(end)); k++) end--;
    bounds.push(start, end);
  }
  return bounds;
}

/** Whether a UTF-16 unit may be inside a word (any non-ASCII unit is taken to be: only window edges use this). */
function isWordUnit(code: number): boolean {
  return code >= 128 || ASCII_WORD[code] !== 0;
}

// Token hashes of scans are staged here: {@link scanText} hands out a view of them, {@link tokenHashes} a copy.
let staged = new Uint32Array(MAX_TOKENS + 1);

/**
 * Stages the hash32 of each word of the ASCII bytes scratch[start, end),
 * lower-cased, from staged[from] on, stopping at `limit` staged in all;
 * returns the new number staged. The loop has no branch per character: word
 * edges in real text are too irregular for branch prediction, and
 * mispredicted branches were most of its cost. Instead the hash of the word
 * being read is written at every character, and the count only moves on
 * where a word ends.
 */
function stageAsciiTokens(start: number, end: number, from: number, limit: number): number {
  if (staged.length <= limit) staged = new Uint32Array(limit + 1);
  // Locals, not module bindings, in the loop: the compiler then keeps them in registers.
  const bytes = scratch;
  const kept = staged;
  const table = ASCII_WORD;
  let h = FNV_OFFSET;
  let count = from;
  let inWord = 0;
  for (let i = start; i < end && count < limit; i++) {
    const c = table[bytes[i]!]!;
    const word = (c + 255) >> 8; // 1 for a letter or digit (c > 0), 0 for a separator
    kept[count] = h;
    count += inWord & (word ^ 1); // a word just ended: keep its hash
    h = (Math.imul(h ^ c, FNV_PRIME) & -word) | (FNV_OFFSET & (word - 1)); // extend the word, or restart
    inWord = word;
  }
  if (inWord === 1 && count < limit) kept[count++] = h;
  return count;
}

/** The content hash of the text {@link stageAsciiTokensHashing} last read. */
let stagedContent = 0;

/**
 * {@link stageAsciiTokens} over all of scratch[0, length), from staged[0],
 * and its {@link hashBytes} into {@link stagedContent}, in one loop that
 * reads four bytes at a time as one word: a load and a bounds check for
 * four characters instead of one each, and the content hash's step for the
 * word fits into the token hash's wait on its multiply rather than taking
 * a pass of its own. For texts of at most WHOLE_SCAN_CHARS characters:
 * their at most MAX_TOKENS tokens fit the staging space, so the loop needs
 * no limit.
 */
function stageAsciiTokensHashing(length: number): number {
  const bytes = scratch;
  const view = scratchView;
  const kept = staged;
  const table = ASCII_WORD;
  let h = FNV_OFFSET;
  let count = 0;
  let inWord = 0;
  // hashBytes's two lanes, step for step (the tests hold the two equal).
  let h1 = 0xdeadbeef ^ length;
  let h2 = 0x41c6ce57 ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    const w = view.getInt32(i, true);
    h1 = Math.imul(h1 ^ w, 2654435761);
    h2 = Math.imul(h2 ^ w, 1597334677);
    const c0 = table[w & 0xff]!;
    const c1 = table[(w >>> 8) & 0xff]!;
    const c2 = table[(w >>> 16) & 0xff]!;
    const c3 = table[w >>> 24]!;
    // As in stageAsciiTokens, for each of the four bytes in turn.
    const w0 = (c0 + 255) >> 8;
    const w1 = (c1 + 255) >> 8;
    const w2 = (c2 + 255) >> 8;
    const w3 = (c3 + 255) >> 8;
    kept[count] = h;
    count += inWord & (w0 ^ 1);
    h = (Math.imul(h ^ c0, FNV_PRIME) & -w0) | (FNV_OFFSET & (w0 - 1));
    kept[count] = h;
    count += w0 & (w1 ^ 1);
    h = (Math.imul(h ^ c1, FNV_PRIME) & -w1) | (FNV_OFFSET & (w1 - 1));
    kept[count] = h;
    count += w1 & (w2 ^ 1);
    h = (Math.imul(h ^ c2, FNV_PRIME) & -w2) | (FNV_OFFSET & (w2 - 1));
    kept[count] = h;
    count += w2 & (w3 ^ 1);
    h = (Math.imul(h ^ c3, FNV_PRIME) & -w3) | (FNV_OFFSET & (w3 - 1));
    inWord = w3;
  }
  // The last few bytes one at a time, stageAsciiTokens's step here rather than a call to it from the start of the
  // word they may end: that call reads the word again, and was no faster.
  for (let i = whole; i < length; i++) {
    const b = bytes[i]!;
    h1 = Math.imul(h1 ^ b, 2654435761);
    h2 = Math.imul(h2 ^ b, 1597334677);
    const c = table[b]!;
    const word = (c + 255) >> 8;
    kept[count] = h;
    count += inWord & (word ^ 1);
    h = (Math.imul(h ^ c, FNV_PRIME) & -word) | (FNV_OFFSET & (word - 1));
    inWord = word;
  }
  if (inWord === 1) kept[count++] = h;
  stagedContent = finishBytesHash(h1, h2);
  return count;
}

/** The first `count` staged token hashes, as an array sized once. */
function unstage(count: number): number[] {
  const out = new Array<number>(count);
  for (let j = 0; j < count; j++) out[j] = staged[j]!;
  return out;
}

/**
 * Splits text into comparable tokens: words for spaced scripts, character
 * bigrams for unspaced ones. Order is kept and duplicates are not removed.
 * At most `limit` tokens are produced (long inputs are judged on their start).
 */
export function tokenize(text: string, limit = 4096): string[] {
  const out: string[] = [];
  const normalized = normalizeText(text);
  WORD.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = WORD.exec(normalized)) !== null && out.length < limit) {
    const word = match[0];
    if (!NON_ASCII.test(word) || !NO_SPACE_SCRIPT.test(word)) {
      out.push(word);
      continue;
    }
    splitUnspaced(word, out, limit);
  }
  return out;
}

/** A word mixing spaced and unspaced scripts: words for the former, bigrams for the latter. */
function splitUnspaced(word: string, out: string[], limit: number): void {
  let spaced = '';
  let clusters: string[] = [];
  const flushSpaced = () => {
    if (spaced.length > 0) out.push(spaced);
    spaced = '';
  };
  const flushClusters = () => {
    if (clusters.length === 1) out.push(clusters[0]!);
    for (let i = 0; i + 1 < clusters.length && out.length < limit; i++) {
      out.push(clusters[i]! + clusters[i + 1]!);
    }
    clusters = [];
  };
  for (const ch of word) {
    if (MARK.test(ch)) {
      // A combining mark belongs to the character before it (Thai vowels, tone marks).
      if (clusters.length > 0 && spaced.length === 0) clusters[clusters.length - 1] += ch;
      else spaced += ch;
    } else if (NO_SPACE_SCRIPT.test(ch)) {
      flushSpaced();
      clusters.push(ch);
    } else {
      flushClusters();
      spaced += ch;
    }
  }
  flushSpaced();
  flushClusters();
}
