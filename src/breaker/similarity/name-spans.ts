import { hash32 } from './hash.ts';

const MAX_CHARS = 1024;
/** Names kept of a query: a query names a few things at most. */
const MAX_QUERY_NAMES = 4;
/** Numbers kept per name: its key, its initials' key, its last word's key. */
const PER_NAME = 3;
/** Names kept of a failed search's answer: the titles it offered instead (ten in a usual "Similar:" list). */
const MAX_OFFERED_NAMES = 12;
/** Small words that join the words of one name (Speed of Sound, Wallace and Gromit, Ludwig van Beethoven). */
const JOINERS = new Set(['of', 'the', 'and', '&', 'de', 'del', 'la', 'le', 'les', 'du', 'des', 'van', 'von', 'der', 'den', 'di', 'da', 'y']);
/** Articles that open a name without naming anything ("The Shallows", "Shallows"). */
const ARTICLES = new Set(['the', 'a', 'an']);
/** Quotes, brackets and punctuation that end a name: a quoted span is one name, a comma separates two. */
const BOUNDARIES = new Set([...'“”«»„'].map((c) => c.charCodeAt(0)));
const ASCII_BOUNDARY = new Uint8Array(128);
for (const c of '",;:!?/|[]{}()') ASCII_BOUNDARY[c.charCodeAt(0)] = 1;

/**
 * The proper names a text names, as keys: each run of capitalised words
 * (joined by small words such as "of" or "and", cut by quotes, brackets,
 * commas and parentheses) is one name. A word's key keeps its first letter
 * and its consonants, doubled letters single, so that a name respelled
 * ("Dogers" / "Dodgers", "Stoopid" / "Stupid", "Grown-Ups" / "Grown Ups")
 * keeps its key; qualifiers in parentheses, numbers and the lowercase words
 * around a name do not change it. Each name gives three numbers: its key,
 * the key of its initials ("Special Air Service" and "SAS" meet there) or 0,
 * and the key of its last word, which in English names what the name is
 * ("Kay Panabaker" and "Stephanie Kay Panabaker" meet there; "Scatman" and
 * "Scatman John" do not). At most `max` names, from the first 1,024
 * characters. With `titles`, only the names that make up a whole title
 * between quotes, brackets or commas count ("Scatman John", "Speed of Sound
 * (song)"): a description that mentions a name ("Idaho Vandals football",
 * "List of urban legends") names no title.
 *
 * One pass over the characters, without regular expressions: this runs on
 * every failed search and its answer.
 */
function names(text: string, max: number, titles = false): number[] {
  const end = Math.min(text.length, MAX_CHARS);
  const out: number[] = [];
  let words: string[] = [];
  let initials = '';
  let joiner = false; // a joiner follows the last name word: kept only if another name word comes
  let clean = true; // titles: every word since the last boundary is part of one name
  let depth = 0; // inside parentheses: a qualifier, skipped
  let start = -1; // start of the current word
  const emit = () => {
    if (words.length > 0 && out.length < max * PER_NAME) {
      const key = hash32(words.join(' ')) || 1;
      let known = false;
      for (let i = 0; i < out.length && !known; i += PER_NAME) known = out[i] === key;
      if (!known) out.push(key, words.length > 1 ? hash32(`^${initials}`) || 1 : 0, words.length > 1 ? hash32(words.at(-1)!) || 1 : key);
    }
    words = [];
    initials = '';
    joiner = false;
  };
  // A word that is no part of a name ends the name, or, among titles, spoils the whole one.
  const other = () => {
    if (titles) {
      clean = false;
      words = [];
      initials = '';
      joiner = false;
    } else emit();
  };
  const word = (from: number, to: number) => {
    while (from < to && !isWordChar(text.charCodeAt(from))) from++;
    while (to > from && !isWordChar(text.charCodeAt(to - 1))) to--;
    if (to - from > 2 && (text.charCodeAt(to - 1) === 115 || text.charCodeAt(to - 1) === 83) && isApostrophe(text.charCodeAt(to - 2))) {
      to -= 2; // a possessive 's
      while (to > from && !isWordChar(text.charCodeAt(to - 1))) to--;
    }
    if (from === to) return other();
    let upper = 0;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) return other();
      if (isUpper(text, i)) upper++;
    }
    const lower = text.slice(from, to).toLowerCase();
    if (isUpper(text, from)) {
      if (words.length === 0 && ARTICLES.has(lower)) return;
      // An acronym is keyed as the initials of the name it stands for.
      words.push(upper === to - from && upper >= 2 && upper <= 6 ? `^${lower}` : skeleton(lower));
      initials += lower[0];
      joiner = false;
      return;
    }
    if (words.length > 0 && !joiner && JOINERS.has(lower)) {
      joiner = true;
      return;
    }
    other();
  };
  for (let i = 0; i <= end; i++) {
    const c = i < end ? text.charCodeAt(i) : 44;
    if (depth > 0) {
      if (c === 40) depth++;
      else if (c === 41) depth--;
      continue;
    }
    const space = c === 32 || (c >= 9 && c <= 13) || c === 0xa0;
    const boundary = c < 128 ? ASCII_BOUNDARY[c] === 1 || (c === 46 && (i + 1 >= end || isSpace(text.charCodeAt(i + 1)))) : BOUNDARIES.has(c);
    // A hyphen inside a word joins two words of one name (Grown-Ups, Grown Ups).
    const hyphen = (c === 45 || c === 0x2010) && i > 0 && isLetter(text, i - 1) && i + 1 < end && isLetter(text, i + 1);
    if (space || boundary || hyphen) {
      if (start >= 0) word(start, i);
      start = -1;
      if (boundary) {
        if (clean) emit();
        words = [];
        initials = '';
        joiner = false;
        clean = true;
      }
      if (c === 40) depth = 1;
      continue;
    }
    if (start < 0) start = i;
  }
  return out;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0;
}

function isApostrophe(c: number): boolean {
  return c === 39 || c === 0x2019;
}

/** Letters, digits, `&`, and every character beyond ASCII (other scripts' letters). */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 38 || c > 127;
}

function isLetter(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c > 127 && text[i]!.toLowerCase() !== text[i]!.toUpperCase());
}

function isUpper(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return c >= 65 && c <= 90;
  const ch = text[i]!;
  return ch !== ch.toLowerCase();
}

/**
 * The names a search query names (see the rules above), at most four, as
 * three numbers each: its key, its initials' key or 0, its last word's key.
 * Empty when it names nothing capitalised.
 */
export function queryNames(query: string): number[] {
  return names(query, MAX_QUERY_NAMES);
}

/**
 * The keys of the titles a failed search's answer offered instead, each
 * quoted and naming one name ("Similar: ['Scatman John', 'Scatman
 * Crothers', …]"), at most twelve, without the query's own names (`own`,
 * see {@link queryNames}): a later search for one of them follows the
 * search's lead.
 */
export function offeredNames(result: string, own: readonly number[]): number[] {
  const offered = names(result, MAX_OFFERED_NAMES + MAX_QUERY_NAMES, true);
  const out: number[] = [];
  for (let at = 0; at < offered.length && out.length < MAX_OFFERED_NAMES; at += PER_NAME) {
    if (!knownName(offered, at, own)) out.push(offered[at]!);
  }
  return out;
}

/**
 * Whether the name at `at` in `names` (see {@link queryNames}) is one of
 * `known`: the same name, or one sharing its initials with an acronym, or
 * its last word.
 */
export function knownName(names: readonly number[], at: number, known: readonly number[]): boolean {
  const key = names[at]!;
  const initials = names[at + 1] ?? 0;
  const head = names[at + 2] ?? key;
  for (let i = 0; i < known.length; i += PER_NAME) {
    const other = known[i]!;
    const otherInitials = known[i + 1] ?? 0;
    if (key === other || head === (known[i + 2] ?? other) || (initials !== 0 && initials === other) || (otherInitials !== 0 && otherInitials === key))
      return true;
  }
  return false;
}

/** How many numbers {@link queryNames} gives per name. */
export const NAME_NUMBERS = PER_NAME;

/** A word's first letter and its consonants, doubled letters single: what respellings of a name keep. */
function skeleton(word: string): string {
  if (word.length <= 2) return word;
  let out = word[0]!;
  let last = word.charCodeAt(0);
  for (let i = 1; i < word.length; i++) {
    const c = word.charCodeAt(i);
    // a, e, i, o, u, y
    if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117 || c === 121 || c === last) continue;
    out += word[i];
    last = c;
  }
  return out;
}

/** Characters of a text {@link nameWords} reads: a request names what it is about near its start. */
const MAX_NAME_WORD_CHARS = 1024;
/**
 * Legal forms that follow a company's name without naming it: "Acme Corp",
 * "Acme Corporation" and "Acme" are one company, "Acme Corp" and "Globex
 * Corp" two.
 */
const LEGAL_FORMS = new Set([
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'ltd',
  'limited',
  'llc',
  'llp',
  'plc',
  'gmbh',
  'ag',
  'sa',
  'nv',
  'bv',
  'pty',
  'oy',
  'ab',
  'spa',
  'srl',
]);
/** Punctuation around a word that is not part of it. */
const WORD_EDGES = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
const HAS_UPPER = /\p{Lu}/u;
const HAS_LOWER = /\p{Ll}/u;
const HAS_DIGIT = /\p{N}/u;
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
/** Quotes and brackets that may close a sentence after its full stop. */
const CLOSERS = new Set([...`"')]”’»`].map((c) => c.charCodeAt(0)));
const POSSESSIVE = /['’][sS]$/u;
/** Words that are paths, file names or addresses: {@link textIdentity} reads those. */
const NOT_A_NAME_WORD = /[/\\._@=#]/u;
const LINES = /\r?\n|\r/;
const SPACES = /\s+/;
const HYPHENS = /[-‐]/;

/**
 * The words of the proper names a request names, lower-cased, at most `max`
 * of them, in order: "Find the CEO of Silverleaf Dental Group" names `ceo`,
 * `silverleaf`, `dental`, `group`. A word is part of a name when it is
 * capitalised (Acme, McKinsey, IBM, iPhone) and holds no digit, slash or dot
 * (ids, years, paths and file names are what a text's identity reads).
 *
 * A word that opens the text, a line or a sentence (or follows a label's
 * colon) is capitalised whatever it is ("Find", "Please", "Review"): it
 * counts only when the next word of its line is capitalised too and has
 * lower-case letters (Acme Corp, Silverleaf Dental Group), or when nothing
 * follows it in its line (a value that is only a name). Articles, one-letter
 * words ("I"), a possessive 's and legal forms (Inc, Corp, GmbH) name
 * nothing. Reads the first 1,024 characters.
 */
export function nameWords(text: string, max = 8): string[] {
  const head = text.length > MAX_NAME_WORD_CHARS ? text.slice(0, MAX_NAME_WORD_CHARS) : text;
  const out: string[] = [];
  if (!HAS_UPPER.test(head)) return out;
  const add = (word: string) => {
    if (out.length < max && !out.includes(word)) out.push(word);
  };
  for (const line of head.split(LINES)) {
    let opens = true;
    // A capitalised word that opens a sentence, kept if a name goes on after it.
    let pending: string | null = null;
    for (const chunk of line.split(SPACES)) {
      if (out.length >= max) return out;
      if (chunk === '') continue;
      const upper = hasUpper(chunk);
      if (pending === null && upper === 0) {
        // Most words: no name, no name pending; only whether a sentence ends here matters (a bullet is no word).
        if (endsSentence(chunk)) opens = true;
        else if (hasWordChar(chunk)) opens = false;
        continue;
      }
      // A hyphen inside a word joins two words of one name (Coca-Cola); with a digit it is an id (PR-1234, COVID-19).
      const digits = HAS_DIGIT.test(chunk);
      for (const part of digits || !chunk.includes('-') ? [chunk] : chunk.split(HYPHENS)) {
        let word = part.replace(WORD_EDGES, '');
        if (word === '') continue; // a dash, an arrow, a bullet
        const capitalised = HAS_UPPER.test(word);
        if (pending !== null) {
          if (isUpper(word, 0) && HAS_LOWER.test(word)) add(pending);
          pending = null;
        }
        const initial = opens;
        opens = false;
        if (!capitalised || digits || NOT_A_NAME_WORD.test(word)) continue;
        if (POSSESSIVE.test(word)) word = word.slice(0, -2);
        if (word.length < 2) continue;
        const lower = word.toLowerCase();
        if (ARTICLES.has(lower) || LEGAL_FORMS.has(lower)) continue;
        if (initial) pending = lower;
        else add(lower);
      }
      if (endsSentence(chunk)) opens = true;
    }
    if (pending !== null) add(pending);
    if (out.length >= max) break;
  }
  return out;
}

/** 1 when a word holds an upper-case letter, 0 when not (read by char codes while it is ASCII). */
function hasUpper(word: string): 0 | 1 {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 65 && c <= 90) return 1;
    if (c > 127) return HAS_UPPER.test(word) ? 1 : 0;
  }
  return 0;
}

/** Whether a word holds a letter or a digit (a dash, an arrow or a bullet does not). */
function hasWordChar(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return true;
    if (c > 127) return HAS_WORD_CHAR.test(word);
  }
  return false;
}

/** Whether a word ends a sentence, or a label before its value ("Company: Acme"): `.`, `!`, `?` or `:`, then closing quotes or brackets. */
function endsSentence(word: string): boolean {
  let i = word.length - 1;
  while (i >= 0 && CLOSERS.has(word.charCodeAt(i))) i--;
  const c = i >= 0 ? word.charCodeAt(i) : 0;
  return c === 46 || c === 33 || c === 63 || c === 58;
}

/** Words that open a question or a request, capitalised by grammar rather than because they name something. */
const REQUEST_WORDS = new Set([
  'what',
  'who',
  'whom',
  'whose',
  'when',
  'where',
  'which',
  'why',
  'how',
  'is',
  'are',
  'was',
  'were',
  'do',
  'does',
  'did',
  'can',
  'could',
  'should',
  'would',
  'will',
  'has',
  'have',
  'had',
  'find',
  'search',
  'list',
  'show',
  'get',
  'give',
  'tell',
  'look',
  'lookup',
  'in',
  'on',
  'at',
  'for',
  'of',
  'to',
  'from',
  'with',
  'about',
  'and',
  'or',
  'not',
]);
const QUERY_WORD_SPLIT = /[^\p{L}\p{N}'’&]+/u;
/** Most name words, and most words, kept of a query. */
const MAX_QUERY_NAME_WORDS = 8;
const MAX_QUERY_WORDS = 16;

/** What a query names things with, and every word it holds, as keys (see {@link queryNameWords}). */
export interface QueryNameWords {
  /** The keys of its name words; empty when it names nothing. */
  readonly names: number[];
  /**
   * The key of its first word when that is capitalised and alone ("Acme annual
   * revenue", "Password reset steps"): a name, or only the start of a
   * sentence; 0 when there is none.
   */
  readonly first: number;
  /** The keys of its words, when it has names or such a first word (else empty). */
  readonly words: number[];
}

/**
 * The keys of the capitalised words a search query names things with
 * ("Marie Curie Nobel lecture": `marie`, `curie`, `nobel`), keyed as
 * respellings keep them (see skeleton), at most eight; a capitalised first
 * word on its own, which may be a name or just the start of a sentence, apart
 * (`first`); and, when there are any, the keys of all its words, at most
 * sixteen, so that a capitalised word another query holds in lower case is
 * seen to be shared. An acronym is keyed as the initials it stands for, and a
 * run of capitalised words adds the key of its initials too, so that "SAS"
 * and "Special Air Service" share one. Words holding a digit, articles, legal
 * forms and the words that open a question or a request ("What", "Find") are
 * no name words.
 */
export function queryNameWords(query: string): QueryNameWords {
  const head = query.length > MAX_CHARS ? query.slice(0, MAX_CHARS) : query;
  // Most queries are in lower case: nothing capitalised, no name, nothing more to read.
  if (!HAS_UPPER.test(head)) return { names: [], first: 0, words: [] };
  const names: number[] = [];
  const words: number[] = [];
  const add = (into: number[], max: number, key: number) => {
    if (into.length < max && !into.includes(key)) into.push(key);
  };
  // The run of capitalised words being read: its keys, its initials, and whether it opened the query.
  let run: number[] = [];
  let initials = '';
  let opening = false;
  let first = 0;
  let seen = 0;
  const endRun = () => {
    if (opening && run.length === 1 && initials.length === 1) first = run[0]!;
    else for (const key of run) add(names, MAX_QUERY_NAME_WORDS, key);
    if (initials.length >= 2) {
      const key = hash32(`^${initials}`) || 1;
      add(names, MAX_QUERY_NAME_WORDS, key);
      add(words, MAX_QUERY_WORDS, key);
    }
    run = [];
    initials = '';
    opening = false;
  };
  for (const chunk of head.split(QUERY_WORD_SPLIT)) {
    const word = chunk.replace(POSSESSIVE, '').replace(WORD_EDGES, '');
    if (word === '') continue;
    const lower = word.toLowerCase();
    const acronym = word.length >= 2 && word.length <= 6 && isUpper(word, 0) && word === word.toUpperCase() && !HAS_DIGIT.test(word);
    const key = hash32(acronym ? `^${lower}` : skeleton(lower)) || 1;
    add(words, MAX_QUERY_WORDS, key);
    const position = seen++;
    if (word.length < 2 || !isUpper(word, 0) || HAS_DIGIT.test(word) || ARTICLES.has(lower) || REQUEST_WORDS.has(lower) || LEGAL_FORMS.has(lower)) {
      endRun();
      continue;
    }
    if (acronym) {
      endRun();
      add(names, MAX_QUERY_NAME_WORDS, key);
      continue;
    }
    if (run.length === 0) opening = position === 0;
    run.push(key);
    initials += lower[0];
  }
  endRun();
  return names.length === 0 && first === 0 ? { names, first, words: [] } : { names, first, words };
}
