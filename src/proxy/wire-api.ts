import type { HostedEvent } from '../breaker/hosted-calls.ts';
import { messageBody } from '../breaker/breaker-messages.ts';

/**
 * What the model proxy needs to know about one model API's wire format:
 * where the session hint, the new tool results and the tool calls are, and
 * how to write a steer, a block, a stop and a refusal in that format.
 */

/** A tool call the model asked for in a response. */
export interface WireToolCall {
  readonly id: string;
  readonly name: string;
  /** Parsed JSON arguments, or the raw text when they are not JSON; undefined for a call known by its print. */
  readonly args: unknown;
  /** The call's print (see `AgentBreaker.printToolCall`), for a call another replica judged. */
  readonly print?: string;
}

/** A tool result the agent sends back in a request. */
export interface WireToolResult {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
  /** The call's print when its arguments are not known here (see {@link WireToolCall}). */
  readonly print?: string;
  readonly result: string;
  readonly error: boolean;
}

/** What is new at the end of a request: the tool results, or a user turn. */
export interface RequestTail {
  readonly toolResults: readonly WireToolResult[];
  /** Text of a trailing user turn (not tool results), else null. */
  readonly userText: string | null;
  /** Position of the last message, so a retried request is not observed twice. */
  readonly lastIndex: number;
  /**
   * True when the request brings tool outputs whose round the `lastCalls`
   * given did not tell (none were given, or they were another response's):
   * outputs were then taken by a guess, or left out when their calls are
   * not in the request.
   */
  readonly unmatched?: boolean;
}

/** One model round as the breaker sees it. */
export interface WireRound {
  /** The response's id, when a later request can name it (Responses). */
  readonly responseId?: string;
  /** False when the upstream does not keep the response (`store: false`): no later request can continue it. */
  readonly stored?: boolean;
  readonly text: string;
  /** The id of the model that answered, as the response names it: what the round is priced by. */
  readonly model?: string;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly toolCalls: readonly WireToolCall[];
  /** Calls the upstream ran itself in the round (hosted searches, pages opened or fetched, code run), in order; judged after its answer. */
  readonly hosted?: readonly HostedEvent[];
}

/** What the breaker decided about a round. */
export interface RoundVerdict {
  /** Set when the run is stopped. */
  readonly stop?: { readonly category: string; readonly text: string };
  /** Tool call id → why it was blocked. */
  readonly blocked: ReadonlyMap<string, string>;
}

/** One server-sent event. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/**
 * Rewrites one streamed response: `accept` returns the events to send on at
 * once (text passes straight through), holding back tool-call deltas and the
 * end of the message; `finish` gets the verdict and returns the rest.
 */
export interface StreamRewriter {
  accept(event: SseEvent): SseEvent[];
  round(): WireRound;
  finish(verdict: RoundVerdict): SseEvent[];
}

export type JsonObject = Record<string, unknown>;

/** One API's wire format. */
export interface WireApi {
  /** `openai`, `anthropic` or `responses`. */
  readonly name: string;
  /** Whether the body is a model request of this API (else it is forwarded unjudged, for the upstream to answer). */
  isRequest(body: JsonObject): boolean;
  /** The caller-supplied user id (`user` / `metadata.user_id`), if any. */
  userHint(body: JsonObject): string | undefined;
  /** System prompt and first user message, for the fallback session id. */
  promptSeed(body: JsonObject): string;
  isStream(body: JsonObject): boolean;
  /**
   * What is new at the end of a request. `lastCalls` are the tool calls of the
   * session's previous response, by id, when this proxy judged it: an API
   * whose requests do not mark where one round ends, or may leave the calls
   * out (Responses), reads them.
   */
  requestTail(body: JsonObject, lastCalls?: ReadonlyMap<string, WireToolCall>): RequestTail;
  /** The id of the earlier response a request continues (the Responses API's `previous_response_id`), if any. */
  continues(body: JsonObject): string | undefined;
  /** The id of the stored conversation a request belongs to (the Responses API's `conversation`), if any. */
  conversation(body: JsonObject): string | undefined;
  /** The body with the breaker's messages added for the model. */
  withSteers(body: JsonObject, text: string): JsonObject;
  /**
   * The body as sent upstream when the API reports a streamed answer's usage
   * only on request (Chat Completions): asking for it, so that the round's
   * tokens are counted. Absent where usage always comes.
   */
  withUsageRequested?(body: JsonObject): JsonObject;
  /** The round of a non-streamed response body. */
  roundOf(response: JsonObject): WireRound;
  /** A non-streamed response with the blocked calls replaced by text. */
  withBlocks(response: JsonObject, blocked: ReadonlyMap<string, string>): JsonObject;
  /**
   * A complete non-streamed response that ends the run with `text`, in place
   * of the `upstream` answer when there is one: what of that answer has run
   * upstream (Responses: the hosted calls) stays, as on a stream.
   */
  stopResponse(request: JsonObject, text: string, upstream?: JsonObject): JsonObject;
  /** The same as a stream of events. */
  stopEvents(request: JsonObject, text: string): SseEvent[];
  /** Error body (in the API's own format) refusing a request of a stopped session. */
  refusal(message: string): JsonObject;
  /** Error body (in the API's own format, with status 413) refusing a request body too large to read. */
  tooLarge(message: string): JsonObject;
  /** Error body (in the API's own format, with status 400 or 415) refusing a request body the proxy cannot decode. */
  invalidBody(message: string): JsonObject;
  /** Error body (in the API's own format, with status 503) refusing a request the breaker could not judge: its store is down and it fails closed. */
  unavailable(message: string): JsonObject;
  /** The event that tells a streaming client, in the API's own format, that the answer broke off. */
  streamError(message: string): SseEvent;
  /** Reads and rewrites a streamed answer to `request`, the body as the client sent it. */
  streamRewriter(request: JsonObject): StreamRewriter;
}

/** The model a response names, when it names one. */
export function modelOf(value: unknown): { model?: string } {
  return isObject(value) && typeof value['model'] === 'string' && value['model'] !== '' ? { model: value['model'] } : {};
}

/**
 * What the APIs whose requests carry the conversation as `messages` share: such
 * a body is a request, and it neither continues a stored response nor names a
 * stored conversation.
 */
export const MESSAGES_REQUESTS: Pick<WireApi, 'isRequest' | 'continues' | 'conversation'> = {
  isRequest: (body) => Array.isArray(body['messages']),
  continues: () => undefined,
  conversation: () => undefined,
};

/** Flattens message content (a string or a list of parts) to text. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((part: unknown) => {
      if (typeof part === 'string') return part;
      const p = part as { type?: unknown; text?: unknown; content?: unknown };
      if (typeof p?.text === 'string') return p.text;
      if (p?.content !== undefined) return contentText(p.content);
      return JSON.stringify(part);
    })
    .join('\n');
}

/** Tool arguments as the breaker fingerprints them: parsed JSON, else the raw text. */
export function parseArgs(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Parsed JSON, or undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A usage count: a finite number, else null. */
export function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Prefix of every message the proxies add, so people and models can tell who wrote it. */
export const NOTE_PREFIX = '[governor]';

/** What the agent is told of one call the breaker blocked, its message without the breaker's own "This call was NOT executed". */
export function notRunText(tool: string, message: string): string {
  return `${NOTE_PREFIX} The call to ${tool} was not run: ${messageBody(message)}`;
}

/** Text that replaces the blocked calls of a round. */
export function blockText(blocked: ReadonlyMap<string, string>, names: ReadonlyMap<string, string>): string {
  return [...blocked].map(([id, message]) => notRunText(names.get(id) ?? 'a tool', message)).join('\n\n');
}
