import type { ModelMessage } from 'ai';
import { stringifyWithBigIntAndCycles } from '@ai-sdk/provider-utils';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { InvalidMessageError, MessageTooLargeError } from './chat-memory-errors.ts';
import { encodeMessage, encodeMessages } from './message-codec.ts';

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

type Part = Record<string, unknown> & { readonly type: string };

/**
 * Copies of `messages` that fit `maxMessageBytes`: in a message over the
 * limit, the largest parts are replaced, one at a time, by a placeholder that
 * says what was left out and how large it was, until the message fits. Tool
 * calls and results keep their ids and tool names, so the history stays
 * well-formed. Messages within the limit are returned as they are.
 *
 * For what a call produced (answers, tool results): the call has been paid
 * for and its tools have run, so a shortened record beats none. A message
 * that still does not fit (a limit smaller than the placeholders) is returned
 * as far as it could be shrunk, for `add` to refuse.
 *
 * @throws {InvalidMessageError} when a message cannot be stored at all.
 */
export function fitMessages(messages: readonly ModelMessage[], maxMessageBytes: number): ModelMessage[] {
  return messages.map((message, index) => fitMessage(message, index, maxMessageBytes));
}

function fitMessage(produced: ModelMessage, index: number, maxBytes: number): ModelMessage {
  const message = asSent(produced, index);
  let bytes = storedBytes(message, index);
  if (bytes <= maxBytes) return message;
  if (typeof message.content === 'string') {
    return { ...message, content: placeholder('text', bytes, maxBytes) } as ModelMessage;
  }

  const parts = [...(message.content as readonly Part[])];
  const wrapper = storedBytes({ role: message.role, content: [] } as ModelMessage, index);
  const sizes = parts.map((part) => storedBytes({ role: message.role, content: [part] } as ModelMessage, index) - wrapper);
  const largestFirst = parts.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!);
  for (const i of largestFirst) {
    if (bytes <= maxBytes) break;
    const replacement = leftOut(parts[i]!, message.role, sizes[i]!, maxBytes);
    if (replacement === undefined) continue;
    parts[i] = replacement;
    bytes = storedBytes({ ...message, content: parts } as ModelMessage, index);
  }
  return { ...message, content: parts } as ModelMessage;
}

/**
 * The message as the model received it, when it cannot be stored as it is: a
 * tool that returned a class instance or a `Map` reached the model as its
 * JSON form (the provider request is JSON), so that form is what memory
 * keeps; a value JSON cannot hold either (a BigInt, a cycle) is left out with
 * a note. A message the codec takes is returned as it is.
 */
function asSent(message: ModelMessage, index: number): ModelMessage {
  try {
    storedBytes(message, index);
    return message;
  } catch (error) {
    if (!InvalidMessageError.isInstance(error) || typeof message.content === 'string') throw error;
  }
  const content = (message.content as readonly Part[]).map((part): Part => {
    if (part.type === 'tool-call') return { ...part, input: jsonForm(part['input'], `input of tool ${String(part['toolName'])}`) };
    const output = part['output'] as { readonly type?: unknown; readonly value?: unknown } | undefined;
    if (part.type === 'tool-result' && (output?.type === 'json' || output?.type === 'error-json')) {
      return { ...part, output: { ...output, value: jsonForm(output.value, `result of tool ${String(part['toolName'])}`) } };
    }
    return part;
  });
  return { ...message, content } as ModelMessage;
}

/**
 * `value` as the AI SDK's providers send it (a BigInt as its decimal text, a
 * cycle as `"[Circular]"`), or a note when not even they could.
 */
function jsonForm(value: unknown, what: string): unknown {
  try {
    const text: string | undefined = stringifyWithBigIntAndCycles(value);
    if (text !== undefined) return JSON.parse(text) as unknown;
  } catch {
    // A toJSON that throws: the provider request could not have carried it either.
  }
  return `[${what} left out of memory: not representable as JSON]`;
}

/**
 * The placeholder for a part, or `undefined` when the part must stay (approval
 * requests and answers tie a call to its answer) or the placeholder would be
 * no smaller.
 */
function leftOut(part: Part, role: ModelMessage['role'], bytes: number, maxBytes: number): Part | undefined {
  let replacement: Part | undefined;
  switch (part.type) {
    case 'tool-result':
      replacement = {
        type: 'tool-result',
        toolCallId: part['toolCallId'],
        toolName: part['toolName'],
        output: { type: 'text', value: placeholder(`result of tool ${String(part['toolName'])}`, bytes, maxBytes) },
      };
      break;
    case 'tool-call':
      replacement = {
        type: 'tool-call',
        toolCallId: part['toolCallId'],
        toolName: part['toolName'],
        // Providers need the input to be an object.
        input: { leftOut: placeholder(`input of tool ${String(part['toolName'])}`, bytes, maxBytes) },
        ...(part['providerExecuted'] === true ? { providerExecuted: true } : {}),
        // Small, and some providers refuse the call without it (Gemini's thought signature).
        ...(part['providerOptions'] === undefined ? {} : { providerOptions: part['providerOptions'] }),
      };
      break;
    case 'tool-approval-request':
    case 'tool-approval-response':
      return undefined;
    default:
      // A tool message holds only results and approval answers: anything else there stays.
      if (role === 'tool') return undefined;
      replacement = { type: 'text', text: placeholder(part.type, bytes, maxBytes) };
  }
  return JSON.stringify(replacement).length < bytes ? replacement : undefined;
}

function placeholder(what: string, bytes: number, maxBytes: number): string {
  return `[${what} left out of memory: ${bytes} bytes, over the ${maxBytes}-byte limit per stored message]`;
}

function storedBytes(message: ModelMessage, index: number): number {
  return Buffer.byteLength(encodeMessage(message, index), 'utf8');
}
