import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import type { Document } from '../document.ts';
import type { Embedder } from '../embedder.ts';
import { LexicalHashEmbedding } from '../lexical-hash-embedding.ts';
import type { MetadataFilter } from '../metadata-filter.ts';
import { EmbeddingDimensionMismatchError, InvalidMetadataFilterError } from '../retrieval-errors.ts';
import type { VectorStore } from '../vector-store.ts';
import { COMPASS, SCORE_FOR_NORTH, TableEmbedder } from './table-embedder.ts';

/**
 * Pseudo-random vectors, the same for the same text: like a real embedding,
 * their cosine with themselves does not come out as exactly 1 by every formula.
 */
class SeededEmbedder implements Embedder {
  readonly dimensions: number;

  constructor(dimensions: number) {
    this.dimensions = dimensions;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    return texts.map((text) => {
      let seed = [...text].reduce((hash, character) => Math.imul(hash ^ (character.codePointAt(0) ?? 0), 0x01000193), 0x811c9dc5);
      return Array.from({ length: this.dimensions }, () => {
        seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
        return (seed >>> 0) / 2 ** 32 - 0.5;
      });
    });
  }
}

/** Creates an empty store of the kind under test, for vectors of `dimensions` length. */
export type VectorStoreFactory = (setup: { embedder: Embedder; dimensions: number }) => Promise<VectorStore>;

/** pgvector stores 32-bit floats; scores agree with exact arithmetic to about 1e-7. */
const SCORE_TOLERANCE = 1e-5;

const COMPASS_DOCUMENTS: Document[] = [
  {
    id: 'north',
    text: 'north',
    metadata: { kind: 'city', year: 2001, tags: ['a'], author: { name: 'Ada' }, published: '2020-01-15', draft: false },
  },
  { id: 'northup', text: 'northup', metadata: { kind: 'town', year: 1999, author: { name: 'Bob' }, published: '2019-12-31', draft: true } },
  { id: 'northeast', text: 'northeast', metadata: { kind: 'city', year: 2010, published: '2021-06-01', note: null } },
  { id: 'east', text: 'east', metadata: { kind: 'village', year: '2001', author: { name: 'Ada' } } },
  { id: 'southeast', text: 'southeast', metadata: { kind: 'city', year: 2001.5 } },
  { id: 'south', text: 'south', metadata: {} },
];

const ALL_BY_SCORE = ['north', 'northup', 'northeast', 'east', 'southeast', 'south'];

/**
 * The behaviour every `VectorStore` must share: ordering, `topK`, thresholds,
 * each filter operator, delete, upsert, dimension checks, blank queries, and
 * non-Latin text with the default lexical embedding.
 */
export function describeVectorStoreContract(name: string, createStore: VectorStoreFactory): void {
  describe(`${name} (VectorStore contract)`, () => {
    async function compassStore(): Promise<{ store: VectorStore; embedder: TableEmbedder }> {
      const embedder = new TableEmbedder(COMPASS);
      const store = await createStore({ embedder, dimensions: 3 });
      await store.add(COMPASS_DOCUMENTS);
      return { store, embedder };
    }

    async function idsFor(store: VectorStore, filter: MetadataFilter): Promise<string[]> {
      const found = await store.similaritySearch({ query: 'north', topK: 10, filter });
      return found.map((document) => document.id);
    }

    test('returns documents best first, each scored by cosine similarity', async () => {
      const { store } = await compassStore();
      const found = await store.similaritySearch({ query: 'north', topK: 10 });
      assert.deepEqual(
        found.map((document) => document.id),
        ALL_BY_SCORE,
      );
      for (const document of found) {
        const expected = SCORE_FOR_NORTH[document.id];
        assert.ok(expected !== undefined && Math.abs((document.score ?? NaN) - expected) < SCORE_TOLERANCE, `score of ${document.id}: ${document.score}`);
      }
    });

    test('returns the stored text and metadata, nested values intact', async () => {
      const { store } = await compassStore();
      const [first] = await store.similaritySearch({ query: 'north', topK: 1 });
      assert.equal(first?.id, 'north');
      assert.equal(first?.text, 'north');
      assert.deepEqual(first?.metadata, COMPASS_DOCUMENTS[0]?.metadata);
    });

    test('topK defaults to 4 and limits the result to the best documents', async () => {
      const { store } = await compassStore();
      const byDefault = await store.similaritySearch({ query: 'north' });
      assert.deepEqual(
        byDefault.map((document) => document.id),
        ALL_BY_SCORE.slice(0, 4),
      );
      const two = await store.similaritySearch({ query: 'north', topK: 2 });
      assert.deepEqual(
        two.map((document) => document.id),
        ['north', 'northup'],
      );
    });

    test('a similarity threshold keeps only documents scoring at least that much; 0 keeps all', async () => {
      const { store } = await compassStore();
      const close = await store.similaritySearch({ query: 'north', topK: 10, similarityThreshold: 0.7 });
      assert.deepEqual(
        close.map((document) => document.id),
        ['north', 'northup', 'northeast'],
      );
      const veryClose = await store.similaritySearch({ query: 'north', topK: 10, similarityThreshold: 0.95 });
      assert.deepEqual(
        veryClose.map((document) => document.id),
        ['north'],
      );
      const all = await store.similaritySearch({ query: 'north', topK: 10, similarityThreshold: 0 });
      assert.deepEqual(
        all.map((document) => document.id),
        ALL_BY_SCORE,
      );
      assert.ok((all.at(-1)?.score ?? 0) < -0.99, 'negative similarities are kept at threshold 0');
    });

    test('an exact duplicate scores exactly 1 and is found at similarityThreshold 1; no score leaves [-1, 1]', async () => {
      // Vectors as a real embedding model returns them: many dimensions, values that do not round exactly.
      const embedder = new SeededEmbedder(1536);
      const store = await createStore({ embedder, dimensions: 1536 });
      const documents = Array.from({ length: 20 }, (_, i) => ({ id: `d${String(i).padStart(2, '0')}`, text: `document ${i}`, metadata: {} }));
      await store.add(documents);
      for (const document of documents) {
        const found = await store.similaritySearch({ query: document.text, similarityThreshold: 1 });
        assert.deepEqual(
          found.map((hit) => [hit.id, hit.score]),
          [[document.id, 1]],
          document.id,
        );
      }
      const lexical = await createStore({ embedder: new LexicalHashEmbedding(), dimensions: 256 });
      const texts = ['The quick brown fox jumps over the lazy dog', 'Refund policy: thirty days, receipt required', 'hello world hello', 'a b c d e f g'];
      await lexical.add(texts.map((text, i) => ({ id: `t${i}`, text, metadata: {} })));
      for (const [i, text] of texts.entries()) {
        const found = await lexical.similaritySearch({ query: text, topK: 10 });
        assert.deepEqual([found[0]?.id, found[0]?.score], [`t${i}`, 1], text);
        for (const hit of found) assert.ok(hit.score !== undefined && hit.score >= -1 && hit.score <= 1, `score ${hit.score}`);
      }
    });

    test('equality: a bare value, $eq, exact JSON types, nested keys, null', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { kind: 'city' }), ['north', 'northeast', 'southeast']);
      assert.deepEqual(await idsFor(store, { kind: { $eq: 'city' } }), ['north', 'northeast', 'southeast']);
      assert.deepEqual(await idsFor(store, { year: 2001 }), ['north'], 'the string "2001" is not the number 2001');
      assert.deepEqual(await idsFor(store, { year: '2001' }), ['east']);
      assert.deepEqual(await idsFor(store, { draft: false }), ['north']);
      assert.deepEqual(await idsFor(store, { 'author.name': 'Ada' }), ['north', 'east']);
      assert.deepEqual(await idsFor(store, { note: null }), ['northeast'], 'a missing key is not null');
      assert.deepEqual(await idsFor(store, { tags: 'a' }), [], 'an array never equals a scalar');
    });

    test('$ne and $nin also match documents without the key', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { kind: { $ne: 'city' } }), ['northup', 'east', 'south']);
      assert.deepEqual(await idsFor(store, { kind: { $nin: ['city', 'town'] } }), ['east', 'south']);
      assert.deepEqual(await idsFor(store, { kind: { $nin: [] } }), ALL_BY_SCORE);
    });

    test('$in matches any of the values', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { kind: { $in: ['town', 'village'] } }), ['northup', 'east']);
      assert.deepEqual(await idsFor(store, { year: { $in: [1999, 2010, 'none'] } }), ['northup', 'northeast']);
      assert.deepEqual(await idsFor(store, { kind: { $in: [] } }), []);
    });

    test('$gt, $gte, $lt, $lte compare numbers with numbers and strings with strings', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { year: { $gt: 2001 } }), ['northeast', 'southeast']);
      assert.deepEqual(await idsFor(store, { year: { $gte: 2001 } }), ['north', 'northeast', 'southeast']);
      assert.deepEqual(await idsFor(store, { year: { $lt: 2001 } }), ['northup']);
      assert.deepEqual(await idsFor(store, { year: { $lte: 2001 } }), ['north', 'northup']);
      assert.deepEqual(await idsFor(store, { published: { $gte: '2020-01-01', $lt: '2021-01-01' } }), ['north']);
      assert.deepEqual(await idsFor(store, { published: { $gt: 2000 } }), [], 'a string field never compares with a number');
    });

    test('$and, $or, several keys, nesting, and empty combinations', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { $or: [{ kind: 'town' }, { 'author.name': 'Ada' }] }), ['north', 'northup', 'east']);
      assert.deepEqual(await idsFor(store, { $and: [{ kind: 'city' }, { year: { $lt: 2005 } }] }), ['north', 'southeast']);
      assert.deepEqual(await idsFor(store, { kind: 'city', year: 2001 }), ['north']);
      assert.deepEqual(await idsFor(store, { $or: [{ $and: [{ kind: 'city' }, { year: { $gt: 2005 } }] }, { kind: 'village' }] }), ['northeast', 'east']);
      assert.deepEqual(await idsFor(store, { $and: [] }), ALL_BY_SCORE);
      assert.deepEqual(await idsFor(store, { $or: [] }), []);
    });

    test('filter values are data, never query text', async () => {
      const { store } = await compassStore();
      assert.deepEqual(await idsFor(store, { kind: "city' OR '1'='1" }), []);
      assert.deepEqual(await idsFor(store, { kind: { $in: ['x"]) OR TRUE --'] } }), []);
      assert.equal((await store.similaritySearch({ query: 'north', topK: 10 })).length, 6, 'the store is intact');
    });

    test('malformed filters and requests are rejected with typed errors', async () => {
      const { store } = await compassStore();
      const bad: [unknown, string][] = [
        [{ kind: { $regex: 'c' } }, 'filter.kind.$regex'],
        [{ "kind'; DROP TABLE x; --": 'a' }, "filter.kind'; DROP TABLE x; --"],
        [{ kind: undefined }, 'filter.kind'],
        [{ $not: { kind: 'city' } }, 'filter.$not'],
        [{ kind: ['city'] }, 'filter.kind'],
        [{ year: { $gt: true } }, 'filter.year.$gt'],
        [{ $or: [{ year: { $in: [{}] } }] }, 'filter.$or[0].year.$in[0]'],
      ];
      for (const [filter, option] of bad) {
        await assert.rejects(
          store.similaritySearch({ query: 'north', filter: filter as MetadataFilter }),
          (error: unknown) => error instanceof InvalidMetadataFilterError && error.option === option,
          JSON.stringify(filter),
        );
      }
      await assert.rejects(store.similaritySearch({ query: 'north', topK: 0 }), InvalidOptionError);
      await assert.rejects(store.similaritySearch({ query: 'north', similarityThreshold: 1.5 }), InvalidOptionError);
      await assert.rejects(store.add([{ id: '', text: 'north', metadata: {} }]), InvalidOptionError);
      await assert.rejects(
        store.add([{ id: 'nul', text: 'north', metadata: { note: 'a\u0000b' } }]),
        (error: unknown) => error instanceof InvalidOptionError && error.option === 'documents[0].metadata.note',
      );
    });

    test('strings with a lone UTF-16 surrogate are rejected everywhere, naming the field', async () => {
      const { store } = await compassStore();
      // What slicing through an emoji leaves behind: '🚀 Launch'.slice(0, 1).
      const half = '🚀 Launch'.slice(0, 1);
      const badDocuments: [Document, string][] = [
        [{ id: `report-${half}`, text: 'north', metadata: {} }, 'documents[0].id'],
        [{ id: 'report', text: `north ${half}`, metadata: {} }, 'documents[0].text'],
        [{ id: 'report', text: 'north', metadata: { title: half } }, 'documents[0].metadata.title'],
        [{ id: 'report', text: 'north', metadata: { author: { tags: ['ok', half] } } }, 'documents[0].metadata.author.tags[1]'],
        [{ id: 'report', text: 'north', metadata: { [`key${half}`]: 1 } }, 'documents[0].metadata'],
      ];
      for (const [document, option] of badDocuments) {
        await assert.rejects(
          store.add([document]),
          (error: unknown) => error instanceof InvalidOptionError && error.option === option && /lone UTF-16 surrogate/.test(error.message),
          option,
        );
      }
      await assert.rejects(store.delete([`report-${half}`]), (error: unknown) => error instanceof InvalidOptionError && error.option === 'ids[0]');
      const badFilters: [MetadataFilter, string][] = [
        [{ kind: half }, 'filter.kind'],
        [{ kind: { $in: ['city', half] } }, 'filter.kind.$in[1]'],
        [{ published: { $gte: `2020${half}` } }, 'filter.published.$gte'],
      ];
      for (const [filter, option] of badFilters) {
        await assert.rejects(
          store.similaritySearch({ query: 'north', filter }),
          (error: unknown) => error instanceof InvalidMetadataFilterError && error.option === option,
          option,
        );
      }
      assert.deepEqual(
        (await store.similaritySearch({ query: 'north', topK: 10 })).map((document) => document.id),
        ALL_BY_SCORE,
        'nothing was written',
      );
      // A whole emoji is fine.
      await store.add([{ id: 'launch-🚀', text: 'north', metadata: { title: '🚀 Launch' } }]);
      assert.deepEqual(await idsFor(store, { title: '🚀 Launch' }), ['launch-🚀']);
    });

    test('metadata that JSON would silently change is rejected, naming the key', async () => {
      const { store } = await compassStore();
      const bad: [Record<string, unknown>, string][] = [
        [{ score: Number.NaN }, 'documents[0].metadata.score'],
        [{ limit: Number.POSITIVE_INFINITY }, 'documents[0].metadata.limit'],
        [{ author: { rank: Number.NEGATIVE_INFINITY } }, 'documents[0].metadata.author.rank'],
        [{ tags: ['a', undefined] }, 'documents[0].metadata.tags[1]'],
        [{ format: () => 'x' }, 'documents[0].metadata.format'],
      ];
      for (const [metadata, option] of bad) {
        await assert.rejects(
          store.add([{ id: 'odd', text: 'north', metadata: metadata as Document['metadata'] }]),
          (error: unknown) => error instanceof InvalidOptionError && error.option === option,
          option,
        );
      }
      assert.deepEqual(await idsFor(store, { score: null }), [], 'no NaN became null');
    });

    test('objects JSON would store as something else (Map, Set, Date, bytes, class instances, cycles) are rejected, saying what to pass', async () => {
      const { store } = await compassStore();
      class Tenant {
        readonly name = 'acme';
      }
      const cyclic: Record<string, unknown> = { name: 'loop' };
      cyclic['self'] = cyclic;
      const bad: [unknown, string, RegExp][] = [
        [new Map([['tenant', 'acme']]), 'documents[0].metadata', /Object\.fromEntries/],
        [{ tenant: new Map([['name', 'acme']]) }, 'documents[0].metadata.tenant', /Object\.fromEntries/],
        [{ tags: new Set(['a', 'b']) }, 'documents[0].metadata.tags', /\[\.\.\.set\]/],
        [{ published: new Date('2020-01-15T00:00:00Z') }, 'documents[0].metadata.published', /toISOString/],
        [{ bytes: new Uint8Array([1, 2]) }, 'documents[0].metadata.bytes', /Array\.from/],
        [{ raw: [new ArrayBuffer(2)] }, 'documents[0].metadata.raw[0]', /Array\.from/],
        [{ tenant: new Tenant() }, 'documents[0].metadata.tenant', /plain object/],
        [{ size: 10n }, 'documents[0].metadata.size', /bigint/],
        [{ loop: cyclic }, 'documents[0].metadata.loop.self', /refers back/],
        [{ date: { toJSON: () => '2020' } }, 'documents[0].metadata.date.toJSON', /function/],
      ];
      for (const [metadata, option, hint] of bad) {
        await assert.rejects(
          store.add([{ id: 'odd', text: 'north', metadata: metadata as Document['metadata'] }]),
          (error: unknown) => error instanceof InvalidOptionError && error.option === option && hint.test(error.message),
          option,
        );
      }
      assert.equal((await store.similaritySearch({ query: 'north', topK: 10 })).length, ALL_BY_SCORE.length, 'nothing was written');
      // What to pass instead is stored and found as given; an object without a prototype is plain data too.
      const tenant: Record<string, string> = Object.create(null);
      tenant['name'] = 'acme';
      const shared = ['a'];
      await store.add([
        {
          id: 'acme',
          text: 'north',
          metadata: { ...Object.fromEntries(new Map([['tenant', 'acme']])), owner: tenant, tags: shared, labels: shared },
        },
      ]);
      const [found] = await store.similaritySearch({ query: 'north', topK: 1, filter: { tenant: 'acme', 'owner.name': 'acme' } });
      assert.deepEqual(found?.metadata, { tenant: 'acme', owner: { name: 'acme' }, tags: ['a'], labels: ['a'] });
    });

    test('a key whose value is undefined is left out, as JSON leaves it out: an optional field not set', async () => {
      const { store } = await compassStore();
      await store.add([{ id: 'optional', text: 'north', metadata: { kind: 'note', page: undefined } as unknown as Document['metadata'] }]);
      const [found] = await store.similaritySearch({ query: 'north', topK: 1, filter: { kind: 'note' } });
      assert.deepEqual(found?.metadata, { kind: 'note' });
    });

    test('metadata may be left out: the document is stored with none, as {}', async () => {
      const { store } = await compassStore();
      await store.add([
        { id: 'bare', text: 'north' },
        { id: 'unset', text: 'northeast', metadata: undefined },
      ]);
      const found = await store.similaritySearch({ query: 'north', topK: 10, filter: { kind: { $nin: ['city', 'town', 'village'] } } });
      assert.deepEqual(
        found.map((document) => [document.id, document.metadata]),
        [
          ['bare', {}],
          ['unset', {}],
          ['south', {}],
        ],
      );
      assert.deepEqual(await idsFor(store, { kind: 'city' }), ['north', 'northeast', 'southeast'], 'matched by no key');
      for (const metadata of [null, [], 'kind=city']) {
        await assert.rejects(
          store.add([{ id: 'odd', text: 'north', metadata: metadata as unknown as Document['metadata'] }]),
          (error: unknown) => error instanceof InvalidOptionError && error.option === 'documents[0].metadata',
          JSON.stringify(metadata),
        );
      }
    });

    test('equal scores are ordered by id, by Unicode code point', async () => {
      const { store } = await compassStore();
      // One add per document, so that the storage order is the reverse of the expected one.
      // UTF-16 order would put U+1F600 (a surrogate pair) before U+FF5E.
      for (const id of ['tie-😀', 'tie-～', 'tie-b', 'tie-a']) {
        await store.add([{ id, text: 'north', metadata: { tie: true } }]);
      }
      const found = await store.similaritySearch({ query: 'north', topK: 4 });
      assert.deepEqual(
        found.map((document) => document.id),
        ['north', 'tie-a', 'tie-b', 'tie-～'],
      );
      assert.deepEqual(await idsFor(store, { tie: true }), ['tie-a', 'tie-b', 'tie-～', 'tie-😀']);
    });

    test('a wide $or over one key works', async () => {
      const { store } = await compassStore();
      // 33,000 tests of one key: binding the key once per test would exceed PostgreSQL's 65,535 parameters.
      const filter = { $or: [...Array.from({ length: 33_000 }, (_, index) => ({ kind: `kind-${index}` })), { kind: 'town' }] };
      assert.deepEqual(await idsFor(store, filter), ['northup']);
    });

    test('delete removes documents by id and ignores unknown ids', async () => {
      const { store } = await compassStore();
      await store.delete(['north', 'northeast', 'no-such-id']);
      const found = await store.similaritySearch({ query: 'north', topK: 10 });
      assert.deepEqual(
        found.map((document) => document.id),
        ['northup', 'east', 'southeast', 'south'],
      );
      await store.delete([]);
      assert.equal((await store.similaritySearch({ query: 'north', topK: 10 })).length, 4);
    });

    test('adding a document with a stored id replaces it (upsert)', async () => {
      const { store } = await compassStore();
      await store.add([{ id: 'north', text: 'south', metadata: { kind: 'moved' } }]);
      const found = await store.similaritySearch({ query: 'north', topK: 10 });
      assert.equal(found.length, 6, 'no second copy');
      const moved = found.find((document) => document.id === 'north');
      assert.equal(moved?.text, 'south');
      assert.deepEqual(moved?.metadata, { kind: 'moved' });
      assert.equal(found[0]?.id, 'northup', 'ranked by its new embedding');
      assert.deepEqual(await idsFor(store, { kind: 'city' }), ['northeast', 'southeast'], 'old metadata is gone');
    });

    test('within one batch the last document with an id wins', async () => {
      const { store } = await compassStore();
      await store.add([
        { id: 'twin', text: 'east', metadata: { n: 1 } },
        { id: 'twin', text: 'north', metadata: { n: 2 } },
      ]);
      const twins = await store.similaritySearch({ query: 'north', topK: 10, filter: { n: { $gte: 1 } } });
      assert.deepEqual(
        twins.map((document) => [document.id, document.text, document.metadata['n']]),
        [['twin', 'north', 2]],
      );
    });

    test('a vector of the wrong dimension fails with a typed error and changes nothing', async () => {
      const { store } = await compassStore();
      const rejectsMismatch = (error: unknown): boolean => error instanceof EmbeddingDimensionMismatchError && error.expected === 3 && error.actual === 2;
      await assert.rejects(
        store.add([
          { id: 'fine', text: 'north', metadata: {} },
          { id: 'bad', text: 'short', metadata: {} },
        ]),
        rejectsMismatch,
      );
      await assert.rejects(store.similaritySearch({ query: 'short' }), rejectsMismatch);
      const found = await store.similaritySearch({ query: 'north', topK: 10 });
      assert.deepEqual(
        found.map((document) => document.id),
        ALL_BY_SCORE,
        'nothing of the failed batch was written',
      );
    });

    test('a blank query finds nothing and embeds nothing', async () => {
      const { store, embedder } = await compassStore();
      const callsBefore = embedder.calls;
      assert.deepEqual(await store.similaritySearch({ query: '' }), []);
      assert.deepEqual(await store.similaritySearch({ query: ' \n\t ' }), []);
      assert.equal(embedder.calls, callsBefore);
    });

    test('zero vectors have no direction: such a query finds nothing, such a document is never found', async () => {
      const { store } = await compassStore();
      await store.add([{ id: 'blank', text: 'zero', metadata: {} }]);
      assert.deepEqual(await store.similaritySearch({ query: 'zero' }), []);
      const found = await store.similaritySearch({ query: 'north', topK: 10 });
      assert.deepEqual(
        found.map((document) => document.id),
        ALL_BY_SCORE,
      );
    });

    test('with the lexical default, different Japanese texts are told apart', async () => {
      const store = await createStore({ embedder: new LexicalHashEmbedding(), dimensions: 256 });
      await store.add([
        { id: 'tokyo', text: '東京の天気は晴れです', metadata: { lang: 'ja' } },
        { id: 'osaka', text: '大阪の天気は雨です', metadata: { lang: 'ja' } },
        { id: 'sushi', text: '寿司の作り方を学ぶ', metadata: { lang: 'ja' } },
        { id: 'english', text: 'the weather in Tokyo', metadata: { lang: 'en' } },
      ]);
      const tokyo = await store.similaritySearch({ query: '東京の天気', topK: 2 });
      const osaka = await store.similaritySearch({ query: '大阪の天気', topK: 2 });
      assert.deepEqual(
        tokyo.map((document) => document.id),
        ['tokyo', 'osaka'],
      );
      assert.deepEqual(
        osaka.map((document) => document.id),
        ['osaka', 'tokyo'],
      );
      const [best, second] = tokyo;
      assert.ok((best?.score ?? 0) > (second?.score ?? 0) + 0.1, `scores ${best?.score} and ${second?.score} differ`);
      assert.ok((best?.score ?? 1) < 0.999, 'the query and the document are different texts');
    });
  });
}
