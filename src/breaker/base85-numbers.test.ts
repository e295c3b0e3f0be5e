import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countText, Reader, writer } from './base85-numbers.ts';
import { digitOf } from './similarity/token-sketch.ts';

/** The form as specified: a digit for the digit count, then the digits, most significant first (0 has none). */
function reference(n: number): string {
  let digits = '';
  for (let m = n; m > 0; m = Math.floor(m / 85)) digits = digitOf(m % 85) + digits;
  return digitOf(digits.length) + digits;
}

/** Numbers around every power of 85 and of 2 that a safe integer reaches, and a spread between them. */
function samples(): number[] {
  const out = [0, 1, Number.MAX_SAFE_INTEGER];
  for (let p = 85; p <= Number.MAX_SAFE_INTEGER; p *= 85) out.push(p - 1, p, p + 1);
  for (let b = 1; b <= 53; b++) out.push(2 ** b - 1, 2 ** b, 2 ** b + 1);
  let seed = 7;
  for (let i = 0; i < 2000; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out.push(Math.floor((seed / 2 ** 32) * 2 ** (1 + (i % 53))));
  }
  return out.filter((n) => Number.isSafeInteger(n));
}

describe('base-85 numbers', () => {
  test('a count is written in the specified form and read back, from 0 to the largest safe integer', () => {
    for (const n of samples()) {
      writer.count(n);
      const text = writer.take();
      assert.equal(text, reference(n), `count ${n}`);
      assert.equal(countText(n), text, `countText ${n}`);
      assert.equal(new Reader(text).count(), n);
    }
  });

  test('counts written one after another are read back in order', () => {
    const numbers = samples().slice(0, 300);
    writer.counts(numbers);
    const reader = new Reader(writer.take());
    assert.deepEqual(
      Array.from({ length: reader.count() }, () => reader.count()),
      numbers,
    );
    assert.equal(reader.at, reader.text.length);
  });

  test('a 32-bit word takes 5 digits and is read back signed', () => {
    for (const n of [0, 1, -1, 84, 85, 2 ** 31 - 1, -(2 ** 31), 85 ** 4, -(85 ** 4), 123_456_789, -987_654_321]) {
      writer.word(n);
      const text = writer.take();
      assert.equal(text.length, 5, `word ${n}`);
      // The digits of the unsigned value, without the count, padded to 5.
      const digits = reference(n >>> 0).slice(1);
      assert.equal(text, digits.padStart(5, digitOf(0)), `word ${n}`);
      assert.equal(new Reader(text).word(), n);
    }
  });

  test('a reader refuses text that ends early or is not digits', () => {
    assert.throws(() => new Reader('3ab').count(), { name: 'RangeError', message: /ends early/ });
    assert.throws(() => new Reader('2a,').count(), { name: 'RangeError', message: /not a base-85 digit/ });
  });
});
