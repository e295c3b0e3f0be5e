import type { Embedder } from '../embedder.ts';

/**
 * An embedder that looks vectors up in a table, so that tests know every
 * cosine similarity exactly. Counts its calls.
 */
export class TableEmbedder implements Embedder {
  readonly dimensions: number | undefined;
  readonly #table: Readonly<Record<string, readonly number[]>>;
  /** Number of `embed` calls so far. */
  calls = 0;

  constructor(table: Readonly<Record<string, readonly number[]>>, dimensions?: number) {
    this.#table = table;
    this.dimensions = dimensions;
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    this.calls++;
    return texts.map((text) => {
      const vector = this.#table[text];
      if (vector === undefined) throw new Error(`TableEmbedder has no vector for "${text}"`);
      return [...vector];
    });
  }
}

/**
 * Directions in 3-D whose cosine similarity to `north` is known:
 * north 1, northup 0.894, northeast 0.707, east 0, southeast -0.707, south -1.
 */
export const COMPASS: Readonly<Record<string, readonly number[]>> = {
  north: [1, 0, 0],
  northup: [2, 0, 1],
  northeast: [1, 1, 0],
  east: [0, 1, 0],
  southeast: [-1, 1, 0],
  south: [-1, 0, 0],
  zero: [0, 0, 0],
  short: [1, 0],
};

/** Expected score of each compass text for the query `north`. */
export const SCORE_FOR_NORTH: Readonly<Record<string, number>> = {
  north: 1,
  northup: 2 / Math.sqrt(5),
  northeast: Math.SQRT1_2,
  east: 0,
  southeast: -Math.SQRT1_2,
  south: -1,
};
