import type { JSONValue } from '@ai-sdk/provider';

/** A JSON value, as stored in a document's metadata. */
export type MetadataValue = JSONValue;

/**
 * Free-form facts about a document (source, author, date…), as plain JSON
 * data: plain objects, arrays, strings, finite numbers, booleans and null. A
 * date goes in as an ISO-8601 string (`date.toISOString()`), which range
 * filters order correctly; a Date, Map, Set or other object is refused.
 */
export type DocumentMetadata = Record<string, MetadataValue>;

/**
 * A piece of text a vector store can find again by meaning, with the facts a
 * filter can select it by.
 */
export interface Document {
  /** Stable id; adding a document with an id that exists replaces it. */
  readonly id: string;
  /** The text that is embedded and returned to the model. */
  readonly text: string;
  /** JSON metadata; filters match against it. `{}` when the document was added without any. */
  readonly metadata: DocumentMetadata;
  /**
   * Cosine similarity to the query (higher = closer, at most 1). Set on
   * documents returned by a search, absent on documents you add.
   */
  readonly score?: number;
}

/**
 * A document to add to a vector store: a {@link Document} whose `metadata`
 * may be left out, for a document with none (stored, and returned, as `{}`).
 * A `score` given here is ignored.
 */
export interface DocumentInput extends Omit<Document, 'metadata'> {
  /**
   * JSON metadata; filters match against it.
   * @default {}
   */
  readonly metadata?: DocumentMetadata;
}
