import { EmbeddingDimensionMismatchError, InvalidEmbeddingError } from './retrieval-errors.ts';

/**
 * Turns texts into vectors whose cosine similarity reflects how alike the
 * texts are. Vector stores use one to index documents and to embed queries.
 */
export interface Embedder {
  /**
   * Length of every vector this embedder returns, or `undefined` while it is
   * not known yet (an AI SDK model reveals it with its first response).
   */
  readonly dimensions: number | undefined;
  /** One vector per text, in the same order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

/**
 * Checks that an embedder kept its contract — one vector per text, finite
 * numbers, all of one length (`expected`, when given) — before anything is
 * stored or queried with them.
 *
 * @param where - what is being embedded, for the error message.
 */
export function checkEmbeddings(vectors: unknown, count: number, expected: number | undefined, where: string): number[][] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    const got = Array.isArray(vectors) ? `${vectors.length} vectors` : typeof vectors;
    throw new InvalidEmbeddingError(`${where}: expected ${count} vectors, one per text, got ${got}`);
  }
  let dimensions = expected;
  for (const [index, vector] of (vectors as unknown[]).entries()) {
    if (!Array.isArray(vector) || vector.length === 0) {
      throw new InvalidEmbeddingError(`${where}: vector ${index} is not a non-empty array of numbers`);
    }
    dimensions ??= vector.length;
    if (vector.length !== dimensions) {
      throw new EmbeddingDimensionMismatchError(dimensions, vector.length, where);
    }
    for (const component of vector as unknown[]) {
      if (typeof component !== 'number' || !Number.isFinite(component)) {
        throw new InvalidEmbeddingError(`${where}: vector ${index} holds ${String(component)}; every component must be a finite number`);
      }
    }
  }
  return vectors as number[][];
}

/**
 * Embeds `texts` and checks the result with {@link checkEmbeddings}, so every
 * store applies the same contract checks to what it is about to store or query.
 */
export async function embedChecked(
  embedder: Embedder,
  texts: readonly string[],
  expected: number | undefined,
  where: string,
  signal?: AbortSignal,
): Promise<number[][]> {
  return checkEmbeddings(await embedder.embed(texts, signal), texts.length, expected, where);
}
