import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hash32, jaccard, textSimilarity, tokenHashes, tokenize } from './index.ts';
import { scanText, textHash } from './tokenize.ts';

describe('tokenize', () => {
  test('keeps words of every spaced script, lower-cased', () => {
    assert.deepEqual(tokenize('Hello Wörld, привет мир! Γειά σου'), ['hello', 'wörld', 'привет', 'мир', 'γειά', 'σου']);
  });

  test('keeps combining marks inside words (Devanagari)', () => {
    assert.deepEqual(tokenize('नमस्ते दुनिया'), ['नमस्ते', 'दुनिया']);
  });

  test('splits Japanese into character bigrams instead of one opaque word', () => {
    assert.deepEqual(tokenize('東京の天気'), ['東京', '京の', 'の天', '天気']);
  });

  test('two different Japanese sentences do not look identical', () => {
    const a = '東京から大阪までの新幹線の時刻表を調べてください';
    const b = '明日の札幌の天気予報を教えてください';
    assert.ok(textSimilarity(a, b) < 0.3, `similarity ${textSimilarity(a, b)}`);
    assert.equal(textSimilarity(a, a), 1);
  });

  test('Thai is split into bigrams of characters with their marks', () => {
    const tokens = tokenize('สวัสดีครับ');
    assert.ok(tokens.length > 1);
    assert.ok(tokens.every((t) => t.length >= 2));
  });

  test('full-width letters and digits compare equal to ASCII ones', () => {
    assert.deepEqual(tokenize('ＡＢＣ１２３'), tokenize('abc123'));
  });

  test('mixed scripts in one run keep the Latin part as a word', () => {
    assert.deepEqual(tokenize('iPhone用ケース'), ['iphone', '用ケ', 'ケー', 'ース']);
  });

  test('token hashes of long ASCII text are the hashes of its tokens, up to the limit', () => {
    const separators = ['', ',', '  ', '\n', '--', ' (x) ', '_'];
    const text = `  ${Array.from({ length: 900 }, (_, i) => `Word${i % 37}${separators[i % separators.length]}`).join(' ')}!`;
    assert.deepEqual(tokenHashes(text), tokenize(text).map(hash32));
    assert.deepEqual(tokenHashes(text, 10), tokenize(text).slice(0, 10).map(hash32));
  });

  test('a scan of ASCII text gives the hashes of its tokens and of its content, at every length', () => {
    // Seeded draws over letters of both cases, digits and separators, so that words end at every offset of a four-byte step.
    let seed = 7;
    const draw = (n: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return (seed >>> 8) % n;
    };
    const alphabet = 'aZ9_ -.,\n\t/(x)';
    for (let length = 0; length <= 9_000; length += length < 64 ? 1 : length < 2_200 ? 37 : 997) {
      for (let k = 0; k < 3; k++) {
        const text = Array.from({ length }, () => alphabet[draw(alphabet.length)]).join('');
        const expected = tokenize(text).map(hash32);
        assert.deepEqual(tokenHashes(text), expected, `length ${length}`);
        assert.deepEqual(tokenHashes(text, 7), expected.slice(0, 7), `length ${length}, 7 tokens`);
        const scanned = scanText(text, true);
        // Longer texts are sampled: their tokens are those of the windows, not of all of the text.
        if (length <= 2_048) assert.deepEqual(Array.from(scanned.tokens), expected, `length ${length}`);
        assert.equal(scanned.content, textHash(text), `length ${length}`);
      }
    }
    assert.deepEqual(Array.from(scanText('Word, word; WORD').tokens), [hash32('word'), hash32('word'), hash32('word')]);
  });

  test('punctuation-only text has no tokens, and two empty texts are identical', () => {
    assert.deepEqual(tokenize('!!! ---'), []);
    assert.equal(jaccard([], []), 1);
  });
});

describe('textHash', () => {
  test('tells texts apart by every character, at any length, in any script', () => {
    const encoded = 'x'.repeat(60_000);
    const long = 'x'.repeat(70_000);
    for (const [a, b] of [
      ['status: queued', 'status: queuee'],
      ['Grüße aus Köln', 'Grüsse aus Köln'],
      ['東京の天気', '東京の天氣'],
      [encoded, `${encoded.slice(1)}y`],
      [long, `${long.slice(1)}y`],
      ['', ' '],
    ] as const) {
      const hash = textHash(a);
      assert.notEqual(textHash(b), hash, `${a.slice(0, 20)} / ${b.slice(0, 20)}`);
      assert.equal(textHash(a), hash, 'the same text hashes alike after another one');
    }
    // A short text hashed before and after a longer one gets the same hash: the scratch space both are encoded into holds nothing over.
    const before = textHash('after a long one');
    textHash(encoded);
    assert.equal(textHash('after a long one'), before);
  });
});
