import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';

/**
 * An embedding vector does not have the length a store or embedder expects —
 * usually a store configured for one embedding model fed by another. Thrown
 * before anything is written or queried.
 */
export class EmbeddingDimensionMismatchError extends GovernorError {
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
