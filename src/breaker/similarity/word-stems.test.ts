import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sketchHashes, sketchOverlap } from './token-sketch.ts';
import { hash32 } from './hash.ts';
import { tokenize } from './tokenize.ts';
import { stemHashes, stemOf } from './word-stems.ts';

describe('word stems', () => {
  test('inflected and derived forms meet, in Latin and Cyrillic script', () => {
    assert.equal(stemOf('retries'), stemOf('retried'));
    assert.equal(stemOf('privately'), stemOf('private'));
    assert.equal(stemOf('сопряжения'), stemOf('сопряжение'));
    assert.equal(stemOf('items'), stemOf('item'));
    assert.equal(stemOf('classes'), stemOf('class'));
    assert.notEqual(stemOf('invoice'), stemOf('payment'));
  });

  test('words holding a digit and short tokens are kept whole', () => {
    assert.equal(stemOf('2023'), '2023');
    assert.equal(stemOf('version2beta'), 'version2beta');
    assert.equal(stemOf('東京'), '東京');
  });

  test("stem hashes equal the hashes of the tokens' stems, in ASCII and in other scripts", () => {
    for (const text of ['Retries of WEBHOOKS: item, items, is, v2, 2023-06 and gas_pipes/x.py', 'Öffne die Dateien 東京の天気 привет 3 items']) {
      assert.deepEqual(
        stemHashes(text),
        tokenize(text).map((t) => hash32(stemOf(t))),
      );
    }
  });

  test('a reworded request shares more stems than words', () => {
    const a = sketchHashes(stemHashes('webhooks retried after a timeout'));
    const b = sketchHashes(stemHashes('retries of a webhook on timeouts'));
    assert.ok(sketchOverlap(a, b) >= 0.75, `overlap ${sketchOverlap(a, b)}`);
  });
});
