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

  test('document ids name their documents exactly: UUIDs and numbered sections are not masked as times or scores', () => {
    const ids = ['3f2b8c1e-9a4d-4e2f-8b1a-2c3d4e5f6a7b', '9c8d7e6f-5a4b-4c3d-8e2f-1a0b9c8d7e6f'];
    assert.notEqual(passageSetHash([ids[0]!]), passageSetHash([ids[1]!]));
    assert.notEqual(passageSetHash(['handbook-4.1']), passageSetHash(['handbook-4.2']));
    assert.equal(passageSetHash(ids), passageSetHash([...ids].reverse()), 'in any order');
    // A passage that prints a generated id is still the same passage with another one.
    assert.equal(passageSetHash([`${a} (request ${ids[0]})`]), passageSetHash([`${a} (request ${ids[1]})`]));
  });

  test('results not reported are null; nothing retrieved is 0 (no information)', () => {
    assert.equal(passageSetHash(undefined), null);
    assert.equal(passageSetHash([]), 0);
    assert.ok(passageSetHash([a])! > 0);
  });
});
