import { DIGIT_CODES, digitAt, digitOf } from './similarity/token-sketch.ts';

/*
 * Numbers as base-85 digits (the Z85 alphabet of packed sketches: nothing
 * JSON escapes), the building blocks of the compact forms of stored session
 * states and logged operations.
 */

const BASE = 85;
/** Digits of a 32-bit word (85⁵ > 2³²). */
const WORD_WIDTH = 5;

/** A non-negative safe integer (not -0): what a base-85 number holds. */
export function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && !Object.is(n, -0);
}

/** A 32-bit signed integer (not -0), as Bloom filter words are. */
export function isWord(n: unknown): n is number {
  return typeof n === 'number' && (n | 0) === n && !Object.is(n, -0);
}

const INT_MAX = 0x7fffffff;
/** 85⁴: a 53-bit number is written as the digits of n / 85⁴, then 4 digits of n mod 85⁴ (below 2³¹). */
const LOW_SPLIT = BASE ** 4;
const LOW_DIGITS = 4;

/** How many digits a non-negative 31-bit integer takes (0 takes none). */
function digitsOf(n: number): number {
  let length = 0;
  for (let m = n | 0; m > 0; m = (m / BASE) | 0) length++;
  return length;
}

/** Writes the digits of a 31-bit integer `n` so that its last digit is at `last`. */
function writeDigits(codes: number[], last: number, n: number): void {
  for (let m = n | 0, i = last; m > 0; m = (m / BASE) | 0, i--) codes[i] = DIGIT_CODES[m % BASE]!;
}

/** Writes exactly `width` digits of a 31-bit integer `n`, the last at `last`. */
function writeFixed(codes: number[], last: number, n: number, width: number): void {
  let m = n | 0;
  for (let i = 0; i < width; i++) {
    codes[last - i] = DIGIT_CODES[m % BASE]!;
    m = (m / BASE) | 0;
  }
}

/**
 * Writes one record's numbers as character codes, made into one flat string
 * at the end: strings appended piece by piece would be ropes that the final
 * JSON.stringify has to flatten one by one. Not re-entrant (one string at a time).
 */
export const writer = {
  codes: [] as number[],
  used: 0,

  /** `n` as its count of base-85 digits (one digit), then the digits; 0 is one character. */
  count(n: number): void {
    // Beyond 31 bits, split off the low 4 digits with the one division by a
    // double: the rest runs on 31-bit integers, whose division by a constant
    // compiles to a multiplication (a division of doubles is far slower).
    // The quotient stays below 2²⁸, where doubles lie less than 2 / 85⁴
    // apart, so one just under an integer never rounds up to it: the floor
    // is exact for every safe integer.
    const high = n > INT_MAX ? Math.floor(n / LOW_SPLIT) : 0;
    const low = high > 0 ? n - high * LOW_SPLIT : n;
    const codes = this.codes;
    const at = this.used;
    let end: number;
    if (high === 0) {
      end = at + digitsOf(low);
      writeDigits(codes, end, low);
    } else {
      end = at + digitsOf(high) + LOW_DIGITS;
      writeDigits(codes, end - LOW_DIGITS, high);
      writeFixed(codes, end, low, LOW_DIGITS);
    }
    codes[at] = DIGIT_CODES[end - at]!;
    this.used = end + 1;
  },

  digit(d: number): void {
    this.codes[this.used++] = DIGIT_CODES[d]!;
  },

  /** A 32-bit word as 5 digits. */
  word(n: number): void {
    const u = n >>> 0;
    // The top digit takes what is above 85⁴; the other four fit 31 bits.
    const high = Math.floor(u / LOW_SPLIT);
    this.codes[this.used] = DIGIT_CODES[high]!;
    writeFixed(this.codes, this.used + WORD_WIDTH - 1, u - high * LOW_SPLIT, LOW_DIGITS);
    this.used += WORD_WIDTH;
  },

  counts(list: readonly number[]): void {
    this.count(list.length);
    for (const n of list) this.count(n);
  },

  words(list: readonly number[]): void {
    this.count(list.length);
    for (const n of list) this.word(n);
  },

  take(): string {
    let text = '';
    // In chunks: a spread of a long list would overflow the stack.
    for (let i = 0; i < this.used; i += 4096) text += String.fromCharCode.apply(null, this.codes.slice(i, Math.min(this.used, i + 4096)));
    this.used = 0;
    return text;
  },
};

/** Counts below 85 as written, made once: what is written as a string of its own is mostly a name's index, which is small. */
const SMALL_COUNTS = Array.from({ length: BASE }, (_, n) => (n === 0 ? digitOf(0) : digitOf(1) + digitOf(n)));

/** `n` as {@link writer}'s `count` writes it, as a string of its own; uses the writer for `n` of 85 or more, so only while it holds nothing. */
export function countText(n: number): string {
  if (n < BASE) return SMALL_COUNTS[n]!;
  writer.count(n);
  return writer.take();
}

/** Reads a string of numbers written by {@link writer} from the front. */
export class Reader {
  at = 0;
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  count(): number {
    const length = this.digit();
    let n = 0;
    for (let i = 0; i < length; i++) n = n * BASE + this.digit();
    return n;
  }

  digit(): number {
    if (this.at >= this.text.length) throw new RangeError('record ends early');
    const d = digitAt(this.text, this.at++);
    if (d < 0) throw new RangeError('not a base-85 digit');
    return d;
  }

  word(): number {
    let n = 0;
    for (let i = 0; i < WORD_WIDTH; i++) n = n * BASE + this.digit();
    return n | 0;
  }
}
