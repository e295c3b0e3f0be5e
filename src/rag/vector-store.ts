import { InvalidOptionError } from '../errors/governor-error.ts';
import type { Document } from './document.ts';
import { parseMetadataFilter, type FilterNode, type MetadataFilter } from './metadata-filter.ts';

/** Number of documents a search returns unless it says otherwise. */
export const DEFAULT_TOP_K = 4;

/** Similarity threshold that accepts every document, whatever its score. */
export const SIMILARITY_THRESHOLD_ACCEPT_ALL = 0;

/** What to look for in a {@link VectorStore}. */
export interface SearchRequest {
  /**
   * The text to find similar documents for. A query that is empty or only
   * whitespace finds nothing (and embeds nothing).
   */
  readonly query: string;
  /**
   * Most documents to return, best first.
   * @default 4
   */
  readonly topK?: number;
  /**
   * Lowest cosine similarity a document needs to be returned, from 0 to 1.
   * `0` accepts every document, including those with a negative similarity.
   * @default 0
   */
  readonly similarityThreshold?: number;
  /**
   * Only documents whose metadata match.
   * @default no filter
   */
  readonly filter?: MetadataFilter;
  /** Cancels the search (passed to the embedder). */
  readonly signal?: AbortSignal;
}

/** Options of {@link VectorStore.add}. */
export interface AddDocumentsOptions {
  /** Cancels embedding before anything is written. */
  readonly signal?: AbortSignal;
}

/**
 * Stores documents with their embeddings and finds the ones closest to a
 * query. Every implementation gives filters, scores, `topK` and thresholds the
 * same meaning, so stores can be swapped without changing results.
 */
export interface VectorStore {
  /**
   * Embeds and stores documents. A document whose id is already stored
   * replaces it (within one batch, the last one with an id wins). A document
   * whose embedding is the zero vector (for `LexicalHashEmbedding`, a text
   * without a single word) is stored but never found: it has no direction.
   */
  add(documents: readonly Document[], options?: AddDocumentsOptions): Promise<void>;
  /** Removes documents by id; unknown ids are ignored. */
  delete(ids: readonly string[]): Promise<void>;
  /**
   * The documents most similar to the query, best first, each with its
   * `score` (cosine similarity, higher = closer).
   */
  similaritySearch(request: SearchRequest): Promise<Document[]>;
}

/** A search request with its defaults applied and its filter validated. */
export interface ResolvedSearchRequest {
  readonly query: string;
  /** Whether the query holds anything to search for. */
  readonly blank: boolean;
  readonly topK: number;
  readonly similarityThreshold: number;
  readonly filter: FilterNode | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * Validates a search request and applies the defaults, so that every store
 * rejects the same bad input with the same error.
 */
export function resolveSearchRequest(request: SearchRequest): ResolvedSearchRequest {
  if (typeof request !== 'object' || request === null) {
    throw new InvalidOptionError('request', 'expected a search request object such as { query: "..." }');
  }
  if (typeof request.query !== 'string') {
    throw new InvalidOptionError('query', `expected a string, got ${typeof request.query}`);
  }
  const topK = request.topK ?? DEFAULT_TOP_K;
  if (!Number.isSafeInteger(topK) || topK < 1) {
    throw new InvalidOptionError('topK', `expected a positive integer, got ${String(topK)}`);
  }
  const similarityThreshold = request.similarityThreshold ?? SIMILARITY_THRESHOLD_ACCEPT_ALL;
  if (typeof similarityThreshold !== 'number' || !(similarityThreshold >= 0 && similarityThreshold <= 1)) {
    throw new InvalidOptionError('similarityThreshold', `expected a number from 0 (accept all) to 1, got ${String(similarityThreshold)}`);
  }
  return {
    query: request.query,
    blank: request.query.trim().length === 0,
    topK,
    similarityThreshold,
    filter: request.filter === undefined ? undefined : parseMetadataFilter(request.filter),
    signal: request.signal,
  };
}

/**
 * Validates documents before they are embedded and keeps the last document
 * of each id, so that a batch behaves like one upsert after another.
 */
export function prepareDocuments(documents: readonly Document[]): Document[] {
  if (!Array.isArray(documents)) {
    throw new InvalidOptionError('documents', 'expected an array of documents');
  }
  const byId = new Map<string, Document>();
  for (const [index, document] of (documents as readonly unknown[]).entries()) {
    const where = `documents[${index}]`;
    if (typeof document !== 'object' || document === null) {
      throw new InvalidOptionError(where, 'expected a document { id, text, metadata }');
    }
    const { id, text, metadata } = document as Partial<Document>;
    if (typeof id !== 'string' || id.length === 0) {
      throw new InvalidOptionError(`${where}.id`, 'expected a non-empty string');
    }
    if (typeof text !== 'string') {
      throw new InvalidOptionError(`${where}.text`, `expected a string, got ${typeof text}`);
    }
    if (id.includes(NUL) || text.includes(NUL)) {
      throw new InvalidOptionError(`${where}.${id.includes(NUL) ? 'id' : 'text'}`, NUL_PROBLEM);
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      throw new InvalidOptionError(`${where}.metadata`, 'expected an object (use {} for none)');
    }
    // A JSON round trip gives every store the same view of the metadata
    // (what PostgreSQL's jsonb would keep) and detaches it from the caller.
    let copy: Document['metadata'];
    try {
      copy = JSON.parse(JSON.stringify(metadata)) as Document['metadata'];
    } catch (error) {
      throw new InvalidOptionError(`${where}.metadata`, `must be JSON-serialisable (${(error as Error).message})`);
    }
    if (holdsNul(copy)) throw new InvalidOptionError(`${where}.metadata`, NUL_PROBLEM);
    byId.delete(id);
    byId.set(id, { id, text, metadata: copy });
  }
  return [...byId.values()];
}

/**
 * PostgreSQL cannot store U+0000 in text or jsonb; rejecting it everywhere
 * keeps every store accepting exactly the same documents.
 */
const NUL = '\u0000';
const NUL_PROBLEM = 'contains the character U+0000, which PostgreSQL cannot store; remove it';

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  if (Array.isArray(value)) return value.some(holdsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, item]) => key.includes(NUL) || holdsNul(item));
  }
  return false;
}

/** Validates the ids given to {@link VectorStore.delete}. */
export function checkIds(ids: readonly string[]): readonly string[] {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new InvalidOptionError('ids', 'expected an array of document ids (strings)');
  }
  return ids;
}
