import { hash32 } from './hash.ts';
import { sampleWindows, tokenize, worthSampling } from './tokenize.ts';

/**
 * Characters a word keeps as its stem. Cutting words to their first five
 * letters is a stemmer that needs no knowledge of the language: inflected and
 * derived forms (retries, retried; private, privately; сопряжение,
 * сопряжения) meet in every alphabet that inflects at the end of words, while
 * different words seldom share five first letters. A final `s` is dropped
 * too, so that short plurals (item, items) meet as well.
 */
const STEM_CHARS = 5;
const DIGIT = /\p{Nd}/u;
const NON_ASCII = /[^\x00-\x7f]/;
const MAX_CHARS = 65_536;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const LOWER_S = 115;

/**
 * The word stem of one token of {@link tokenize}. Tokens holding a digit are
 * kept whole, as they name things (2023, v2, q3); the character pairs of
 * unspaced scripts are short already.
 */
export function stemOf(token: string): string {
  if (DIGIT.test(token)) return token;
  const chars = Array.from(token);
  const stem = chars.length <= STEM_CHARS ? token : chars.slice(0, STEM_CHARS).join('');
  return stem.length > 3 && stem.endsWith('s') ? stem.slice(0, -1) : stem;
}

/**
 * The {@link hash32} of the stem of each token of `text` (at most `limit`
 * tokens, from at most its first 65,536 characters). Two rewordings of one
 * request share more stems than words, so their similarity says more about
 * whether they ask the same thing.
 *
 * With `sample`, a text longer than 2,048 characters gives the stems of 8
 * evenly spaced windows of 256 characters (the first at its start, the last
 * at its end), so the cost stays bounded: a sketch of the stems estimates
 * similarity as well from a couple of kilobytes spread over the text.
 */
export function stemHashes(text: string, limit = 4096, sample = false): number[] {
  const head = text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text;
  const part = sample && worthSampling(head) ? sampled(head) : head;
  if (NON_ASCII.test(part)) return tokenize(part, limit).map((token) => hash32(stemOf(token)));
  return asciiStemHashes(part, limit);
}

/** The sampled windows of a long text (see {@link sampleWindows}), joined by spaces. */
function sampled(text: string): string {
  const bounds = sampleWindows(text);
  const parts: string[] = [];
  for (let w = 0; w < bounds.length; w += 2) parts.push(text.slice(bounds[w], bounds[w + 1]));
  return parts.join(' ');
}

/**
 * {@link stemOf} and {@link hash32} in one pass over ASCII text, without
 * building a string per token: the hash of a word's first 3, 4 and 5
 * characters is noted on the way, and where the word ends the one its stem
 * needs is kept (the whole word's when it holds a digit).
 */
function asciiStemHashes(text: string, limit: number): number[] {
  const out: number[] = [];
  let h = FNV_OFFSET;
  let length = 0;
  let digit = false;
  let h3 = 0;
  let h4 = 0;
  let h5 = 0;
  let last4 = 0; // 4th character
  let last5 = 0; // 5th character
  for (let i = 0; i <= text.length && out.length < limit; i++) {
    let c = i < text.length ? text.charCodeAt(i) : 32;
    const isDigit = c >= 48 && c <= 57;
    if (c >= 65 && c <= 90) c += 32;
    if (isDigit || (c >= 97 && c <= 122)) {
      h = Math.imul(h ^ c, FNV_PRIME);
      length++;
      digit ||= isDigit;
      if (length === 3) h3 = h >>> 0;
      else if (length === 4) {
        h4 = h >>> 0;
        last4 = c;
      } else if (length === 5) {
        h5 = h >>> 0;
        last5 = c;
      }
      continue;
    }
    if (length > 0) {
      if (digit) out.push(h >>> 0);
      else if (length >= STEM_CHARS) out.push(last5 === LOWER_S ? h4 : h5);
      else if (length === 4) out.push(last4 === LOWER_S ? h3 : h4);
      else out.push(h >>> 0);
    }
    h = FNV_OFFSET;
    length = 0;
    digit = false;
  }
  return out;
}
