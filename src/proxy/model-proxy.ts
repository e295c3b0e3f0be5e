import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { Agent, EnvHttpProxyAgent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { redactUnparsedUrl } from '../redaction/redact.ts';
import { decodeContent } from '../runtime/content-encoding.ts';
import { healthHandler } from '../telemetry/health-handler.ts';
import { anthropicWire } from './anthropic-wire.ts';
import { DEFAULT_MAX_REQUEST_BYTES, MODEL_PROXY_RULES, type ModelProxyOptions } from './model-proxy-options.ts';
import { validateOptions } from '../errors/validate-options.ts';
import { openaiWire } from './openai-wire.ts';
import { responsesWire } from './responses-wire.ts';
import { ProxyJudge, type ProxyStop } from './proxy-judge.ts';
import { namedSession, proxySessionId, SESSION_HEADER } from './proxy-session.ts';
import { formatSse, isSseEvent, parseSse, type SseItem } from './sse.ts';
import { UpstreamUnreachableError } from './upstream-unreachable-error.ts';
import { isObject, type JsonObject, modelOf, parseJson, type RoundVerdict, type StreamRewriter, type WireApi, type WireRound } from './wire-api.ts';

/** Response header naming the category of a stop. */
export const STOP_HEADER = 'x-governor-stop';

/** Hop-by-hop and framing headers, which belong to one connection and are not forwarded. */
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
  'accept-encoding',
  // 100-continue is between the client and this server (which answers it); fetch refuses to send it on.
  'expect',
  SESSION_HEADER,
]);
/** `fetch` has already decoded the body: its length and encoding no longer hold. */
const DECODED_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * A model proxy: an HTTP app speaking the OpenAI Chat Completions API
 * (`POST /v1/chat/completions`), the OpenAI Responses API
 * (`POST /v1/responses`) and the Anthropic Messages API
 * (`POST /v1/messages`), streamed or not, that forwards each request upstream
 * unchanged while the breaker watches the run. Everything else under `/v1`
 * (e.g. `GET /v1/models`) is passed through; `GET /health` reports the
 * breaker's health.
 *
 * - steer: the response passes; the message is added to the session's next request;
 * - block: the repeated tool call is replaced by assistant text saying why;
 * - stop: a final assistant message (`finish_reason: stop` / `stop_reason:
 *   end_turn` / a completed response without tool calls) and the header
 *   `x-governor-stop: <category>`; further requests of the session get `403`
 *   in the API's error format until the cooldown ends.
 *
 * Returns a Hono app: serve it with `@hono/node-server` or any fetch-style server.
 *
 * @throws InvalidOptionError for a missing or malformed upstream URL or breaker
 */
export function createModelProxy(options: ModelProxyOptions): Hono {
  validateOptions('createModelProxy', options, MODEL_PROXY_RULES, { required: ['upstream', 'breaker'] });
  const upstream = checkUpstream(options?.upstream);
  if (options.breaker === null || typeof options.breaker?.checkModelCall !== 'function') {
    throw new InvalidOptionError('breaker', 'must be an AgentBreaker');
  }
  if (options.metrics !== undefined && typeof options.metrics !== 'function') {
    throw new InvalidOptionError('metrics', 'must be a function from Request to Response');
  }
  if (options.fetch !== undefined && options.upstreamTimeoutMs !== undefined) {
    throw new InvalidOptionError('upstreamTimeoutMs', "limits the proxy's own fetch: a fetch of your own keeps its own timeouts, set them there");
  }
  const onError = (error: unknown): void => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing logger must not take the answer down with it.
    }
  };
  const judge = new ProxyJudge(options.breaker);
  const timeoutMs = options.fetch === undefined ? (options.upstreamTimeoutMs ?? 0) : undefined;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const route: Route = { upstream, upstreamFetch: options.fetch ?? ownFetch(timeoutMs ?? 0), timeoutMs, judge, onError, maxRequestBytes };
  const health = healthHandler({ breakers: { proxy: options.breaker } });
  // Routed by a canonical path, so that `/v1/chat/completions/` or `/v1//chat/%63ompletions` is judged like the
  // path it stands for rather than passed upstream unjudged; what is sent upstream keeps the client's own path.
  const app = new Hono({ getPath: (request) => canonicalPath(new URL(request.url).pathname) });

  app.get('/health', (c) => health(c.req.raw));
  if (options.metrics !== undefined) {
    const metrics = options.metrics;
    app.get('/metrics', (c) => metrics(c.req.raw));
  }
  for (const [path, api] of [
    ['chat/completions', openaiWire],
    ['messages', anthropicWire],
    ['responses', responsesWire],
  ] as const) {
    // Checked against Content-Length before reading, or counted while reading a chunked body.
    const limit = bodyLimit({
      maxSize: maxRequestBytes,
      onError: () =>
        json(api.tooLarge(`governor proxy: the request body is larger than ${maxRequestBytes} bytes, the most this proxy reads.`), 413, new Headers()),
    });
    const handler = (c: Context): Promise<Response> => governed(c, api, route);
    app.post(`/v1/${path}`, limit, handler);
    app.post(`/${path}`, limit, handler);
  }
  app.all('*', (c) => forward(c, target(upstream, new URL(c.req.url)), route, undefined));
  app.onError((error, c) => {
    // A client that went away (its timeout, an abort) is no failure of the proxy's or the upstream's.
    if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
    onError(error);
    return failure(error, new URL(c.req.url).pathname);
  });
  return app;
}

/** A path as routed: percent-escapes decoded, repeated slashes as one, no trailing slash. */
function canonicalPath(pathname: string): string {
  let path = pathname;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    // Not valid percent-encoding: routed as it is (the upstream refuses it).
  }
  path = path.replace(/\/{2,}/g, '/');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}

/**
 * 502 in the format of the API asked for when the upstream did not answer;
 * 500 for anything else, without details (they could hold request content).
 */
function failure(error: unknown, pathname: string): Response {
  const unreachable = UpstreamUnreachableError.isInstance(error);
  const message = unreachable ? (error as Error).message : 'governor proxy: internal error while handling the request.';
  const anthropic = pathname.endsWith('/messages');
  const body = anthropic
    ? { type: 'error', error: { type: 'api_error', message } }
    : { error: { message, type: unreachable ? 'upstream_error' : 'server_error', param: null, code: unreachable ? 'upstream_unreachable' : null } };
  return new Response(JSON.stringify(body), { status: unreachable ? 502 : 500, headers: { 'content-type': 'application/json' } });
}

interface Route {
  readonly upstream: Upstream;
  readonly upstreamFetch: typeof fetch;
  /** The limit of the proxy's own fetch on each wait, named when it runs out; unknown for a caller's fetch. */
  readonly timeoutMs: number | undefined;
  readonly judge: ProxyJudge;
  readonly onError: (error: unknown) => void;
  /** The most a judged request body may be, read and decoded. */
  readonly maxRequestBytes: number;
}

/** The upstream as requests are sent to it: its base (no trailing slash) and its own query (e.g. an `api-version`), if any. */
interface Upstream {
  readonly base: string;
  readonly query: string;
}

function checkUpstream(value: unknown): Upstream {
  if (typeof value !== 'string' || value === '')
    throw new InvalidOptionError('upstream', 'must be the base URL of the model API, e.g. https://api.openai.com/v1');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidOptionError('upstream', `"${redactUnparsedUrl(value)}" is not a URL; pass e.g. https://api.openai.com/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidOptionError('upstream', 'must be an http: or https: URL');
  if (url.username !== '' || url.password !== '') {
    // fetch refuses such a URL, so every request would fail; the agent's own Authorization header is what goes upstream.
    throw new InvalidOptionError('upstream', "must not hold credentials (user:password@): the agent's own Authorization header is forwarded upstream");
  }
  const query = url.search.slice(1);
  url.search = '';
  url.hash = '';
  return { base: url.toString().replace(/\/+$/, ''), query };
}

/** `/v1/<path>?q` (or `/<path>?q`) → `<upstream>/<path>?<upstream's query>&q`. */
function target(upstream: Upstream, url: URL): string {
  const query = [upstream.query, url.search.slice(1)].filter((part) => part !== '').join('&');
  return `${upstream.base}${url.pathname.replace(/^\/v1(?=\/|$)/, '')}${query === '' ? '' : `?${query}`}`;
}

function forwardHeaders(headers: Headers): Headers {
  const out = new Headers();
  headers.forEach((value, name) => {
    if (!HOP_HEADERS.has(name)) out.set(name, value);
  });
  return out;
}

function responseHeaders(headers: Headers, extra?: Record<string, string>): Headers {
  const out = new Headers();
  headers.forEach((value, name) => {
    if (!DECODED_HEADERS.has(name)) out.set(name, value);
  });
  for (const [name, value] of Object.entries(extra ?? {})) out.set(name, value);
  return out;
}

/**
 * The proxy's own fetch. Node's global fetch gives up after 300 s without
 * headers or without a further part of the body, and only a dispatcher of
 * one's own lifts that; a dispatcher is sure to work only with the fetch of
 * the same undici, hence undici's fetch rather than the global one.
 */
function ownFetch(timeoutMs: number): typeof fetch {
  const limits = { headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  const dispatcher = usesEnvProxy() ? new EnvHttpProxyAgent(limits) : new Agent(limits);
  // undici declares its own copies of the fetch types; what the proxy passes (a URL string, Headers, bytes or a stream,
  // an AbortSignal) and reads back (status, headers, body) is the same at run time.
  return ((url: string, init: RequestInit) => undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher })) as unknown as typeof fetch;
}

/** Node's fetch goes through the proxy named by HTTP_PROXY or HTTPS_PROXY only when told to; so does the proxy's own. */
function usesEnvProxy(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return process.env.NODE_USE_ENV_PROXY === '1' || flags.includes('--use-env-proxy');
}

async function forward(c: Context, url: string, route: Route, body: ArrayBuffer | undefined): Promise<Response> {
  const request = c.req.raw;
  // A body the proxy does not judge streams through unread, so an upload of any size costs no memory here.
  const streamed = body === undefined ? request.body : null;
  const response = await callUpstream(route, url, {
    method: request.method,
    headers: forwardHeaders(request.headers),
    body: body ?? streamed,
    ...(streamed === null ? {} : { duplex: 'half' }),
    signal: request.signal,
    redirect: 'manual',
  });
  return passThrough(c, response, url, route);
}

async function governed(c: Context, api: WireApi, route: Route): Promise<Response> {
  const request = c.req.raw;
  const raw = await request.arrayBuffer();
  const url = target(route.upstream, new URL(c.req.url));
  // Decoded to be judged: a compressed body the proxy could not read would go upstream unjudged, past a stop.
  const decoded = await decodeContent(new Uint8Array(raw), request.headers.get('content-encoding'), route.maxRequestBytes);
  if (!decoded.ok) {
    const message = `governor proxy: ${decoded.message}, so it cannot judge the request.`;
    return json(decoded.status === 413 ? api.tooLarge(message) : api.invalidBody(message), decoded.status, new Headers());
  }
  const body = parseJson(new TextDecoder().decode(decoded.bytes));
  // Not a chat request: the upstream API answers it in its own words.
  if (!isObject(body) || !api.isRequest(body)) return forward(c, url, route, raw);

  const { judge } = route;
  const continued = api.continues(body);
  // Looked up only when nothing else names the session: on a replica that did not answer it, that is a round trip to the store.
  const named = namedSession(request.headers, body, api) !== undefined;
  const continuedIn = continued === undefined || named ? undefined : await judge.sessionOfResponse(continued);
  const sessionId = proxySessionId(request.headers, body, api, () => continuedIn);
  const gate = await judge.gate(sessionId);
  if (gate.stop !== undefined) return notSent(api, body, gate.stop, judge, sessionId);
  const observed = await judge.observeRequest(sessionId, await judge.requestTail(api, body, sessionId, continued));
  if (observed.stop !== undefined) return notSent(api, body, observed.stop, judge, sessionId);
  const note = judge.steerNote(sessionId, gate);
  const steered: JsonObject = note === undefined ? body : api.withSteers(body, note);
  const sent = api.withUsageRequested?.(steered) ?? steered;
  const headers = forwardHeaders(request.headers);
  // Written anew, the body goes as plain JSON.
  if (sent !== body) headers.delete('content-encoding');
  const upstreamResponse = await callUpstream(route, url, {
    method: 'POST',
    headers,
    // Unchanged bytes (compressed as the client sent them) unless a steer message was added or the usage asked for.
    body: sent === body ? raw : JSON.stringify(sent),
    signal: request.signal,
    redirect: 'manual',
  });
  const contentType = upstreamResponse.headers.get('content-type') ?? '';
  if (!upstreamResponse.ok || upstreamResponse.body === null) return passThrough(c, upstreamResponse, url, route);
  if (contentType.includes('text/event-stream')) {
    return streamed(
      api.streamRewriter(body),
      api,
      upstreamResponse,
      (round) => judgeOrPass(route, () => judge.judgeRound(sessionId, answeredBy(round, body), observed)),
      (error) => {
        if (!request.signal.aborted) route.onError(new UpstreamUnreachableError(new URL(url).origin, error, 'broke off its answer', route.timeoutMs));
      },
    );
  }
  if (!contentType.includes('json')) return passThrough(c, upstreamResponse, url, route);
  let text: string;
  try {
    text = await upstreamResponse.text();
  } catch (error) {
    throw new UpstreamUnreachableError(new URL(url).origin, error, 'broke off its answer', route.timeoutMs);
  }
  const unchanged = (): Response => new Response(text, { status: upstreamResponse.status, headers: responseHeaders(upstreamResponse.headers) });
  const answer = parseJson(text);
  if (!isObject(answer)) return unchanged();
  const verdict = await judgeOrPass(route, () => judge.judgeRound(sessionId, answeredBy(api.roundOf(answer), body), observed));
  if (verdict.stop !== undefined) {
    return json(api.stopResponse(sent, verdict.stop.text, answer), 200, responseHeaders(upstreamResponse.headers, { [STOP_HEADER]: verdict.stop.category }));
  }
  if (verdict.blocked.size === 0) return unchanged();
  return json(api.withBlocks(answer, verdict.blocked), upstreamResponse.status, responseHeaders(upstreamResponse.headers));
}

/** The round named by the model the request asked for, when the response names none (a round is priced by its model). */
function answeredBy(round: WireRound, request: JsonObject): WireRound {
  return round.model === undefined ? { ...round, ...modelOf(request) } : round;
}

/**
 * A round's verdict; a round the breaker could not judge (a bug, arguments it
 * cannot read) passes as it came, and the error is reported: the agent's
 * answer is not lost to the proxy's own failure.
 */
async function judgeOrPass(route: Route, judge: () => Promise<RoundVerdict>): Promise<RoundVerdict> {
  try {
    return await judge();
  } catch (error) {
    route.onError(error);
    return { blocked: new Map() };
  }
}

async function callUpstream(route: Route, url: string, init: RequestInit): Promise<Response> {
  try {
    return await route.upstreamFetch(url, init);
  } catch (error) {
    throw new UpstreamUnreachableError(new URL(url).origin, error, 'did not answer', route.timeoutMs);
  }
}

/**
 * The upstream's answer as it comes. An upstream that breaks it off is
 * reported (unless the client went away first), and the client's answer is
 * broken off as a direct connection's would be.
 */
function passThrough(c: Context, response: Response, url: string, route: Route): Response {
  const init = { status: response.status, statusText: response.statusText, headers: responseHeaders(response.headers) };
  if (response.body === null) return new Response(null, init);
  const reader = response.body.getReader();
  const outgoing = nodeResponse(c);
  let brokenOff = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A cut connection is left to the server to cancel; until it does, a read asked for meanwhile finds nothing new.
      if (brokenOff) return;
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        brokenOff = true;
        if (!c.req.raw.signal.aborted) route.onError(new UpstreamUnreachableError(new URL(url).origin, error, 'broke off its answer', route.timeoutMs));
        // The Node server would log an errored body with its stack as its own failure: its connection is cut instead.
        if (outgoing === undefined) controller.error(error);
        else outgoing.destroy();
        return;
      }
      if (read.done) controller.close();
      else controller.enqueue(read.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, init);
}

/** The Node response the answer is written to, when served by `@hono/node-server` (its bindings are the context's env). */
function nodeResponse(c: Context): { destroy(): void } | undefined {
  const outgoing: unknown = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  return typeof (outgoing as { destroy?: unknown } | undefined)?.destroy === 'function' ? (outgoing as { destroy(): void }) : undefined;
}

function json(value: unknown, status: number, headers: Headers): Response {
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(value), { status, headers });
}

function refusal(api: WireApi, stop: ProxyStop): Response {
  return json(api.refusal(stop.text), 403, new Headers({ [STOP_HEADER]: stop.category }));
}

/**
 * A request the breaker could not judge before it went upstream, refused
 * because it fails closed: a retryable 503 in the API's own format, which
 * client SDKs retry, not an answer that ends the agent's run.
 */
function unavailable(api: WireApi, stop: ProxyStop): Response {
  return json(api.unavailable(stop.text), 503, new Headers({ [STOP_HEADER]: stop.category, 'retry-after': '1' }));
}

/** The answer to a request the breaker keeps from going upstream: a retryable 503, a refusal, or the stopping answer. */
function notSent(api: WireApi, body: JsonObject, stop: ProxyStop, judge: ProxyJudge, sessionId: string): Response | Promise<Response> {
  if (stop.unavailable === true) return unavailable(api, stop);
  return stop.refused ? refusal(api, stop) : stopAnswer(api, body, stop, judge, sessionId);
}

/** The stopping answer to a request not sent upstream; the session keeps its id, so that a request continuing it is refused. */
async function stopAnswer(api: WireApi, body: JsonObject, stop: ProxyStop, judge: ProxyJudge, sessionId: string): Promise<Response> {
  const headers = new Headers({ [STOP_HEADER]: stop.category });
  if (!api.isStream(body)) {
    const answer = api.stopResponse(body, stop.text);
    await judge.noteResponse(sessionId, api.roundOf(answer), body);
    return json(answer, 200, headers);
  }
  const events = api.stopEvents(body, stop.text);
  const read = api.streamRewriter(body);
  for (const event of events) read.accept(event);
  await judge.noteResponse(sessionId, read.round(), body);
  headers.set('content-type', 'text/event-stream');
  headers.set('cache-control', 'no-cache');
  return new Response(events.map(formatSse).join(''), { status: 200, headers });
}

/**
 * Passes a streamed answer through event by event, holding back only what
 * must be judged whole (tool-call deltas and the end of the message). An
 * upstream that breaks off ends the stream with the API's own error event
 * (which the client's SDK raises) instead of a cut connection, and is told
 * to `brokeOff`.
 */
function streamed(
  rewriter: StreamRewriter,
  api: WireApi,
  response: Response,
  judgeRound: (round: WireRound) => Promise<RoundVerdict>,
  brokeOff: (error: unknown) => void,
): Response {
  const encoder = new TextEncoder();
  const send = (controller: TransformStreamDefaultController<Uint8Array>, events: SseItem[]): void => {
    if (events.length > 0) controller.enqueue(encoder.encode(events.map(formatSse).join('')));
  };
  const upstream = (response.body as ReadableStream<Uint8Array>).getReader();
  let failed: { error: unknown } | undefined;
  const source = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await upstream.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        failed = { error };
        controller.close();
      }
    },
    cancel: (reason) => upstream.cancel(reason),
  });
  const body = parseSse(source).pipeThrough(
    new TransformStream<SseItem, Uint8Array>({
      transform(item, controller) {
        // Comments (an upstream's keep-alive during a long silence) and retry fields pass as they come.
        send(controller, isSseEvent(item) ? rewriter.accept(item) : [item]);
      },
      async flush(controller) {
        if (failed !== undefined) {
          brokeOff(failed.error);
          send(controller, [api.streamError('governor proxy: the upstream broke off its answer.')]);
          return;
        }
        send(controller, rewriter.finish(await judgeRound(rewriter.round())));
      },
    }),
  );
  return new Response(body, { status: response.status, headers: responseHeaders(response.headers) });
}
