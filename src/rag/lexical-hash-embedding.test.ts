import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { LexicalHashEmbedding } from './lexical-hash-embedding.ts';

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  a.forEach((value, index) => {
    const other = b[index] ?? 0;
    dot += value * other;
    normA += value * value;
    normB += other * other;
  });
  return dot / Math.sqrt(normA * normB);
}

test('vectors have the configured length (256 by default) and unit length', async () => {
  const [vector] = await new LexicalHashEmbedding().embed(['the circuit breaker opened']);
  assert.equal(vector?.length, 256);
  const length = Math.hypot(...(vector ?? []));
  assert.ok(Math.abs(length - 1) < 1e-12, `length ${length}`);
  const [small] = await new LexicalHashEmbedding({ dimensions: 32 }).embed(['x']);
  assert.equal(small?.length, 32);
});

test('embedding is deterministic across instances', async () => {
  const texts = ['東京の天気', 'Grüße aus Köln', 'tool call spiral'];
  assert.deepEqual(await new LexicalHashEmbedding().embed(texts), await new LexicalHashEmbedding().embed(texts));
});

test('shared words score high, unrelated texts near zero', async () => {
  const embedding = new LexicalHashEmbedding();
  const [query, related, unrelated] = await embedding.embed(['reset the circuit breaker', 'how to reset a circuit breaker', 'bake sourdough bread at home']);
  assert.ok(cosine(query ?? [], related ?? []) > 0.6);
  assert.ok(Math.abs(cosine(query ?? [], unrelated ?? [])) < 0.3);
});

test('Japanese texts that differ are not identical', async () => {
  const embedding = new LexicalHashEmbedding();
  const [tokyo, osaka, tokyoAgain] = await embedding.embed(['東京の天気を教えて', '大阪の天気を教えて', '東京の天気を教えて']);
  const similarity = cosine(tokyo ?? [], osaka ?? []);
  assert.ok(similarity < 0.9, `similarity ${similarity}`);
  assert.ok(similarity > 0.3, 'they share most character pairs');
  assert.deepEqual(tokyo, tokyoAgain);
});

test('a text without tokens embeds to the zero vector', async () => {
  const [vector] = await new LexicalHashEmbedding({ dimensions: 8 }).embed(['?!']);
  assert.deepEqual(vector, [0, 0, 0, 0, 0, 0, 0, 0]);
});

test('an aborted signal stops embedding', async () => {
  await assert.rejects(new LexicalHashEmbedding().embed(['a'], AbortSignal.abort(new Error('stop'))), /stop/);
});

test('dimensions must be an integer from 1 to 16000', () => {
  for (const dimensions of [0, -1, 2.5, 16_001, Number.NaN]) {
    assert.throws(
      () => new LexicalHashEmbedding({ dimensions }),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'dimensions',
    );
  }
});
