import { GovernorError } from '../errors/governor-error.ts';

/**
 * Thrown when a conversation id is missing, not a string, blank, not
 * well-formed UTF-16, holds U+0000, or is over 1024 UTF-8 bytes. Nothing is
 * read or written.
 */
export class InvalidConversationIdError extends GovernorError {
  /** @param fix what to pass instead; the default fits a missing or blank id. */
  constructor(problem: string, fix = 'Pass a non-blank string that names the conversation.') {
    super('GOVERNOR_INVALID_CONVERSATION_ID', `Invalid conversation id: ${problem}. ${fix}`);
  }
}

/**
 * Thrown when a message cannot be stored as it is: not a chat message, or
 * holding a value that has no faithful stored form (a function, a bigint, a
 * circular reference, a class instance other than `Uint8Array`, `ArrayBuffer`,
 * `URL` or `Date`). Nothing of the batch is written.
 */
export class InvalidMessageError extends GovernorError {
  /** Position of the offending message in the batch that was passed in. */
  readonly index: number;
  /** Where inside the message the problem is, e.g. `content[1].input.when`. */
  readonly path: string;

  constructor(index: number, path: string, problem: string) {
    super('GOVERNOR_INVALID_MESSAGE', `Message ${index} cannot be stored: ${path === '' ? '' : `at ${path}: `}${problem}`);
    this.index = index;
    this.path = path;
  }
}

/**
 * Thrown when one message is larger than the memory's `maxMessageBytes`.
 * Nothing of the batch is written. The memory advisors throw it for the
 * caller's messages before the model is called; what the call produces is
 * stored with its oversized parts left out instead.
 */
export class MessageTooLargeError extends GovernorError {
  /** Position of the offending message in the batch that was passed in. */
  readonly index: number;
  /** Size of the message in its stored form (UTF-8 bytes). */
  readonly bytes: number;
  /** The configured limit. */
  readonly maxBytes: number;

  constructor(index: number, bytes: number, maxBytes: number) {
    super(
      'GOVERNOR_MESSAGE_TOO_LARGE',
      `Message ${index} is too large to store: ${bytes} bytes, the limit (maxMessageBytes) is ${maxBytes}. ` +
        'Store large files elsewhere and reference them by URL, or raise maxMessageBytes.',
    );
    this.index = index;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** Thrown when stored data cannot be read back as a message (written by something else, or damaged). */
export class MessageDecodingError extends GovernorError {
  constructor(problem: string, options?: { cause?: unknown }) {
    super('GOVERNOR_MESSAGE_DECODING', `Stored chat message cannot be decoded: ${problem}`, options);
  }
}

/**
 * Thrown when the store behind a repository fails or cannot be reached.
 * The message names the store and its address (never credentials); the
 * driver's error is the `cause`.
 */
export class ChatMemoryStoreError extends GovernorError {
  /** The store, e.g. `PostgreSQL at 127.0.0.1:5432/app`. */
  readonly store: string;

  constructor(store: string, operation: string, cause: unknown) {
    super('GOVERNOR_CHAT_MEMORY_STORE', `Chat memory store ${store} failed to ${operation}: ${describeCause(cause)}`, { cause });
    this.store = store;
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    // Node reports a refused dual-stack connect as an AggregateError with an empty message.
    return cause.errors.map(describeCause).join('; ');
  }
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const text = cause.message !== '' ? cause.message : cause.name;
    return typeof code === 'string' && !text.includes(code) ? `${code} ${text}` : text;
  }
  return String(cause);
}
