import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { knownName, NAME_NUMBERS, nameWords, offeredNames, queryNames, queryNameWords } from './name-spans.ts';

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

describe('nameWords', () => {
  test('the capitalised words of a request, without the word that opens a sentence, articles, legal forms or a possessive', () => {
    assert.deepEqual(nameWords('Find the CEO of Acme Corp.'), ['ceo', 'acme']);
    assert.deepEqual(nameWords("I need Silverleaf Dental Group's 2023 revenue. Search again."), ['silverleaf', 'dental', 'group']);
    assert.deepEqual(nameWords('Please do a deeper review of the Coca-Cola GmbH contract.'), ['coca', 'cola']);
    assert.deepEqual(nameWords('Translate into Chinese again, more naturally: "Charge the device fully."'), ['chinese']);
  });

  test('a word opening a line counts when a name goes on after it, or when it is all the line says', () => {
    assert.deepEqual(nameWords('Company: Acme Corp\nCEO: Jane Doe\nSource: the annual report'), ['company', 'acme', 'ceo', 'jane', 'doe']);
    assert.deepEqual(nameWords('Globex\nWho is the CEO?'), ['globex', 'ceo']);
    assert.deepEqual(nameWords('Initech staff count for 2023: check every source.'), []);
    assert.deepEqual(nameWords('- Find the CEO of Acme\n• Look on LinkedIn — then Crunchbase\n1. Compare them'), ['ceo', 'acme', 'linkedin', 'crunchbase']);
    assert.deepEqual(nameWords('Migrate Billing — MySQL → PostgreSQL'), ['migrate', 'billing', 'mysql', 'postgresql']);
  });

  test('paths, file names, ids and numbers are left to the identity of the text; lower-case text names nothing', () => {
    assert.deepEqual(nameWords('Review src/ui/CheckoutForm.tsx and PR-1234 for bugs.'), []);
    assert.deepEqual(nameWords('summarise the latest incidents'), []);
    assert.deepEqual(nameWords('Сравни выручку Газпрома и Лукойла'), ['газпрома', 'лукойла']);
  });

  test('at most `max` words', () => {
    assert.deepEqual(nameWords('Compare Alpha Beta Gamma Delta Epsilon', 3), ['compare', 'alpha', 'beta']);
  });
});

describe('queryNameWords', () => {
  /** Whether a word one query names things with is a word of the other (as the rag_fixation detector compares them). */
  const shared = (a: string, b: string) => {
    const [x, y] = [queryNameWords(a), queryNameWords(b)];
    return x.names.some((key) => y.words.includes(key)) || y.names.some((key) => x.words.includes(key));
  };

  test('the capitalised words of a query, without question words, articles, legal forms, a possessive or numbers', () => {
    assert.equal(queryNameWords("What was Acme's revenue in 2023?").names.length, 1);
    assert.ok(shared("What was Acme's revenue in 2023?", 'annual revenue of Acme Corp'));
    assert.deepEqual(queryNameWords('annual revenue 2023 of the company'), { names: [], first: 0, words: [] });
  });

  test('a capitalised first word alone is kept apart: a name, or only the start of a sentence', () => {
    const acme = queryNameWords('Acme annual revenue');
    assert.deepEqual(acme.names, []);
    assert.notEqual(acme.first, 0);
    assert.ok(acme.words.includes(acme.first));
    assert.equal(queryNameWords('Password reset steps').names.length, 0);
    // A name of several words that opens the query is a name.
    assert.equal(queryNameWords('Marie Curie Nobel lecture').first, 0);
    assert.ok(queryNameWords('Marie Curie Nobel lecture').names.length >= 3);
  });

  test('names of other things share no word; a respelling, an acronym and its expansion, or a word in another case do', () => {
    assert.ok(!shared('about Marie Curie', 'about Niels Bohr'));
    assert.ok(shared('roster of the Dodgers', 'roster of the Dogers'));
    assert.ok(shared('the SAS selection', 'the Special Air Service selection'));
    assert.ok(shared('what the Mothman is', 'The Mothman of Point Pleasant 1964'));
  });

  test('at most eight name keys and sixteen word keys, from the first 1,024 characters', () => {
    const many = `x ${Array.from({ length: 20 }, (_, i) => `Name${String.fromCharCode(97 + i)}x`).join(' ')}`;
    assert.equal(queryNameWords(many).names.length, 8);
    assert.equal(queryNameWords(many).words.length, 16);
    assert.deepEqual(queryNameWords(`${'x '.repeat(600)}Acme`), { names: [], first: 0, words: [] });
  });
});
