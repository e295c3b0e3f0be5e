import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareCodePoints, matchesMetadataFilter, parseMetadataFilter, type MetadataFilter } from './metadata-filter.ts';
import { InvalidMetadataFilterError } from './retrieval-errors.ts';

test('matchesMetadataFilter applies the same rules as the stores', () => {
  const metadata = { lang: 'ja', year: 2024, author: { name: 'Sato' } };
  assert.equal(matchesMetadataFilter({ lang: 'ja', 'author.name': { $in: ['Sato', 'Suzuki'] } }, metadata), true);
  assert.equal(matchesMetadataFilter({ $or: [{ lang: 'en' }, { year: { $lt: 2000 } }] }, metadata), false);
  assert.equal(matchesMetadataFilter({ 'author.name.first': { $ne: 'x' } }, metadata), true, 'a path through a string is missing');
});

test('strings compare by code point, as PostgreSQL\'s "C" collation does', () => {
  // U+1F600 is beyond U+FFFF but JavaScript's < puts its surrogates before U+FF5E.
  assert.equal('😀' < '～', true);
  assert.equal(compareCodePoints('😀', '～'), 1);
  assert.equal(compareCodePoints('2024-01-02', '2024-01-10'), -1);
  assert.equal(compareCodePoints('abc', 'abc'), 0);
  assert.equal(compareCodePoints('ab', 'abc'), -1);
  assert.equal(matchesMetadataFilter({ s: { $gt: '～' } }, { s: '😀' }), true);
});

test('errors name the exact place of the problem', () => {
  const cases: [unknown, string][] = [
    ['kind', 'filter'],
    [{ year: { $gt: Number.POSITIVE_INFINITY } }, 'filter.year.$gt'],
    [{ year: {} }, 'filter.year'],
    [{ '': 1 }, 'filter.'],
    [{ 'a..b': 1 }, 'filter.a..b'],
    [{ '1st': 1 }, 'filter.1st'],
    [{ $and: { kind: 'x' } }, 'filter.$and'],
    [{ $and: [{ ok: 1 }, { $or: [{ kind: new Date() }] }] }, 'filter.$and[1].$or[0].kind'],
  ];
  for (const [filter, option] of cases) {
    assert.throws(
      () => parseMetadataFilter(filter),
      (error: unknown) => error instanceof InvalidMetadataFilterError && error.option === option,
      option,
    );
  }
});

test('keys in any script are accepted', () => {
  assert.equal(matchesMetadataFilter({ '著者.名前': '佐藤', 'content-type': 'text' }, { 著者: { 名前: '佐藤' }, 'content-type': 'text' }), true);
});

test('absurdly deep nesting is refused instead of exhausting the stack', () => {
  let filter: MetadataFilter = { kind: 'x' };
  for (let depth = 0; depth < 100; depth++) filter = { $and: [filter] };
  assert.throws(() => parseMetadataFilter(filter), InvalidMetadataFilterError);
});
