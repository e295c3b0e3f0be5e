import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { describeError } from '../errors/describe-error.ts';

/**
 * An embedding vector does not have the length a store or embedder expects —
 * usually a store configured for one embedding model fed by another. Thrown
 * before anything is written or queried.
 */
export class EmbeddingDimensionMismatchError extends GovernorError {
  declare readonly code: 'GOVERNOR_EMBEDDING_DIMENSION_MISMATCH';
  /** The vector length the store (or embedder) is configured for. */
  readonly expected: number;
  /** The vector length that was produced. */
  readonly actual: number;

  constructor(expected: number, actual: number, where: string) {
    super(
      'GOVERNOR_EMBEDDING_DIMENSION_MISMATCH',
      `${where}: expected an embedding of ${expected} dimensions, got ${actual}. ` +
        'Use the same embedding model (and output size) for adding and searching, ' +
        'or configure the store for this size.',
    );
    this.expected = expected;
    this.actual = actual;
  }
}

/** An embedder returned something that is not one finite vector per text. */
export class InvalidEmbeddingError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_EMBEDDING';
  constructor(problem: string) {
    super('GOVERNOR_INVALID_EMBEDDING', `Invalid embedding: ${problem}`);
  }
}

/**
 * A metadata filter is malformed: an unknown operator, a key that is not a
 * plain metadata key, or an operand of the wrong type. `option` is the path
 * to the culprit inside the filter, e.g. `filter.$or[1].year.$gt`.
 */
export class InvalidMetadataFilterError extends InvalidOptionError {}

/**
 * Thrown when the database behind a vector store fails or cannot be reached:
 * a missing extension, refused credentials, a server that is down or does not
 * answer in time, a statement it rejects. The message names the store and its
 * address (never credentials), the operation, what went wrong and, when it is
 * known, what to do; the driver's error is the `cause`.
 */
export class VectorStoreError extends GovernorError {
  declare readonly code: 'GOVERNOR_VECTOR_STORE';
  /** The store, e.g. `PostgreSQL at 127.0.0.1:5432/app (table governor_vector_store)`. */
  readonly store: string;

  /**
   * @param operation what the store was doing, completing "failed to …"
   * @param advice what to do about it, when the cause says
   */
  constructor(store: string, operation: string, cause: unknown, advice?: string) {
    super('GOVERNOR_VECTOR_STORE', `Vector store ${store} failed to ${operation}: ${describeError(cause)}${advice === undefined ? '' : `. ${advice}`}`, {
      cause,
    });
    this.store = store;
  }
}
