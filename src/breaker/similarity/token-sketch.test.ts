import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jaccard, sketchHashes, sketchJaccard, sketchText, tokenHashes, tokenize, hash32 } from './index.ts';
import { packSketch, SKETCH_HASH_BITS, sketchOverlap, unpackSketch } from './token-sketch.ts';

describe('token sketches', () => {
  test('a sketch keeps the k smallest distinct hashes, cut to their top bits, ascending', () => {
    const cut = 2 ** (32 - SKETCH_HASH_BITS);
    const hashes = [50, 10, 40, 10, 30, 20, 60, 5].map((h) => h * cut);
    assert.deepEqual(sketchHashes(hashes, 4), [5, 10, 20, 30]);
    assert.deepEqual(sketchHashes(hashes, 32), [5, 10, 20, 30, 40, 50, 60]);
    assert.deepEqual(sketchHashes([7 * cut, 7 * cut + 1, 7 * cut + cut - 1]), [7], 'hashes differing only in the cut bits are one');
  });

  test('a sketch of many tokens is the same as sorting them all, whatever their spread and repeats', () => {
    const reference = (hashes: readonly number[], k: number) =>
      [...new Set(hashes.map((h) => h >>> (32 - SKETCH_HASH_BITS)))].sort((x, y) => x - y).slice(0, k);
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let round = 0; round < 3000; round++) {
      const k = [1, 4, 16, 32, 84][round % 5]!;
      const length = Math.floor(random() * (round % 10 === 0 ? 5000 : 400));
      // A small vocabulary repeats tokens; a shift crowds every hash into the lowest bucket of the top bits.
      const vocabulary = 1 + Math.floor(random() * 300);
      const shift = [0, 0, 0, 4, 8, 20][round % 6]!;
      const hashes = Array.from({ length }, () => (Math.imul(Math.floor(random() * vocabulary) + 1, 2654435761) >>> 0) >>> shift);
      assert.deepEqual(sketchHashes(hashes, k), reference(hashes, k), `${length} tokens, k ${k}, shift ${shift}`);
    }
  });

  test('below the sketch size, similarity is the exact Jaccard of the token sets', () => {
    const a = 'the quick brown fox jumps over the lazy dog';
    const b = 'the quick brown cat jumps over the lazy dog';
    assert.equal(sketchJaccard(sketchText(a), sketchText(b)), jaccard(tokenize(a), tokenize(b)));
  });

  test('above it, the estimate stays close to the exact value', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const a = words.join(' ');
    const b = words
      .slice(0, 300)
      .concat(Array.from({ length: 100 }, (_, i) => `x${i}`))
      .join(' ');
    const exact = jaccard(tokenize(a), tokenize(b));
    const estimate = sketchJaccard(sketchText(a), sketchText(b));
    assert.ok(Math.abs(estimate - exact) < 0.2, `estimate ${estimate} vs exact ${exact}`);
  });

  test('cut hashes keep unrelated long texts apart', () => {
    // Cut to too few bits, the smallest hashes of two long texts would collide and read as alike.
    const text = (prefix: string) => Array.from({ length: 4000 }, (_, i) => `${prefix}${i}`).join(' ');
    let total = 0;
    const pairs = 20;
    for (let p = 0; p < pairs; p++) total += sketchJaccard(sketchText(text(`a${p}x`)), sketchText(text(`b${p}y`)));
    assert.ok(total / pairs < 0.02, `mean similarity ${total / pairs}`);
  });

  test('overlap is the share of the smaller set found in the larger one', () => {
    const short = sketchText('refund policy');
    const long = sketchText('what is the refund policy for damaged items');
    assert.equal(sketchOverlap(short, long), 1);
    assert.ok(sketchJaccard(short, long) < 0.3);
    assert.equal(sketchOverlap(sketchText('refund policy'), sketchText('shipping times')), 0);
  });

  test('overlap falls back to Jaccard when a sketch is full (its set is not known)', () => {
    const many = sketchText(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '));
    const few = sketchText('w1 w2 w3');
    assert.equal(sketchOverlap(many, few), sketchJaccard(many, few));
  });

  test('token hashes equal the hashes of the tokens, in ASCII and in other scripts', () => {
    for (const text of ['Open FILE.py at line 120, then GOTO 300', 'Öffne die Datei 東京の天気 привет']) {
      assert.deepEqual(tokenHashes(text), tokenize(text).map(hash32));
    }
  });

  test('a packed sketch holds the same hashes in a JSON-safe string, and compares the same', () => {
    const edges = [0, 1, 84, 85, 7224, 7225, 2 ** 18, 2 ** SKETCH_HASH_BITS - 1];
    const packed = packSketch(edges);
    assert.equal(packed.length, 1 + edges.length * 3);
    assert.deepEqual(unpackSketch(packed), edges);
    assert.equal(JSON.stringify(packed), `"${packed}"`);
    assert.equal(packSketch([]), '');
    assert.deepEqual(unpackSketch(''), []);
    const a = sketchText('open the config file and read the database settings for production');
    const b = sketchText('read the production database settings from the config file again');
    const many = sketchText(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '));
    assert.deepEqual(unpackSketch(packSketch(many)), many);
    assert.equal(sketchJaccard(packSketch(a), packSketch(b)), sketchJaccard(a, b));
    assert.equal(sketchJaccard(packSketch(a), b), sketchJaccard(a, b));
    assert.equal(sketchOverlap(packSketch(a), packSketch(b)), sketchOverlap(a, b));
    assert.equal(sketchJaccard(packSketch(many), packSketch(a)), sketchJaccard(many, a));
    assert.equal(sketchJaccard(packSketch(many), ''), 0);
    assert.equal(sketchJaccard('', ''), 1);
  });

  test('sketches of full 32-bit hashes, as older versions stored them, compare as their cut hashes', () => {
    const text = 'open the config file and read the database settings for production';
    const full = sketchHashes(tokenHashes(text), 4096).map((h) => h * 2 ** (32 - SKETCH_HASH_BITS));
    const other = sketchText('read the production database settings from the config file again');
    // The 5-character form of 32-bit hashes, most significant digit first.
    const digits = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
    const legacy = full.map((h) => Array.from({ length: 5 }, (_, d) => digits[Math.floor(h / 85 ** (4 - d)) % 85]).join('')).join('');
    const sketch = sketchText(text, 4096);
    assert.deepEqual(unpackSketch(full), sketch);
    assert.deepEqual(unpackSketch(legacy), sketch);
    assert.equal(sketchJaccard(legacy, packSketch(other)), sketchJaccard(sketch, other));
    assert.equal(sketchJaccard(full, packSketch(other)), sketchJaccard(sketch, other));
  });
});
