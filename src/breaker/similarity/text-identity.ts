import { hash32 } from './hash.ts';
import { normalizeResult } from './result-hash.ts';
import { normalizeText } from './tokenize.ts';

// A name is at most 255 characters, as file systems have it: unbounded, a long run of name characters without
// a dot would be read again from each of them.
const FILE_NAME = /[\p{L}\p{N}_-]{1,255}\.\p{L}[\p{L}\p{N}]{0,7}(?![\p{L}\p{N}])/gu;
/** `e.g`, `i.e`: a letter, a dot, a letter is an abbreviation, not a file. */
const ABBREVIATION = /^\p{L}\.\p{L}$/u;
/** Punctuation around a word that is not part of what it names. */
const EDGE_CHARS = '"\'`<>()[]{},;:.!?*|-';
const EDGE_CLASS = `[${EDGE_CHARS.replace(/[\]\\-]/g, '\\$&')}]`;
/** {@link EDGE_CHARS} at a word's start, and at its end (read from the start of the run only). */
const EDGES = new RegExp(`^${EDGE_CLASS}+|(?<!${EDGE_CLASS})${EDGE_CLASS}+$`, 'g');
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
const NON_ASCII = /[^\x00-\x7f]/;
const MAX_WORDS = 16;
const VOLATILE_MIN_CHARS = 8;
const MAX_CHARS = 16_384;

/**
 * The identity of a free-text request (a sub-agent task, a search query): a
 * hash of the set of things it names exactly, or 0 when it names none. Two
 * requests with different identities are about different things however
 * alike their wording ("Review src/a.ts for bugs" and "Review src/b.ts for
 * bugs", "Translate chunk 2/6" and "Translate chunk 3/6", revenue in 2022
 * and in 2023), as an id or a path argument makes two tool calls different.
 *
 * Named exactly are: paths and URLs (words with a `/`), file names
 * (`money.ts`, `042_add_refunds.sql`) and numbers (years, ids, versions,
 * quarters). Timestamps, UUIDs and other values that change on every call
 * without naming anything are left out. At most the first 16 things named
 * count, which bounds the cost on long texts.
 */
export function textIdentity(text: string): number {
  // NFKC first (full-width digits and letters become ASCII), so that a scan of char codes finds every digit.
  const clipped = text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text;
  const normalized = NON_ASCII.test(clipped) ? clipped.normalize('NFKC') : clipped;
  const words = new Set<string>();
  const add = (word: string) => {
    if (words.size < MAX_WORDS && HAS_WORD_CHAR.test(word)) words.add(normalizeText(word));
  };
  let start = 0;
  let candidate = false;
  for (let i = 0; i <= normalized.length; i++) {
    const c = i < normalized.length ? normalized.charCodeAt(i) : 32;
    if (!isSpace(c)) {
      // Most words name nothing: only those holding a digit, a slash or a dot are looked at.
      candidate ||= (c >= 48 && c <= 57) || c === 47 || c === 46;
      continue;
    }
    if (candidate) {
      const raw = normalized.slice(start, i);
      const chunk = withoutEdges(mayBeVolatile(raw) ? normalizeResult(raw) : raw);
      if (chunk.includes('/')) add(chunk);
      else {
        // exec loops rather than matchAll, which copies the pattern on every call.
        let match: RegExpExecArray | null;
        FILE_NAME.lastIndex = 0;
        if (chunk.includes('.')) while ((match = FILE_NAME.exec(chunk)) !== null) if (!ABBREVIATION.test(match[0])) add(match[0]);
        addNumbers(chunk, words);
      }
      if (words.size >= MAX_WORDS) break;
    }
    start = i + 1;
    candidate = false;
  }
  if (words.size === 0) return 0;
  return hash32([...words].sort().join(' ')) || 1;
}

const EDGE_CODES = new Set(Array.from(EDGE_CHARS, (c) => c.charCodeAt(0)));

/** The word without the punctuation at its ends; most words have none, and are not searched for it. */
function withoutEdges(word: string): string {
  if (word === '' || (!EDGE_CODES.has(word.charCodeAt(0)) && !EDGE_CODES.has(word.charCodeAt(word.length - 1)))) return word;
  return word.replace(EDGES, '');
}

/**
 * Adds the numbers of `chunk` to `words` (up to MAX_WORDS): runs of ASCII
 * digits, joined by single `.`, `,` or `:` (`2.1.0`, `1,200`, `12:30`). Read
 * by hand: most candidate words hold one, and a regex costs more per word
 * than the rest of the scan. A number is already in its normal form.
 */
function addNumbers(chunk: string, words: Set<string>): void {
  for (let i = 0; i < chunk.length && words.size < MAX_WORDS; ) {
    if (!isDigit(chunk.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < chunk.length && isDigit(chunk.charCodeAt(i))) i++;
    while (i + 1 < chunk.length && isNumberSeparator(chunk.charCodeAt(i)) && isDigit(chunk.charCodeAt(i + 1))) {
      i++;
      while (i < chunk.length && isDigit(chunk.charCodeAt(i))) i++;
    }
    words.add(chunk.slice(start, i));
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** `.`, `,` and `:`. */
function isNumberSeparator(c: number): boolean {
  return c === 46 || c === 44 || c === 58;
}

/**
 * Whether a word may hold a timestamp, a UUID, an address or an epoch time:
 * only those are long, and hold a dash, a colon, `0x` or ten digits in a row.
 */
function mayBeVolatile(word: string): boolean {
  if (word.length < VOLATILE_MIN_CHARS) return false;
  let digits = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c === 45 || c === 58 || (c === 48 && (word.charCodeAt(i + 1) | 32) === 120)) return true;
    digits = isDigit(c) ? digits + 1 : 0;
    if (digits === 10) return true;
  }
  return false;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
}
