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
      // Other tools' wordings: after a label, an apology, or what was searched.
      'Observation: Could not find [Dodgers]. Similar: []',
      '[search output]\nCould not find [Dodgers].',
      'Search for [Dodgers] returned no results. Similar: []',
      'There is no page titled [Dodgers].',
      'No exact match for [Dodgers].',
      "Sorry, I couldn't find [Dodgers].",
      'Found 0 results for [Dodgers].',
      'No good Wikipedia Search Result was found',
      'Unfortunately, no matching documents were found.',
    ]) {
      assert.equal(isFailedSearch(text), true, text);
    }
  });

  test('a document that mentions a failure further on, or begins otherwise, is a hit', () => {
    for (const text of [
      'The Lantern Festival is held on the fifteenth day of the first month.',
      'Error handling: when the file is not found, the loader retries.',
      'Novel results from the trial were published in 2020.',
      'The band released no records after 1994.',
      'Nirvana: no records exist of the band before 1987.',
      'Observation: The Dodgers won the World Series in 2020.',
      'There is a page titled Dodgers.',
      'Found in 1883, the team moved west in 1958.',
      '',
    ]) {
      assert.equal(isFailedSearch(text), false, text);
    }
    assert.equal(isFailedSearch(null), false);
  });
});
