import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { knownName, NAME_NUMBERS, offeredNames, queryNames } from './name-spans.ts';

/** Whether every name `later` names is one `earlier` named. */
const sameNames = (earlier: string, later: string) => {
  const known = queryNames(earlier);
  const names = queryNames(later);
  for (let at = 0; at < names.length; at += NAME_NUMBERS) if (!knownName(names, at, known)) return false;
  return names.length > 0;
};

describe('queryNames', () => {
  test('a name respelled, qualified, quoted, spelled out from its acronym or cut to its last words is the same name', () => {
    for (const [a, b] of [
      ['Los Angeles Dogers in 2007', 'Los Angeles Dodgers rookie in 2007'],
      ['"Is Google Making Us Stoopid?"', '"Is Google Making Us Stupid?"'],
      ['"The Shallows (book)"', 'The Shallows'],
      ['Grown-Ups', 'Grown Ups (film)'],
      ['SAS', 'when was the Special Air Service founded'],
      ['Stephanie Kay Panabaker', 'Kay Panabaker'],
      ['Wallace and Gromit', "Wallace & Gromit's"],
    ]) {
      assert.equal(sameNames(a!, b!), true, `${a} / ${b}`);
    }
  });

  test('a name with a word more or another word names someone else', () => {
    for (const [a, b] of [
      ['"Scatman"', '"Scatman John"'],
      ['"Scatman John" and find the team', '"Scatman Crothers" and find the team'],
      ['"Wallace and Gromit"', '"Wallace & Gromit\'s Thrill-O-Matic"'],
    ]) {
      assert.equal(sameNames(a!, b!), false, `${a} / ${b}`);
    }
  });

  test('lowercase words and numbers name nothing', () => {
    assert.deepEqual(queryNames('famous songs by the band in 1984'), []);
  });
});

describe('offeredNames', () => {
  test('keeps the titles that are one name through and through, not descriptions nor the query’s own name', () => {
    const offered = offeredNames(
      "Could not find [\"Scatman\"]. Similar: ['Scatman', 'Scatman John', 'Scat singing', 'List of scat singers', 'Scatman Crothers (actor)', 'Idaho Vandals football']",
      queryNames('"Scatman"'),
    );
    const key = (name: string) => queryNames(name)[0]!;
    assert.ok(offered.includes(key('Scatman John')));
    assert.ok(offered.includes(key('Scatman Crothers')));
    for (const name of ['Scatman', 'Scat', 'List', 'Idaho Vandals']) assert.ok(!offered.includes(key(name)), name);
  });
});
