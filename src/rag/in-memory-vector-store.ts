import type { Document, DocumentInput } from './document.ts';
import { embedChecked, type Embedder } from './embedder.ts';
import { LexicalHashEmbedding } from './lexical-hash-embedding.ts';
import { compareCodePoints, evaluateFilter } from './metadata-filter.ts';
import { EmbeddingDimensionMismatchError } from './retrieval-errors.ts';
import { checkIds, prepareDocuments, resolveSearchRequest, type AddDocumentsOptions, type SearchRequest, type VectorStore } from './vector-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link InMemoryVectorStore}. */
export interface InMemoryVectorStoreOptions {
  /**
   * Embeds documents and queries.
   * @default a {@link LexicalHashEmbedding} (256 dimensions): offline and lexical, not semantic
   */
  readonly embedder?: Embedder;
}

interface Entry {
  readonly document: Document;
  readonly vector: readonly number[];
  /** The vector's dot product with itself: its length squared. */
  readonly squaredNorm: number;
}

/** What each option of InMemoryVectorStore accepts. */
const IN_MEMORY_VECTOR_STORE_OPTION_RULES: OptionRules<InMemoryVectorStoreOptions> = {
  embedder: is.having('an Embedder (with embed(texts))', 'embed'),
};

/**
 * A vector store in process memory: exact (brute-force) cosine search, for
 * tests, demos and small corpora. Contents are lost when the process ends.
 *
 * The vector length is fixed by the embedder (or by the first vectors it
 * returns); a vector of another length is rejected with
 * `EmbeddingDimensionMismatchError` before the store changes.
 */
export class InMemoryVectorStore implements VectorStore {
  readonly #embedder: Embedder;
  readonly #entries = new Map<string, Entry>();
  #dimensions: number | undefined;

  constructor(options: InMemoryVectorStoreOptions = {}) {
    validateOptions('InMemoryVectorStore', options, IN_MEMORY_VECTOR_STORE_OPTION_RULES);
    this.#embedder = options.embedder ?? new LexicalHashEmbedding();
  }

  /** Number of stored documents. */
  get size(): number {
    return this.#entries.size;
  }

  async add(documents: readonly DocumentInput[], options: AddDocumentsOptions = {}): Promise<void> {
    const prepared = prepareDocuments(documents);
    if (prepared.length === 0) return;
    const vectors = await embedChecked(
      this.#embedder,
      prepared.map((document) => document.text),
      this.#expectedDimensions(),
      'document embeddings',
      options.signal,
    );
    const length = vectors[0]?.length;
    // A concurrent first add may have fixed the length while this one awaited its vectors.
    if (this.#dimensions !== undefined && length !== undefined && length !== this.#dimensions) {
      throw new EmbeddingDimensionMismatchError(this.#dimensions, length, 'document embeddings');
    }
    this.#dimensions ??= length;
    prepared.forEach((document, index) => {
      const vector = vectors[index] ?? [];
      this.#entries.set(document.id, { document, vector: [...vector], squaredNorm: dot(vector, vector) });
    });
  }

  async delete(ids: readonly string[]): Promise<void> {
    for (const id of checkIds(ids)) this.#entries.delete(id);
  }

  async similaritySearch(request: SearchRequest): Promise<Document[]> {
    const search = resolveSearchRequest(request);
    if (search.blank) return [];
    const [query] = await embedChecked(this.#embedder, [search.query], this.#expectedDimensions(), 'query embedding', search.signal);
    const querySquaredNorm = dot(query ?? [], query ?? []);
    // A query without a direction (e.g. only punctuation) is similar to nothing.
    if (query === undefined || querySquaredNorm === 0) return [];
    // The first add may have fixed the length while this search awaited its vector.
    if (this.#dimensions !== undefined && query.length !== this.#dimensions) {
      throw new EmbeddingDimensionMismatchError(this.#dimensions, query.length, 'query embedding');
    }

    const hits: { entry: Entry; score: number }[] = [];
    for (const entry of this.#entries.values()) {
      // A stored zero vector has no direction, so no query is similar to it.
      if (entry.squaredNorm === 0) continue;
      if (search.filter !== undefined && !evaluateFilter(search.filter, entry.document.metadata)) continue;
      const score = cosineSimilarity(dot(query, entry.vector), querySquaredNorm, entry.squaredNorm);
      // On the distance, as PgVectorStore's SQL compares: both stores keep the same documents at a threshold.
      if (search.similarityThreshold > 0 && 1 - score > 1 - search.similarityThreshold) continue;
      hits.push({ entry, score });
    }
    // Ties go by id in code-point order, as PgVectorStore orders them (COLLATE "C").
    hits.sort((a, b) => b.score - a.score || compareCodePoints(a.entry.document.id, b.entry.document.id));
    return hits.slice(0, search.topK).map(({ entry, score }) => ({
      id: entry.document.id,
      text: entry.document.text,
      metadata: structuredClone(entry.document.metadata),
      score,
    }));
  }

  #expectedDimensions(): number | undefined {
    return this.#dimensions ?? this.#embedder.dimensions;
  }
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/**
 * Cosine similarity as pgvector computes it, so that both stores score alike:
 * `dot / sqrt(|a|² · |b|²)`, not `dot / (|a| · |b|)`, whose rounding scores
 * identical vectors 0.9999999999999998 or 1.0000000000000002 (and misses
 * them at a threshold of 1); the square root of a square is exact, so
 * identical vectors score exactly 1. What rounding still leaves outside
 * [-1, 1] is clamped, as pgvector does.
 */
function cosineSimilarity(dotProduct: number, aSquaredNorm: number, bSquaredNorm: number): number {
  const product = aSquaredNorm * bSquaredNorm;
  // Vectors so long or so short that the product leaves the double range: the two roots stay within it.
  const denominator = Number.isFinite(product) && product > 0 ? Math.sqrt(product) : Math.sqrt(aSquaredNorm) * Math.sqrt(bSquaredNorm);
  return Math.min(1, Math.max(-1, dotProduct / denominator));
}
