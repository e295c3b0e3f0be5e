import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InMemoryVectorStore } from './in-memory-vector-store.ts';
import { EmbeddingDimensionMismatchError } from './retrieval-errors.ts';
import { COMPASS, TableEmbedder } from './test-support/table-embedder.ts';
import { describeVectorStoreContract } from './test-support/vector-store-contract.ts';

describeVectorStoreContract('InMemoryVectorStore', async ({ embedder }) => new InMemoryVectorStore({ embedder }));

describe('InMemoryVectorStore', () => {
  test('works offline out of the box with the lexical default', async () => {
    const store = new InMemoryVectorStore();
    await store.add([
      { id: 'breaker', text: 'The circuit breaker stops agents that loop', metadata: {} },
      { id: 'budget', text: 'Token budgets cap what a session may spend', metadata: {} },
    ]);
    const [best] = await store.similaritySearch({ query: 'why did the breaker stop my agent?', topK: 1 });
    assert.equal(best?.id, 'breaker');
    assert.equal(store.size, 2);
  });

  test('documents are copied in and out: later mutation by the caller changes nothing', async () => {
    const store = new InMemoryVectorStore({ embedder: new TableEmbedder(COMPASS) });
    const metadata = { tags: ['a'] };
    await store.add([{ id: 'north', text: 'north', metadata }]);
    metadata.tags.push('mutated');
    const [first] = await store.similaritySearch({ query: 'north' });
    assert.deepEqual(first?.metadata, { tags: ['a'] });
    (first!.metadata['tags'] as string[]).push('again');
    const [second] = await store.similaritySearch({ query: 'north' });
    assert.deepEqual(second?.metadata, { tags: ['a'] });
  });

  test('the first vectors fix the dimension even when the embedder does not declare it', async () => {
    const embedder = new TableEmbedder(COMPASS);
    assert.equal(embedder.dimensions, undefined);
    const store = new InMemoryVectorStore({ embedder });
    await store.add([{ id: 'short', text: 'short', metadata: {} }]);
    await assert.rejects(store.add([{ id: 'north', text: 'north', metadata: {} }]), {
      name: 'EmbeddingDimensionMismatchError',
      expected: 2,
      actual: 3,
    });
  });

  test('concurrent first adds of different vector lengths: one fails, the other is stored', async () => {
    const store = new InMemoryVectorStore({ embedder: new TableEmbedder(COMPASS) });
    const results = await Promise.allSettled([
      store.add([{ id: 'north', text: 'north', metadata: {} }]),
      store.add([{ id: 'short', text: 'short', metadata: {} }]),
    ]);
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected'],
    );
    assert.ok(results[1]?.status === 'rejected' && results[1].reason instanceof EmbeddingDimensionMismatchError);
    assert.equal(store.size, 1);
  });

  test('a search racing the first add is checked against the length that add fixed', async () => {
    const store = new InMemoryVectorStore({ embedder: new TableEmbedder(COMPASS) });
    const [added, searched] = await Promise.allSettled([store.add([{ id: 'north', text: 'north', metadata: {} }]), store.similaritySearch({ query: 'short' })]);
    assert.equal(added.status, 'fulfilled');
    assert.ok(searched.status === 'rejected' && searched.reason instanceof EmbeddingDimensionMismatchError, 'no score from a truncated dot product');
  });
});
