import type { LanguageModelV4Content } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { redactValue } from '../redaction/redact.ts';

/**
 * Serialises opt-in content for span attributes, in the shapes of the GenAI
 * semantic conventions (`{ role, parts: [{ type, content }] }`), with secrets
 * redacted and the result cut at `max` characters. Binary data is never
 * recorded, only its media type.
 */
export function contentAttribute(value: unknown, max: number): string {
  const redacted = redactValue(value);
  if (typeof redacted === 'string') return cutText(redacted, max);
  return fitJson(redacted, max);
}

function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[${text.length - max} more characters not recorded]`;
}

/**
 * JSON of `value` in at most `max` characters that is still JSON, so that a
 * backend can read the messages: its longest texts are cut (each with a
 * note of what was left out), as few as need be; when even that is too long,
 * the first items of a list go (the latest messages are kept).
 */
function fitJson(value: unknown, max: number): string {
  const whole = safeJson(value);
  if (whole.length <= max) return whole;
  // Short texts (roles, part types, ids) are never cut: the messages would no longer say what they are.
  let low = KEPT_WHOLE;
  let high = longestText(value, 0);
  let fitted: string | undefined;
  while (low <= high) {
    const limit = (low + high) >> 1;
    const text = safeJson(cutTexts(value, limit, 0));
    if (text.length <= max) {
      fitted = text;
      low = limit + 1;
    } else high = limit - 1;
  }
  if (fitted !== undefined) return fitted;
  if (Array.isArray(value)) {
    for (let from = 1; from < value.length; from++) {
      const text = safeJson(cutTexts(value.slice(from), KEPT_WHOLE, 0));
      if (text.length <= max) return text;
    }
  }
  const note = safeJson(`…[${whole.length} characters not recorded]`);
  return note.length <= max ? note : '""';
}

/** Texts this short are kept whole when recorded content is cut (see fitJson). */
const KEPT_WHOLE = 64;

/** Deepest level walked: redacted values are plain data, this only bounds a value nested without end. */
const MAX_DEPTH = 32;

function longestText(value: unknown, depth: number): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return 0;
  let longest = 0;
  for (const item of Object.values(value)) longest = Math.max(longest, longestText(item, depth + 1));
  return longest;
}

/** A copy of `value` with every text longer than `limit` cut to it, with a note. */
function cutTexts(value: unknown, limit: number, depth: number): unknown {
  if (typeof value === 'string') return value.length <= limit ? value : cutText(value, limit);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => cutTexts(item, limit, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutTexts(item, limit, depth + 1)]));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '"[not serialisable]"';
  }
}

type Part = Record<string, unknown>;

function filePart(mediaType: string | undefined, data: unknown): Part {
  const modality = mediaType?.split('/')[0];
  if (data instanceof URL) return { type: 'uri', modality, mime_type: mediaType, uri: data.toString() };
  if (typeof data === 'string' && /^https?:\/\//i.test(data)) return { type: 'uri', modality, mime_type: mediaType, uri: data };
  return { type: 'blob', modality, mime_type: mediaType };
}

function toolResponse(output: unknown): unknown {
  const o = output as { type?: string; value?: unknown } | undefined;
  return o !== null && typeof o === 'object' && 'value' in o ? o.value : output;
}

function partsOf(message: ModelMessage): Part[] {
  if (typeof message.content === 'string') return [{ type: 'text', content: message.content }];
  const parts: Part[] = [];
  for (const part of message.content as ReadonlyArray<{ type: string } & Record<string, unknown>>) {
    switch (part.type) {
      case 'text':
        parts.push({ type: 'text', content: part['text'] });
        break;
      case 'reasoning':
        parts.push({ type: 'reasoning', content: part['text'] });
        break;
      case 'tool-call':
        parts.push({ type: 'tool_call', id: part['toolCallId'], name: part['toolName'], arguments: part['input'] });
        break;
      case 'tool-result':
        parts.push({ type: 'tool_call_response', id: part['toolCallId'], response: toolResponse(part['output']) });
        break;
      case 'image':
        parts.push(filePart((part['mediaType'] as string | undefined) ?? 'image', part['image']));
        break;
      case 'file':
        parts.push(filePart(part['mediaType'] as string | undefined, part['data']));
        break;
      default:
        parts.push({ type: part.type });
    }
  }
  return parts;
}

/** `gen_ai.input.messages`. */
export function inputMessagesAttribute(messages: readonly ModelMessage[], max: number): string {
  return contentAttribute(
    messages.map((m) => ({ role: m.role, parts: partsOf(m) })),
    max,
  );
}

/** `gen_ai.system_instructions`. */
export function systemInstructionsAttribute(system: string, max: number): string {
  return contentAttribute([{ type: 'text', content: system }], max);
}

/** `gen_ai.output.messages`: the assistant's answer of one model round. */
export function outputMessagesAttribute(content: readonly LanguageModelV4Content[], finishReason: string, max: number): string {
  const parts: Part[] = [];
  for (const part of content) {
    if (part.type === 'text') parts.push({ type: 'text', content: part.text });
    else if (part.type === 'reasoning') parts.push({ type: 'reasoning', content: part.text });
    else if (part.type === 'tool-call') parts.push({ type: 'tool_call', id: part.toolCallId, name: part.toolName, arguments: parseJson(part.input) });
    else if (part.type === 'file') parts.push({ type: 'blob', mime_type: part.mediaType });
  }
  return contentAttribute([{ role: 'assistant', parts, finish_reason: finishReason }], max);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
