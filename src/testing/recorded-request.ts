import type { IncomingHttpHeaders } from 'node:http';
import { responsesInputAsMessages } from './responses-wire-format.ts';

/**
 * One message of a chat completions request, as the client sent it. Only `role`
 * is checked by the stand-in; the other fields are whatever the client wrote.
 */
export interface ChatCompletionMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  [field: string]: unknown;
}

/** The JSON body of a chat completions request, as the client sent it. */
export interface ChatCompletionRequestBody {
  model?: unknown;
  messages: ChatCompletionMessage[];
  stream?: unknown;
  stream_options?: unknown;
  tools?: unknown;
  [field: string]: unknown;
}

/** A chat completions request the scripted stand-in model received. */
export interface RecordedRequest {
  /** HTTP method, always `POST` for chat completions. */
  method: string;
  /** Request path without query, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-cased header names; credentials (`authorization`, `api-key`, `x-api-key`) are redacted. */
  headers: Record<string, string>;
  /**
   * Parsed JSON body. For a Responses API request (`/v1/responses`), which
   * has no `messages`, `messages` is added: its `instructions` and `input`
   * read as chat messages, so one script serves every API.
   */
  body: ChatCompletionRequestBody;
}

/** Placeholder that replaces credential header values in recorded requests. */
export const REDACTED = '[REDACTED]';

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'api-key', 'x-api-key']);

/**
 * Copies headers with credentials replaced, because recorded requests end up in
 * test output and snapshots where a real key must never appear.
 */
export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    result[key] = CREDENTIAL_HEADERS.has(key) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/** Outcome of reading a request body: the body, or a message saying what is wrong with it. */
export type ParsedRequestBody = { ok: true; body: ChatCompletionRequestBody } | { ok: false; problem: string };

/** The body as a JSON object, or what is wrong with it. */
function parseObject(raw: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `Request body is not valid JSON (${reason}).`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'Request body must be a JSON object.';
  return parsed as Record<string, unknown>;
}

/** Parses and shape-checks a chat completions body without trusting the client. */
export function parseChatCompletionBody(raw: string): ParsedRequestBody {
  const parsed = parseObject(raw);
  if (typeof parsed === 'string') return { ok: false, problem: parsed };
  const messages: unknown = parsed['messages'];
  if (!Array.isArray(messages)) {
    return { ok: false, problem: 'Request body must have a "messages" array.' };
  }
  const badIndex = messages.findIndex(
    (message: unknown) => typeof message !== 'object' || message === null || typeof (message as Record<string, unknown>)['role'] !== 'string',
  );
  if (badIndex !== -1) {
    return { ok: false, problem: `messages[${badIndex}] must be an object with a string "role".` };
  }
  return { ok: true, body: parsed as ChatCompletionRequestBody };
}

/** Parses and shape-checks a Responses API body: `input` must be a string or an array. */
export function parseResponsesBody(raw: string): ParsedRequestBody {
  const body = parseObject(raw);
  if (typeof body === 'string') return { ok: false, problem: body };
  if (typeof body['input'] !== 'string' && !Array.isArray(body['input'])) {
    return { ok: false, problem: 'Request body must have an "input" string or array.' };
  }
  return { ok: true, body: { ...body, messages: responsesInputAsMessages(body) } };
}

/** Whether the client asked for a usage chunk at the end of a stream. */
export function wantsStreamUsage(body: ChatCompletionRequestBody): boolean {
  const options = body.stream_options;
  return typeof options === 'object' && options !== null && (options as Record<string, unknown>)['include_usage'] === true;
}
