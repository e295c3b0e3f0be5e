import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import { resolveTurnUsage } from './estimate-tokens.ts';
import { anthropicErrorBody, anthropicEvents, anthropicMessage } from './anthropic-wire-format.ts';
import { readBody, sendEventStream, sendHeadersThenStall, sendJson, sendNamedEventStream, waitUnlessClosed } from './http-exchange.ts';
import { chatCompletion, chatCompletionChunks, defaultErrorType, errorBody, modelList, serializeToolArguments, type WireAnswer } from './openai-wire-format.ts';
import { parseChatCompletionBody, parseResponsesBody, type RecordedRequest, redactHeaders, wantsStreamUsage } from './recorded-request.ts';
import { builtInToolsOf, responsesEvents, responsesObject } from './responses-wire-format.ts';
import { ScriptedModelServerError } from './scripted-model-server-error.ts';
import { resolveServerOptions, type ResolvedServerOptions, type ScriptedModelServerOptions } from './scripted-model-server-options.ts';
import { type ScriptedTurn, validateScriptedTurn } from './scripted-turn.ts';

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);
const MESSAGES_PATHS = new Set(['/v1/messages', '/messages']);
const RESPONSES_PATHS = new Set(['/v1/responses', '/responses']);

/** A turn to play, or the error that stands in for it. */
type TurnChoice = { turn: ScriptedTurn } | { status: number; body: Record<string, unknown> };

/**
 * A scripted stand-in for a real model: a local OpenAI-compatible HTTP server
 * that answers chat completion requests from a script instead of a language
 * model. Agents run end to end through a real provider package over real HTTP,
 * with no network access and no API key, and every request is recorded.
 *
 * Serves `POST /v1/chat/completions` (JSON, or server-sent events with
 * `stream: true`) and `GET /v1/models`; the `/v1` prefix is optional. The
 * same script also answers the Anthropic Messages API at `POST /v1/messages`
 * and the OpenAI Responses API at `POST /v1/responses` (JSON, or named
 * server-sent events with `stream: true`).
 *
 * @example
 * ```ts
 * await using server = await new ScriptedModelServer({ script: [{ text: 'Hello!' }] }).start();
 * const { text } = await generateText({ model: scriptedModel(server), prompt: 'Hi' });
 * ```
 */
export class ScriptedModelServer implements AsyncDisposable {
  /** Model id reported by the stand-in (`scripted-stand-in` unless configured). */
  readonly modelId: string;
  /** Every well-formed chat completion request received, oldest first, credentials redacted. */
  readonly requests: RecordedRequest[] = [];

  readonly #options: ResolvedServerOptions;
  #turnsPlayed = 0;
  #server: Server | undefined;
  #listening: Promise<void> | undefined;
  #shutdown = new AbortController();

  /** @throws InvalidOptionError when an option or a scripted turn is malformed */
  constructor(options: ScriptedModelServerOptions) {
    this.#options = resolveServerOptions(options);
    this.modelId = this.#options.modelId;
  }

  /** Number of scripted turns answered so far (error turns included, exhaustion errors not). */
  get turnsPlayed(): number {
    return this.#turnsPlayed;
  }

  /**
   * Root URL, e.g. `http://127.0.0.1:54321`.
   * @throws ScriptedModelServerError before `start()` or after `close()`
   */
  get url(): string {
    const address = this.#server?.address();
    if (address == null || typeof address === 'string') {
      throw new ScriptedModelServerError(
        'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED',
        'The scripted stand-in model server is not listening: await server.start() first.',
      );
    }
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Base URL for OpenAI-style clients: `${url}/v1`. */
  get baseURL(): string {
    return `${this.url}/v1`;
  }

  /**
   * Starts listening. Calling it again while listening does nothing.
   * @returns this server, so `await new ScriptedModelServer(...).start()` can be assigned directly
   * @throws ScriptedModelServerError when the port cannot be bound
   */
  async start(): Promise<this> {
    this.#listening ??= this.#listen();
    try {
      await this.#listening;
    } catch (error) {
      this.#listening = undefined;
      throw error;
    }
    return this;
  }

  async #listen(): Promise<void> {
    const server = createServer((request, response) => void this.#handle(request, response));
    this.#shutdown = new AbortController();
    const { port, host } = this.#options;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new ScriptedModelServerError(
            'GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED',
            `The scripted stand-in model server could not listen on ${host}:${port}: ${error.message}`,
            { cause: error },
          ),
        ),
      );
      server.listen(port, host, () => resolve());
    });
    this.#server = server;
  }

  /** Stops listening, drops open connections and cancels delayed answers. Safe to call twice. */
  async close(): Promise<void> {
    const listening = this.#listening;
    this.#listening = undefined;
    await listening?.catch(() => undefined);
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    this.#shutdown.abort();
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // Keep-alive sockets from fetch would otherwise hold close() open.
      server.closeAllConnections();
    });
  }

  /** Lets `await using server = await new ScriptedModelServer(...).start()` close the server. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const path = new URL(request.url ?? '/', 'http://stand-in').pathname.replace(/\/+$/, '');
      if (CHAT_PATHS.has(path)) {
        if (request.method !== 'POST') return sendMethodNotAllowed(response, 'POST');
        return await this.#answerChat(request, response, path, 'openai');
      }
      if (MESSAGES_PATHS.has(path)) {
        if (request.method !== 'POST') return sendMethodNotAllowed(response, 'POST');
        return await this.#answerChat(request, response, path, 'anthropic');
      }
      if (RESPONSES_PATHS.has(path)) {
        if (request.method !== 'POST') return sendMethodNotAllowed(response, 'POST');
        return await this.#answerChat(request, response, path, 'responses');
      }
      if (MODEL_PATHS.has(path)) {
        if (request.method !== 'GET') return sendMethodNotAllowed(response, 'GET');
        return sendJson(response, 200, modelList(this.modelId, 0));
      }
      const problem = `The scripted stand-in model does not serve ${path || '/'}.`;
      sendJson(response, 404, errorBody(problem, 'invalid_request_error', 'not_found'));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      sendJson(response, 500, errorBody(`Scripted stand-in model failed: ${reason}`, 'server_error'));
    }
  }

  async #answerChat(request: IncomingMessage, response: ServerResponse, path: string, format: 'openai' | 'anthropic' | 'responses'): Promise<void> {
    const raw = await readBody(request);
    const parsed = format === 'responses' ? parseResponsesBody(raw) : parseChatCompletionBody(raw);
    if (!parsed.ok) {
      return sendJson(
        response,
        400,
        format === 'anthropic' ? anthropicErrorBody(parsed.problem, 400) : errorBody(parsed.problem, 'invalid_request_error', 'invalid_json'),
      );
    }

    const recorded: RecordedRequest = {
      method: request.method ?? 'POST',
      path,
      headers: redactHeaders(request.headers),
      body: parsed.body,
    };
    const index = this.requests.push(recorded) - 1;
    const choice = await this.#chooseTurn(recorded, index);
    if (!('turn' in choice)) {
      const message = String((choice.body['error'] as { message?: unknown } | undefined)?.message ?? 'error');
      return sendJson(response, choice.status, format === 'anthropic' ? anthropicErrorBody(message, choice.status) : choice.body);
    }

    const { turn } = choice;
    this.#turnsPlayed += 1;
    if (turn.delayMs !== undefined && turn.delayMs > 0) {
      if (!(await waitUnlessClosed(response, turn.delayMs, this.#shutdown.signal))) return;
    }
    if (turn.error !== undefined) {
      const { status, retryAfterMs } = turn.error;
      const { message = `Scripted stand-in error (HTTP ${status})`, type = defaultErrorType(status) } = turn.error;
      const headers: Record<string, string> =
        retryAfterMs === undefined ? {} : { 'retry-after-ms': String(retryAfterMs), 'retry-after': String(Math.ceil(retryAfterMs / 1000)) };
      return sendJson(response, status, format === 'anthropic' ? anthropicErrorBody(message, status) : errorBody(message, type), headers);
    }

    if (turn.stall === true) return sendHeadersThenStall(response, parsed.body.stream === true, this.#shutdown.signal);

    const answer = this.#buildAnswer(turn, recorded, index);
    if (format === 'anthropic') {
      if (parsed.body.stream === true) return sendNamedEventStream(response, anthropicEvents(answer));
      return sendJson(response, 200, anthropicMessage(answer));
    }
    if (format === 'responses') {
      const include = parsed.body['include'];
      const echo = {
        ...(parsed.body['store'] === false ? { store: false } : {}),
        ...(Array.isArray(include) && include.includes('code_interpreter_call.outputs') ? { codeOutputs: true } : {}),
        builtInTools: builtInToolsOf(parsed.body['tools']),
      };
      if (parsed.body.stream === true) return sendNamedEventStream(response, responsesEvents(answer, echo));
      return sendJson(response, 200, responsesObject(answer, echo));
    }
    if (parsed.body.stream === true) {
      return sendEventStream(response, chatCompletionChunks(answer, { includeUsage: wantsStreamUsage(parsed.body) }));
    }
    sendJson(response, 200, chatCompletion(answer));
  }

  async #chooseTurn(request: RecordedRequest, index: number): Promise<TurnChoice> {
    const { script, onExhausted } = this.#options;
    if (typeof script !== 'function') {
      const turn = script[index] ?? (onExhausted === 'repeat-last' ? script.at(-1) : undefined);
      if (turn !== undefined) return { turn };
      // A 4xx the SDKs do not retry: a script that ran out is the test's to fix, and a retry would only wait for the same answer.
      return {
        status: 400,
        body: errorBody(
          `Scripted stand-in model: the script ran out after ${script.length} turns ` +
            `(request #${index + 1}, retries included, has no scripted turn). Add turns or set onExhausted: 'repeat-last'.`,
          'invalid_request_error',
          'script_exhausted',
        ),
      };
    }
    try {
      const turn: unknown = await script(request, index);
      validateScriptedTurn(turn, `script(request #${index + 1})`);
      return { turn };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const problem = `Scripted stand-in model: the script function failed: ${reason}`;
      return { status: 500, body: errorBody(problem, 'server_error', 'script_failed') };
    }
  }

  #buildAnswer(turn: ScriptedTurn, request: RecordedRequest, index: number): WireAnswer {
    const text = turn.text ?? '';
    const toolCalls = (turn.toolCalls ?? []).map((call, position) => ({
      id: call.id ?? `call_${index + 1}_${position + 1}`,
      name: call.name,
      arguments: serializeToolArguments(call.arguments),
    }));
    const toolArguments = toolCalls.map((call) => call.arguments);
    const webSearches = (turn.webSearches ?? []).map((search, position) => ({
      id: `ws_${index + 1}_${position + 1}`,
      ...(search.openPage === undefined
        ? { query: search.query ?? '', sources: search.sources }
        : { page: { url: search.openPage, text: search.pageText ?? search.openPage } }),
    }));
    const codeRuns = (turn.codeRuns ?? []).map((run, position) => ({
      id: `ci_${index + 1}_${position + 1}`,
      code: run.code,
      output: run.output ?? '',
      exitCode: run.exitCode ?? 0,
    }));
    const mcpCalls = (turn.mcpCalls ?? []).map((call, position) => ({
      id: `mcp_${index + 1}_${position + 1}`,
      server: call.server,
      name: call.name,
      arguments: call.arguments,
      output: call.output ?? '',
      error: call.error,
    }));
    const shellRuns = (turn.shellRuns ?? []).map((run, position) => ({
      id: `sh_${index + 1}_${position + 1}`,
      commands: run.commands,
      results: run.commands.map((_, i) => {
        const result = run.results?.[i] ?? {};
        return { stdout: result.stdout ?? '', stderr: result.stderr ?? '', exitCode: result.timedOut === true ? undefined : (result.exitCode ?? 0) };
      }),
    }));
    return {
      id: `chatcmpl-scripted-${index + 1}`,
      model: this.modelId,
      created: Math.floor(Date.now() / 1000),
      reasoning: turn.reasoning === undefined ? undefined : { text: turn.reasoning.text, signature: turn.reasoning.signature ?? `signature-${index + 1}` },
      text,
      toolCalls,
      webSearches,
      codeRuns,
      mcpCalls,
      shellRuns,
      usage: resolveTurnUsage(turn, request.body, text, toolArguments),
    };
  }
}

function sendMethodNotAllowed(response: ServerResponse, allowed: string): void {
  response.setHeader('allow', allowed);
  sendJson(response, 405, errorBody(`Use ${allowed} for this endpoint.`, 'invalid_request_error', 'method_not_allowed'));
}
