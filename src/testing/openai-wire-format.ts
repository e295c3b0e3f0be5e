/**
 * JSON shapes of the OpenAI chat completions wire format, as the scripted
 * stand-in model emits them. Field names follow what `@ai-sdk/openai` and
 * `@ai-sdk/openai-compatible` parse (e.g. `prompt_tokens_details.cached_tokens`).
 */
import type { TurnUsage } from './estimate-tokens.ts';

/** A tool call ready for the wire: arguments already serialised. */
interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A search the provider ran itself, or a page it opened, ready for the wire. */
type WireWebSearch = { id: string; query: string; sources: readonly string[] | undefined } | { id: string; page: { url: string; text: string } };

/** Code the provider ran itself, ready for the wire. */
interface WireCodeRun {
  id: string;
  code: string;
  output: string;
  exitCode: number;
}

/** A remote MCP tool the provider called, ready for the wire. */
interface WireMcpCall {
  id: string;
  server: string;
  name: string;
  arguments: Record<string, unknown>;
  output: string;
  error: string | undefined;
}

/** Shell commands the provider ran in its own container, ready for the wire: how each ended. */
interface WireShellRun {
  id: string;
  commands: string[];
  results: { stdout: string; stderr: string; exitCode: number | undefined }[];
}

/** Everything needed to write one completion, streamed or not. */
export interface WireAnswer {
  /** Completion id, e.g. `chatcmpl-scripted-1`. */
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  /** Reasoning before the answer, with its signature (Messages only). */
  reasoning: { text: string; signature: string } | undefined;
  text: string;
  toolCalls: WireToolCall[];
  /** Hosted searches before the answer (Responses and Messages only). */
  webSearches: WireWebSearch[];
  /** Hosted code runs before the answer, after the searches (Responses and Messages only). */
  codeRuns: WireCodeRun[];
  /** Remote MCP tools called before the answer, after the code runs (Responses and Messages only). */
  mcpCalls: WireMcpCall[];
  /** Hosted shell runs before the answer, after the MCP tools (Responses only); an `exitCode` left out timed out. */
  shellRuns: WireShellRun[];
  usage: TurnUsage;
}

/** How many pieces streamed tool arguments are cut into, so clients must reassemble deltas. */
const ARGUMENT_PIECES = 3;

/** Objects become JSON; strings are sent as-is so a script can send malformed arguments. */
export function serializeToolArguments(args: unknown): string {
  // JSON.stringify gives undefined for functions and symbols; an empty string is the honest equivalent.
  return typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
}

function finishReason(answer: WireAnswer): 'tool_calls' | 'stop' {
  return answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** OpenAI `usage` object. */
function wireUsage(usage: TurnUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
  };
}

/** Body of a non-streaming `chat.completion` response. */
export function chatCompletion(answer: WireAnswer): Record<string, unknown> {
  const toolCalls = answer.toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text.length > 0 || toolCalls.length === 0 ? answer.text : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage: wireUsage(answer.usage),
  };
}

/** Splits text after each run of whitespace, so it streams word by word and rejoins exactly. */
export function splitTextIntoPieces(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((piece) => piece.length > 0);
}

/** Cuts a string into up to `count` pieces on code point boundaries (never inside a surrogate pair). */
export function splitIntoPieces(value: string, count: number): string[] {
  const codePoints = Array.from(value);
  const size = Math.max(1, Math.ceil(codePoints.length / count));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(''));
  }
  return pieces;
}

/**
 * The `chat.completion.chunk` objects of a streamed answer, in order: role,
 * text deltas, tool call deltas (name first, then arguments in pieces),
 * finish reason, and a usage chunk when the client asked for one.
 */
export function chatCompletionChunks(answer: WireAnswer, options: { includeUsage: boolean }): Record<string, unknown>[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });

  const chunks = [chunk({ role: 'assistant' })];
  for (const piece of splitTextIntoPieces(answer.text)) chunks.push(chunk({ content: piece }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of splitIntoPieces(call.arguments, ARGUMENT_PIECES)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, finishReason(answer)));
  if (options.includeUsage) {
    chunks.push({
      id: answer.id,
      object: 'chat.completion.chunk',
      created: answer.created,
      model: answer.model,
      choices: [],
      usage: wireUsage(answer.usage),
    });
  }
  return chunks;
}

/** One server-sent event carrying JSON. */
export function sseEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** The event that ends an OpenAI stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** OpenAI-style error body, which both AI SDK OpenAI providers turn into an `APICallError` message. */
export function errorBody(message: string, type: string, code: string | null = null): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

/** Default `error.type` for an HTTP status, mirroring what OpenAI sends. */
export function defaultErrorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Body of `GET /v1/models`. */
export function modelList(modelId: string, created: number): Record<string, unknown> {
  return {
    object: 'list',
    data: [{ id: modelId, object: 'model', created, owned_by: 'scripted-stand-in' }],
  };
}
