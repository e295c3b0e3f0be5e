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

import { hash32, hash53 } from './hash.ts';

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

/**
 * The {@link hash32} of each token of {@link tokenize}, computed without
 * building the token strings for ASCII text (the common case for arguments
 * and code), which makes fingerprinting large inputs several times cheaper.
 */
export function tokenHashes(text: string, limit = 4096): number[] {
  return scanText(text, limit).tokens;
}

/** Token hashes of a text and a 53-bit hash of its whole content, in one pass. */
export interface ScannedText {
  readonly tokens: number[];
  /** Hash of the exact text (every character, not only the tokens). */
  readonly content: number;
}

/**
 * One pass over `text` giving its token hashes (as {@link tokenHashes}) and a
 * hash of its exact content, so large arguments are read once, not three
 * times (stringify, hash, tokenise).
 */
export function scanText(text: string, limit = 4096): ScannedText {
  if (NON_ASCII.test(text)) return { tokens: tokenize(text, limit).map(hash32), content: hash53(text) };
  const tokens: number[] = [];
  let h = 0x811c9dc5;
  let inWord = false;
  let a = 0x9e3779b9 ^ text.length;
  let b = 0x85ebca6b;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 2654435761);
    b = Math.imul(b ^ c, 1597334677);
    const upper = c >= 65 && c <= 90;
    if (upper || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (upper) c += 32;
      h ^= c;
      h = Math.imul(h, 0x01000193);
      inWord = true;
    } else if (inWord) {
      if (tokens.length < limit) tokens.push(h >>> 0);
      h = 0x811c9dc5;
      inWord = false;
    }
  }
  if (inWord && tokens.length < limit) tokens.push(h >>> 0);
  a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
  return { tokens, content: 4294967296 * (2097151 & b) + (a >>> 0) };
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
