import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { MessageTooLargeError } from './chat-memory-errors.ts';
import { encodeMessages } from './message-codec.ts';

/** Default limit on one message's stored size: 1 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * Checks a batch before it is written: every message must be storable and no
 * larger than `maxMessageBytes` in its stored form (UTF-8 bytes of the encoded
 * message, binary data as base64).
 *
 * @throws {InvalidMessageError} when a message cannot be stored.
 * @throws {MessageTooLargeError} when a message is over the limit.
 */
export function assertMessagesFit(messages: readonly ModelMessage[], maxMessageBytes: number): void {
  const encoded = encodeMessages(messages);
  for (let index = 0; index < encoded.length; index++) {
    const bytes = Buffer.byteLength(encoded[index] ?? '', 'utf8');
    if (bytes > maxMessageBytes) throw new MessageTooLargeError(index, bytes, maxMessageBytes);
  }
}

/** Validates the `maxMessageBytes` option and applies its default. */
export function resolveMaxMessageBytes(value: number | undefined): number {
  const resolved = value ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(resolved) || resolved <= 0) {
    throw new InvalidOptionError('maxMessageBytes', `must be a positive integer, got ${String(value)}`);
  }
  return resolved;
}
