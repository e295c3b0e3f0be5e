import { is, validateOptions } from '../errors/validate-options.ts';
import type { Embedder } from './embedder.ts';
import { lexicalTokens } from './lexical-tokens.ts';

/** Options of {@link LexicalHashEmbedding}. */
export interface LexicalHashEmbeddingOptions {
  /**
   * Length of the vectors. More dimensions mean fewer hash collisions between
   * unrelated words.
   * @default 256
   */
  readonly dimensions?: number;
}

/** Default vector length of {@link LexicalHashEmbedding}. */
export const DEFAULT_LEXICAL_HASH_DIMENSIONS = 256;

/** pgvector's limit for a `vector` column; a longer vector could not be stored. */
const MAX_DIMENSIONS = 16_000;

/**
 * A lexical stand-in for an embedding model: it needs no network and no
 * model file, and it is NOT semantic. Two texts score high only when they
 * share words (or, in Chinese, Japanese, Korean, Thai…, character pairs);
 * synonyms, paraphrases and translations score near zero.
 *
 * Use it for tests, demos and offline defaults; use {@link aiSdkEmbedder}
 * with a real embedding model for retrieval by meaning.
 *
 * How it works: {@link lexicalTokens} splits the text; each token is hashed
 * to one dimension and a sign (signed feature hashing, so collisions cancel
 * out on average instead of piling up); the counts are L2-normalised. The
 * result is deterministic across runs, processes and machines.
 */
export class LexicalHashEmbedding implements Embedder {
  /** Length of every vector. */
  readonly dimensions: number;

  constructor(options: LexicalHashEmbeddingOptions = {}) {
    validateOptions('LexicalHashEmbedding', options, { dimensions: is.integer(1, MAX_DIMENSIONS) });
    this.dimensions = options.dimensions ?? DEFAULT_LEXICAL_HASH_DIMENSIONS;
  }

  /** One unit-length vector per text; a text without any token gets the zero vector. */
  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    return texts.map((text) => this.#embedOne(text));
  }

  #embedOne(text: string): number[] {
    const vector = new Array<number>(this.dimensions).fill(0);
    for (const token of lexicalTokens(text)) {
      const hash = fnv1a(token);
      const index = (mix(hash) >>> 0) % this.dimensions;
      // The sign comes from a differently seeded mix, independent of the index.
      const sign = mix(hash ^ 0x9e3779b9) & 1 ? -1 : 1;
      vector[index] = (vector[index] ?? 0) + sign;
    }
    let squares = 0;
    for (const component of vector) squares += component * component;
    if (squares === 0) return vector;
    const norm = Math.sqrt(squares);
    return vector.map((component) => component / norm);
  }
}

/** 32-bit FNV-1a over UTF-16 code units: tiny, fast and stable everywhere. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash;
}

/** MurmurHash3's finaliser: spreads FNV's weak low bits over the whole word. */
function mix(value: number): number {
  let hash = value;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash;
}
