import type { ModelMessage } from 'ai';

/** Deeper than any message part the AI SDK defines (message, content, tool output, its parts, tagged data). */
const MAX_DEPTH = 12;

/**
 * Messages as a log shows them: the bytes of images and files (base64 text,
 * byte arrays, and base64 data URLs wherever they are) are replaced by their
 * size and a URL by its text.
 * A request with one photo would otherwise put megabytes of base64 in every
 * record, once per round of the tool loop.
 */
export function loggedMessages(messages: readonly ModelMessage[]): unknown[] {
  return messages.map((message) => walk(message, 0, false));
}

/** A data URL of base64 bytes, wherever it is (a URL object, `{ type: 'url', url }`, a tool result's `image-url`). */
const BASE64_DATA_URL = /^data:[^,]{0,256};base64,/i;

function walk(value: unknown, depth: number, media: boolean): unknown {
  if (value instanceof URL) return value.protocol === 'data:' ? stringSummary(value.href) : value.href;
  if (typeof value === 'string' && BASE64_DATA_URL.test(value)) return stringSummary(value);
  if (isBytes(value)) return bytesSummary(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1, false));
  const record = value as Record<string, unknown>;
  // An image part, or any part that names a media type, holds its bytes under `image` or `data`, bare or tagged `{ type: 'data', data }`.
  const holdsMedia = media || record['type'] === 'image' || typeof record['mediaType'] === 'string';
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) {
    const isData = holdsMedia && (key === 'image' || key === 'data');
    out[key] = isData && typeof item === 'string' ? stringSummary(item) : walk(item, depth + 1, isData);
  }
  return out;
}

function isBytes(value: unknown): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function bytesSummary(value: ArrayBuffer | ArrayBufferView): string {
  return `[${value.byteLength} bytes]`;
}

/** A string where bytes belong: a URL is kept, base64 (bare or in a data URL) is told by the size it decodes to. */
function stringSummary(text: string): string {
  if (/^https?:\/\//i.test(text)) return text;
  const comma = text.startsWith('data:') ? text.indexOf(',') : -1;
  const base64 = comma >= 0 ? text.slice(comma + 1) : text;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  const bytes = Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
  return `[${comma >= 0 ? `data URL ${text.slice(5, comma)}, ` : ''}${bytes} bytes]`;
}
