import { digitAt, digitOf } from './similarity/token-sketch.ts';

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

const DIGIT_CODES = Array.from({ length: BASE }, (_, d) => digitOf(d).charCodeAt(0));

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
    let length = 0;
    for (let m = n; m > 0; m = Math.floor(m / BASE)) length++;
    const codes = this.codes;
    codes[this.used] = DIGIT_CODES[length]!;
    for (let i = length; i > 0; i--) {
      codes[this.used + i] = DIGIT_CODES[n % BASE]!;
      n = Math.floor(n / BASE);
    }
    this.used += length + 1;
  },

  digit(d: number): void {
    this.codes[this.used++] = DIGIT_CODES[d]!;
  },

  /** A 32-bit word as 5 digits. */
  word(n: number): void {
    let u = n >>> 0;
    for (let i = WORD_WIDTH - 1; i >= 0; i--) {
      this.codes[this.used + i] = DIGIT_CODES[u % BASE]!;
      u = Math.floor(u / BASE);
    }
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

  text(text: string, from: number, to: number): void {
    for (let i = from; i < to; i++) this.codes[this.used++] = text.charCodeAt(i);
  },

  take(): string {
    let text = '';
    // In chunks: a spread of a long list would overflow the stack.
    for (let i = 0; i < this.used; i += 4096) text += String.fromCharCode.apply(null, this.codes.slice(i, Math.min(this.used, i + 4096)));
    this.used = 0;
    return text;
  },
};

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
