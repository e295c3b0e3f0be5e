import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isFailedSearch } from './failed-search.ts';

describe('isFailedSearch', () => {
  test('reads the answers that say nothing was found', () => {
    for (const text of [
      "Could not find [Orbit Records]. Similar: ['Orbit Books']",
      'No results',
      'No matches found for "TODO" in /src',
      'Nothing found.',
      '0 results for your query',
      'Page not found',
      "Couldn't find any document matching the query",
    ]) {
      assert.equal(isFailedSearch(text), true, text);
    }
  });

  test('a document that mentions a failure further on, or begins otherwise, is a hit', () => {
    for (const text of [
      'The Lantern Festival is held on the fifteenth day of the first month.',
      'Error handling: when the file is not found, the loader retries.',
      'Novel results from the trial were published in 2020.',
      '',
    ]) {
      assert.equal(isFailedSearch(text), false, text);
    }
    assert.equal(isFailedSearch(null), false);
  });
});
