import type { ModelMessage } from 'ai';
import { InvalidMessageError, MessageDecodingError } from './chat-memory-errors.ts';
import { messageShapeProblem } from './message-shape.ts';

/*
 * The stored form of a message is JSON text. Values JSON cannot carry are
 * written as tagged objects `{ "$governor": <tag>, ... }` so that decoding
 * gives back a message that is deep-equal to the one stored:
 *
 *   Uint8Array      { "$governor": "bytes", "base64": "..." }
 *   Buffer          { "$governor": "buffer", "base64": "..." }
 *   ArrayBuffer     { "$governor": "array-buffer", "base64": "..." }
 *   URL             { "$governor": "url", "href": "..." }
 *   Date            { "$governor": "date", "time": <number or tagged number> }
 *   undefined       { "$governor": "undefined" }   (JSON would drop or null it)
 *   NaN, ±Infinity, -0  { "$governor": "number", "value": "NaN" | "Infinity" | "-Infinity" | "-0" }
 *   a plain object that itself has a "$governor" key
 *                   { "$governor": "object", "value": { ...its entries, encoded } }
 *
 * The last rule is what makes the format unambiguous: user data can never be
 * mistaken for a tag.
 */

const TAG = '$governor';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Encodes one message into its stored form.
 *
 * @param index position of the message in the caller's batch, used in errors.
 * @throws {InvalidMessageError} when the value is not a chat message or holds
 *   something with no faithful stored form.
 */
export function encodeMessage(message: ModelMessage, index = 0): string {
  const problem = messageShapeProblem(message);
  if (problem !== undefined) throw new InvalidMessageError(index, '', problem);
  return JSON.stringify(encodeValue(message, '', index, new Set()));
}

/**
 * Encodes a batch, all or nothing: every message is checked before anything
 * is returned, so a caller that writes the result never writes half a batch.
 */
export function encodeMessages(messages: readonly ModelMessage[]): string[] {
  if (!Array.isArray(messages)) {
    throw new InvalidMessageError(0, '', 'expected an array of messages');
  }
  return messages.map((message, index) => encodeMessage(message, index));
}

/**
 * Decodes a message from its stored form.
 *
 * @throws {MessageDecodingError} when the text is not a stored message.
 */
export function decodeMessage(stored: string): ModelMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch (error) {
    throw new MessageDecodingError('not JSON', { cause: error });
  }
  const message = decodeValue(parsed as Json);
  const problem = messageShapeProblem(message);
  if (problem !== undefined) throw new MessageDecodingError(problem);
  return message as ModelMessage;
}

/**
 * Decodes a conversation's stored messages, oldest first. `store` names the
 * store for the error: a message that does not decode is reported with the
 * store, the conversation and its position, so the row can be found.
 *
 * @throws {MessageDecodingError} when a text is not a stored message.
 */
export function decodeConversation(stored: readonly string[], store: string, conversationId: string): ModelMessage[] {
  return stored.map((text, index) => {
    try {
      return decodeMessage(text);
    } catch (error) {
      if (!MessageDecodingError.isInstance(error)) throw error;
      throw new MessageDecodingError(error.problem, {
        cause: error.cause,
        where: `${store}, conversation ${JSON.stringify(conversationId)}, message ${index + 1} of ${stored.length}`,
      });
    }
  });
}

function encodeValue(value: unknown, path: string, index: number, ancestors: Set<object>): Json {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return encodeNumber(value);
    case 'undefined':
      return { [TAG]: 'undefined' };
    case 'object':
      break;
    default:
      throw new InvalidMessageError(index, path, `a ${typeof value} has no stored form; use JSON values`);
  }
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return { [TAG]: 'buffer', base64: value.toString('base64') };
  if (value instanceof Uint8Array && value.constructor === Uint8Array) {
    return { [TAG]: 'bytes', base64: toBase64(value) };
  }
  if (value instanceof ArrayBuffer) return { [TAG]: 'array-buffer', base64: toBase64(new Uint8Array(value)) };
  if (value instanceof URL) return { [TAG]: 'url', href: value.href };
  if (value instanceof Date) return { [TAG]: 'date', time: encodeNumber(value.getTime()) };

  if (ancestors.has(value)) throw new InvalidMessageError(index, path, 'circular reference');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items: Json[] = [];
      for (let i = 0; i < value.length; i++) {
        items.push(encodeValue(value[i], `${path}[${i}]`, index, ancestors));
      }
      return items;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      const kind = (value as { constructor?: { name?: unknown } }).constructor?.name;
      throw new InvalidMessageError(
        index,
        path,
        `a ${typeof kind === 'string' ? kind : 'class instance'} has no stored form; ` +
          'use plain objects, arrays, strings, numbers, booleans, null, Uint8Array, ArrayBuffer, URL or Date',
      );
    }
    // fromEntries defines keys, where assignment would run the `__proto__` setter and lose an own `__proto__` key.
    const entries: { [key: string]: Json } = Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, encodeValue(item, path === '' ? key : `${path}.${key}`, index, ancestors)]),
    );
    return Object.hasOwn(value, TAG) ? { [TAG]: 'object', value: entries } : entries;
  } finally {
    ancestors.delete(value);
  }
}

function encodeNumber(value: number): Json {
  if (Number.isFinite(value) && !Object.is(value, -0)) return value;
  return { [TAG]: 'number', value: Object.is(value, -0) ? '-0' : String(value) };
}

function decodeValue(value: Json): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodeValue);
  if (!Object.hasOwn(value, TAG)) return decodeEntries(value);

  const tag = value[TAG];
  switch (tag) {
    case 'bytes':
      return new Uint8Array(fromBase64(value.base64));
    case 'buffer':
      return fromBase64(value.base64);
    case 'array-buffer': {
      const bytes = new Uint8Array(fromBase64(value.base64));
      return bytes.buffer;
    }
    case 'url':
      if (typeof value.href !== 'string') throw new MessageDecodingError('url tag without href');
      return new URL(value.href);
    case 'date':
      return new Date(decodeNumber(value.time));
    case 'undefined':
      return undefined;
    case 'number':
      return decodeNumber(value);
    case 'object': {
      const inner = value.value;
      if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
        throw new MessageDecodingError('object tag without an object value');
      }
      return decodeEntries(inner);
    }
    default:
      throw new MessageDecodingError(`unknown tag ${JSON.stringify(tag)}`);
  }
}

function decodeEntries(value: { [key: string]: Json }): Record<string, unknown> {
  // Defined, not assigned: see encodeValue.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, decodeValue(item)]));
}

function decodeNumber(value: Json | undefined): number {
  if (typeof value === 'number') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && value[TAG] === 'number') {
    switch (value.value) {
      case 'NaN':
        return Number.NaN;
      case 'Infinity':
        return Number.POSITIVE_INFINITY;
      case '-Infinity':
        return Number.NEGATIVE_INFINITY;
      case '-0':
        return -0;
    }
  }
  throw new MessageDecodingError('malformed number');
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function fromBase64(value: Json | undefined): Buffer {
  if (typeof value !== 'string') throw new MessageDecodingError('binary tag without base64 data');
  return Buffer.from(value, 'base64');
}
