import { hash32 } from './hash.ts';

const MAX_CHARS = 1024;
/** Names kept of a query: a query names a few things at most. */
const MAX_QUERY_NAMES = 4;
/** Numbers kept per name: its key, its initials' key, its last word's key. */
const PER_NAME = 3;
/** Names kept of a failed search's answer: the titles it offered instead (ten in a usual "Similar:" list). */
const MAX_OFFERED_NAMES = 12;
/** Parenthesised qualifiers ("(song)", "(2014 film)") narrow a name; they are not part of it. */
const PARENTHESISED = /\([^()]*\)/g;
/** Quotes, brackets and punctuation that end a name: a quoted span is one name, a comma separates two. */
const BOUNDARY = /["“”«»„,;:!?/|[\]{}]|\.(?=\s|$)|\s[-–—]\s/g;
/** A hyphen inside a word joins two words of one name (Grown-Ups, Grown Ups). */
const INNER_HYPHEN = /(?<=\p{L})[-‐](?=\p{L})/gu;
const UPPER = /^\p{Lu}/u;
const ALL_UPPER = /^\p{Lu}{2,6}$/u;
const DIGIT = /\p{Nd}/u;
/** Punctuation around a word that is not part of it; a possessive `'s` is dropped with it. */
const EDGES = /^[^\p{L}\p{N}&]+|(?:['’]s)?[^\p{L}\p{N}&]*$/gu;
/** Small words that join the words of one name (Speed of Sound, Wallace and Gromit, Ludwig van Beethoven). */
const JOINERS = new Set(['of', 'the', 'and', '&', 'de', 'del', 'la', 'le', 'les', 'du', 'des', 'van', 'von', 'der', 'den', 'di', 'da', 'y']);
/** Articles that open a name without naming anything ("The Shallows", "Shallows"). */
const ARTICLES = new Set(['the', 'a', 'an']);
const VOWELS = /[aeiouy]/g;
const REPEATS = /(.)\1+/g;

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
 * characters.
 */
function names(text: string, max: number): number[] {
  const clipped = text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text;
  const spaced = clipped.replace(PARENTHESISED, ' , ').replace(BOUNDARY, ' , ').replace(INNER_HYPHEN, ' ');
  const out: number[] = [];
  let words: string[] = [];
  let initials = '';
  let joiner = false; // a joiner follows the last name word: kept only if another name word comes
  const close = () => {
    if (words.length > 0 && out.length < max * PER_NAME) {
      const key = hash32(words.join(' ')) || 1;
      const initialsKey = words.length > 1 ? hash32(`^${initials}`) || 1 : 0;
      const headKey = words.length > 1 ? hash32(words.at(-1)!) || 1 : key;
      if (!out.some((k, i) => i % PER_NAME === 0 && k === key)) out.push(key, initialsKey, headKey);
    }
    words = [];
    initials = '';
    joiner = false;
  };
  for (const raw of spaced.split(/\s+/)) {
    if (raw === '') continue;
    if (raw === ',') {
      close();
      continue;
    }
    const word = raw.replace(EDGES, '');
    const lower = word.toLowerCase();
    if (word === '' || DIGIT.test(word)) {
      close();
      continue;
    }
    if (UPPER.test(word)) {
      if (words.length === 0 && ARTICLES.has(lower)) continue;
      // An acronym is keyed as the initials of the name it stands for.
      words.push(ALL_UPPER.test(word) ? `^${lower}` : skeleton(lower));
      initials += lower[0];
      joiner = false;
      continue;
    }
    if (words.length > 0 && !joiner && JOINERS.has(lower)) {
      joiner = true;
      continue;
    }
    close();
  }
  close();
  return out;
}

/**
 * The names a search query names (see the rules above), at most four, as
 * three numbers each: its key, its initials' key or 0, its last word's key.
 * Empty when it names nothing capitalised.
 */
export function queryNames(query: string): number[] {
  return names(query, MAX_QUERY_NAMES);
}

/** A quoted title in a search's answer ("Similar: ['Scatman John', …]", "a different page (\"St James's Palace\")"). */
const QUOTED = /'([^'\n]{1,80})'|"([^"\n]{1,80})"/g;

/**
 * The keys of the titles a failed search's answer offered instead, each
 * quoted and naming one name ("Similar: ['Scatman John', 'Scatman
 * Crothers', …]"), at most twelve, without the query's own names: a later
 * search for one of them follows the search's lead.
 */
export function offeredNames(result: string, query: string): number[] {
  const own = names(query, MAX_QUERY_NAMES);
  const clipped = result.length > MAX_CHARS ? result.slice(0, MAX_CHARS) : result;
  const out: number[] = [];
  QUOTED.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = QUOTED.exec(clipped)) !== null && out.length < MAX_OFFERED_NAMES) {
    const text = match[1] ?? match[2] ?? '';
    if (!wholeName(text)) continue;
    const title = names(text, 2);
    if (title.length !== PER_NAME) continue;
    const key = title[0]!;
    if (!out.includes(key) && !knownName(title, 0, own)) out.push(key);
  }
  return out;
}

/**
 * Whether a title is one name through and through ("Scatman John", "Wallace
 * & Gromit's Thrill-O-Matic", "Speed of Sound (song)"), rather than a
 * description that mentions one ("Idaho Vandals football", "List of urban
 * legends").
 */
function wholeName(title: string): boolean {
  const words = title.replace(PARENTHESISED, ' ').replace(INNER_HYPHEN, ' ').split(/\s+/);
  let named = false;
  for (const raw of words) {
    if (raw === '') continue;
    const word = raw.replace(EDGES, '');
    if (word === '' || DIGIT.test(word)) return false;
    if (UPPER.test(word)) named = true;
    else if (!named || !JOINERS.has(word.toLowerCase())) return false;
  }
  return named;
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
  return (word[0]! + word.slice(1).replace(VOWELS, '')).replace(REPEATS, '$1');
}
