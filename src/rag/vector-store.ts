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
 * same meaning, so an exact store (`InMemoryVectorStore`, a `PgVectorStore`
 * with `createIndex: 'none'`) can replace another without changing results.
 * An approximate index (a `PgVectorStore`'s default HNSW index) trades that
 * for speed: it may miss some of the best documents and return lower-scoring
 * ones in their place, so its results can differ from an exact search.
 */
export interface VectorStore {
  /**
   * Embeds and stores documents. A document whose id is already stored
   * replaces it (within one batch, the last one with an id wins). A document
   * whose embedding is the zero vector (for `LexicalHashEmbedding`, a text
   * without a single word) is stored but never found: it has no direction.
   * A document without `metadata` is stored with none (`{}`). Metadata is
   * plain JSON data: a value JSON would change (`NaN`, a function, a Map, a
   * Date, a typed array, a class instance, a cycle…) fails the whole call
   * with an `InvalidOptionError` naming the field, before anything is embedded.
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
    byId.delete(id);
    byId.set(id, { id, text, metadata: copyMetadata(metadata, `${where}.metadata`) });
  }
  return [...byId.values()];
}

/**
 * A JSON copy of the metadata: it gives every store the same view of it
 * (what PostgreSQL's jsonb keeps) and detaches it from the caller. Values
 * JSON would silently change are rejected instead, as filters reject them:
 * `NaN` and `Infinity` (null in JSON), functions (left out), `undefined` in
 * an array (null), and every object but a plain array or a plain object
 * (a Map or Set becomes `{}`, a Date a string, a typed array an object of
 * indices). A key set to `undefined` is an optional field not set, and is
 * left out.
 *
 * @param where - the option path of the metadata, for error messages.
 */
function copyMetadata(metadata: unknown, where: string): Document['metadata'] {
  if (!isPlainObject(metadata)) {
    const kind = notJsonKind(metadata);
    throw new InvalidOptionError(where, kind === undefined ? 'expected an object, or none (leave it out)' : `expected a plain object, got ${kind}`);
  }
  try {
    return copyValue(metadata, where, new Set()) as Document['metadata'];
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    // A getter that throws, or nesting deeper than the stack.
    throw new InvalidOptionError(where, `must be JSON-serialisable (${(error as Error).message})`);
  }
}

/** Copies one metadata value, checking it; `enclosing` holds the objects it lies within, to tell a cycle. */
function copyValue(value: unknown, path: string, enclosing: Set<object>): unknown {
  switch (typeof value) {
    case 'string': {
      const problem = storableStringProblem(value);
      if (problem !== undefined) throw new InvalidOptionError(path, problem);
      return value;
    }
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidOptionError(path, `${value} cannot be stored in JSON metadata; use a finite number`);
      return value;
    case 'boolean':
      return value;
    case 'bigint':
      throw new InvalidOptionError(path, 'is a bigint, which JSON metadata cannot hold; store it as a string (String(n)), or a number if it is safe');
    case 'function':
    case 'symbol':
      throw new InvalidOptionError(path, `is a ${typeof value}, which JSON metadata cannot hold`);
    case 'undefined':
      // Only reached in an array: an object's key set to undefined is left out before.
      throw new InvalidOptionError(path, 'is undefined, which JSON metadata cannot hold in an array; remove it or give it a value');
  }
  if (value === null) return null;
  const object = value as object;
  if (enclosing.has(object)) {
    throw new InvalidOptionError(path, 'refers back to an object it is inside of (a cycle), which JSON metadata cannot hold; store a copy or an id');
  }
  const kind = notJsonKind(object);
  if (kind !== undefined) throw new InvalidOptionError(path, `is ${kind}`);
  enclosing.add(object);
  let copy: unknown;
  if (Array.isArray(object)) {
    // Indices, not for...of or map: a hole must be seen, as JSON would make it null.
    const items: unknown[] = [];
    for (let index = 0; index < object.length; index++) items.push(copyValue(object[index], `${path}[${index}]`, enclosing));
    copy = items;
  } else {
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(object)) {
      const keyProblem = storableStringProblem(key);
      if (keyProblem !== undefined) throw new InvalidOptionError(path, `a key ${keyProblem}`);
      // An optional field not set: left out, as JSON leaves it out.
      if (item !== undefined) entries.push([key, copyValue(item, `${path}.${key}`, enclosing)]);
    }
    // fromEntries defines keys, so an own "__proto__" key stays a key, as JSON.parse keeps it.
    copy = Object.fromEntries(entries);
  }
  enclosing.delete(object);
  return copy;
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * What `value` is, with what to pass instead, when it is an object JSON would
 * not store as it is; `undefined` for a plain object or array, or no object.
 */
function notJsonKind(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isPlainObject(value)) return undefined;
  const cannot = 'which JSON metadata cannot hold';
  if (value instanceof Map) return `a Map, ${cannot} (it would be stored as {}); pass a plain object, Object.fromEntries(map)`;
  if (value instanceof Set) return `a Set, ${cannot} (it would be stored as {}); pass an array, [...set]`;
  if (value instanceof Date) {
    return `a Date, ${cannot} as a date (it would come back as a string); pass date.toISOString(), which range filters order correctly`;
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
    return `binary data, ${cannot} (it would be stored as an object of indices, or {}); pass an array of numbers, Array.from(bytes), or a base64 string`;
  }
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const what = typeof name === 'string' && name !== '' ? `a ${name}` : 'an object that is not a plain object';
  return `${what}, ${cannot} as it is (JSON would keep only its own fields, or what its toJSON returns); pass a plain object or an array`;
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
