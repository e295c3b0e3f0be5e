import { InvalidOptionError } from '../errors/governor-error.ts';
import type { Document, DocumentInput } from './document.ts';
import { parseMetadataFilter, storableStringProblem, type FilterNode, type MetadataFilter } from './metadata-filter.ts';

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
   * A document without `metadata` is stored with none (`{}`).
   */
  add(documents: readonly DocumentInput[], options?: AddDocumentsOptions): Promise<void>;
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
 * Validates documents before they are embedded, gives those without metadata
 * `{}`, and keeps the last document of each id, so that a batch behaves like
 * one upsert after another.
 */
export function prepareDocuments(documents: readonly DocumentInput[]): Document[] {
  if (!Array.isArray(documents)) {
    throw new InvalidOptionError('documents', 'expected an array of documents');
  }
  const byId = new Map<string, Document>();
  for (const [index, document] of (documents as readonly unknown[]).entries()) {
    const where = `documents[${index}]`;
    if (typeof document !== 'object' || document === null) {
      throw new InvalidOptionError(where, 'expected a document { id, text, metadata? }');
    }
    const { id, text, metadata = {} } = document as Partial<DocumentInput>;
    if (typeof id !== 'string' || id.length === 0) {
      throw new InvalidOptionError(`${where}.id`, 'expected a non-empty string');
    }
    if (typeof text !== 'string') {
      throw new InvalidOptionError(`${where}.text`, `expected a string, got ${typeof text}`);
    }
    const idProblem = storableStringProblem(id);
    if (idProblem !== undefined) throw new InvalidOptionError(`${where}.id`, idProblem);
    const textProblem = storableStringProblem(text);
    if (textProblem !== undefined) throw new InvalidOptionError(`${where}.text`, textProblem);
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      throw new InvalidOptionError(`${where}.metadata`, 'expected an object, or none (leave it out)');
    }
    byId.delete(id);
    byId.set(id, { id, text, metadata: copyMetadata(metadata, `${where}.metadata`) });
  }
  return [...byId.values()];
}

/**
 * A JSON copy of the metadata: it gives every store the same view of it
 * (what PostgreSQL's jsonb keeps) and detaches it from the caller. Values
 * JSON would silently change (`NaN` and `Infinity` become null, functions
 * vanish, `undefined` in an array becomes null) are rejected instead, as
 * filters reject them; a key set to `undefined` is an optional field not set,
 * and is left out.
 *
 * @param where - the option path of the metadata, for error messages.
 */
function copyMetadata(metadata: object, where: string): Document['metadata'] {
  // The replacer sees every key and value after toJSON; paths of the objects
  // it has entered let an error name the exact field.
  const paths = new Map<unknown, string>();
  const replacer = function (this: unknown, key: string, value: unknown): unknown {
    const holder = paths.get(this);
    if (holder === undefined) {
      paths.set(value, where);
      return value;
    }
    if (!Array.isArray(this)) {
      const keyProblem = storableStringProblem(key);
      if (keyProblem !== undefined) throw new InvalidOptionError(holder, `a key ${keyProblem}`);
    }
    const path = Array.isArray(this) ? `${holder}[${key}]` : `${holder}.${key}`;
    // An object's key set to undefined is an optional field not set: left out, as JSON leaves it out.
    // In an array JSON would turn it into null, a value it never was.
    if (value === undefined) {
      if (!Array.isArray(this)) return undefined;
      throw new InvalidOptionError(path, 'is undefined, which JSON metadata cannot hold in an array; remove it or give it a value');
    }
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw new InvalidOptionError(path, `is a ${typeof value}, which JSON metadata cannot hold`);
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new InvalidOptionError(path, `${value} cannot be stored in JSON metadata; use a finite number`);
    }
    if (typeof value === 'string') {
      const problem = storableStringProblem(value);
      if (problem !== undefined) throw new InvalidOptionError(path, problem);
    }
    if (typeof value === 'object' && value !== null) paths.set(value, path);
    return value;
  };
  let json: string;
  try {
    json = JSON.stringify(metadata, replacer);
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError(where, `must be JSON-serialisable (${(error as Error).message})`);
  }
  return JSON.parse(json) as Document['metadata'];
}

/** Validates the ids given to {@link VectorStore.delete}. */
export function checkIds(ids: readonly string[]): readonly string[] {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new InvalidOptionError('ids', 'expected an array of document ids (strings)');
  }
  // No store holds such an id, and PostgreSQL would rewrite a lone surrogate
  // and delete some other document.
  for (const [index, id] of ids.entries()) {
    const problem = storableStringProblem(id);
    if (problem !== undefined) throw new InvalidOptionError(`ids[${index}]`, problem);
  }
  return ids;
}
