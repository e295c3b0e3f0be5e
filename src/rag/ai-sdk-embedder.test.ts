import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MockEmbeddingModelV4 } from 'ai/test';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { aiSdkEmbedder } from './ai-sdk-embedder.ts';
import { InMemoryVectorStore } from './in-memory-vector-store.ts';
import { EmbeddingDimensionMismatchError, InvalidEmbeddingError } from './retrieval-errors.ts';

function mockModel(vectorFor: (text: string) => number[]) {
  return new MockEmbeddingModelV4({
    maxEmbeddingsPerCall: 2,
    doEmbed: async ({ values }) => ({ embeddings: values.map(vectorFor), warnings: [] }),
  });
}

test('embeds through the AI SDK, splitting batches to the model limit, and learns the dimension', async () => {
  const model = mockModel((text) => [text.length, 1]);
  const embedder = aiSdkEmbedder(model);
  assert.equal(embedder.dimensions, undefined);
  const vectors = await embedder.embed(['a', 'bb', 'ccc']);
  assert.deepEqual(vectors, [
    [1, 1],
    [2, 1],
    [3, 1],
  ]);
  assert.equal(model.doEmbedCalls.length, 2, 'three values, two per call');
  assert.equal(embedder.dimensions, 2);
  assert.deepEqual(await embedder.embed([]), []);
  assert.equal(model.doEmbedCalls.length, 2, 'an empty batch calls nothing');
});

test('requestDimensions is sent to the model; dimensions alone is not', async () => {
  const asked = mockModel(() => [0.5, 0.5, 0.5]);
  await aiSdkEmbedder(asked, { requestDimensions: 3 }).embed(['x']);
  assert.equal(asked.doEmbedCalls[0]?.dimensions, 3);
  const declared = mockModel(() => [0.5, 0.5, 0.5]);
  const embedder = aiSdkEmbedder(declared, { dimensions: 3 });
  assert.equal(embedder.dimensions, 3);
  await embedder.embed(['x']);
  assert.equal(declared.doEmbedCalls[0]?.dimensions, undefined);
});

test('a response of another size than declared, or with non-finite numbers, is a typed error', async () => {
  await assert.rejects(
    aiSdkEmbedder(
      mockModel(() => [1, 2]),
      { dimensions: 3 },
    ).embed(['x']),
    {
      name: 'EmbeddingDimensionMismatchError',
      expected: 3,
      actual: 2,
    },
  );
  await assert.rejects(aiSdkEmbedder(mockModel(() => [1, Number.NaN])).embed(['x']), InvalidEmbeddingError);
  const drifting = aiSdkEmbedder(mockModel((text) => (text === 'long' ? [1, 2, 3] : [1, 2])));
  await drifting.embed(['short']);
  await assert.rejects(drifting.embed(['long']), EmbeddingDimensionMismatchError);
});

test('an AI SDK model can back a vector store', async () => {
  const store = new InMemoryVectorStore({
    embedder: aiSdkEmbedder(mockModel((text) => (text.includes('cat') ? [1, 0] : [0, 1]))),
  });
  await store.add([
    { id: 'cat', text: 'a cat sleeps', metadata: {} },
    { id: 'car', text: 'a car drives', metadata: {} },
  ]);
  const [best] = await store.similaritySearch({ query: 'where is the cat?', topK: 1 });
  assert.equal(best?.id, 'cat');
});

test('conflicting or invalid sizes are rejected at construction', () => {
  const model = mockModel(() => [1]);
  assert.throws(
    () => aiSdkEmbedder(model, { dimensions: 3, requestDimensions: 4 }),
    (error: unknown) => error instanceof InvalidOptionError && error.option === 'requestDimensions',
  );
  assert.throws(
    () => aiSdkEmbedder(model, { dimensions: 0 }),
    (error: unknown) => error instanceof InvalidOptionError && error.option === 'dimensions',
  );
});
