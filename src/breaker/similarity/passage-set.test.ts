import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { passageSetHash } from './passage-set.ts';

describe('passage sets', () => {
  const a = 'Refunds are issued within 14 days of the return.';
  const b = 'Damaged items may be returned free of charge.';

  test('the same passages in another order, with other scores, are the same set', () => {
    assert.equal(passageSetHash([`(score 0.82) ${a}`, `(score 0.77) ${b}`]), passageSetHash([`(score 0.79) ${b}`, `(score 0.81) ${a}`]));
  });

  test('another passage makes another set, and integers in a passage still tell passages apart', () => {
    assert.notEqual(passageSetHash([a, b]), passageSetHash([a]));
    assert.notEqual(passageSetHash([a, b]), passageSetHash([a, b, a]), 'a passage retrieved twice counts twice');
    assert.notEqual(passageSetHash([a, b]), passageSetHash([a, b.replace('charge', 'cost')]));
    assert.notEqual(passageSetHash(['Revenue in 2022 was high.']), passageSetHash(['Revenue in 2023 was high.']));
  });

  test('results not reported are null; nothing retrieved is 0 (no information)', () => {
    assert.equal(passageSetHash(undefined), null);
    assert.equal(passageSetHash([]), 0);
    assert.ok(passageSetHash([a])! > 0);
  });
});
