import { randomUUID } from 'node:crypto';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { fetchAnsweringDroppedStreams } from './dropped-stream-fetch.ts';
import { LimitedReadBuffer, replaceReadBuffer } from './limited-read-buffer.ts';
import { commandTransport } from './process-group-transport.ts';
import { exitInWords, type McpServerExit } from './server-exit.ts';
import { limitSends } from './limited-send.ts';
import { McpMessageTooLargeError } from './mcp-message-too-large-error.ts';
import { McpRequestError } from './mcp-request-error.ts';
import { McpUpstreamError } from './mcp-upstream-error.ts';
import { ServedAnswers } from './served-answers.ts';
import { StandInAnswers } from './stand-in-answers.ts';
import { importOptional } from '../runtime/import-optional.ts';
import { redact } from '../redaction/redact.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { McpCommandUpstream, McpProxyOptions, McpUrlUpstream } from './mcp-proxy-options.ts';
import { judgeToolCall } from './tool-call-judge.ts';

const SDK = '@modelcontextprotocol/sdk';
const FEATURE = 'The MCP proxy (governor mcp)';

/** A running MCP proxy; `await using proxy = await startMcpProxy(…)` closes it at the end of the scope. */
export interface McpProxy extends AsyncDisposable {
  /** The breaker session of this connection. */
  readonly sessionId: string;
  /**
   * Resolves when either side has closed (and the other has been closed
   * too), to which ended it: `client` (its input ended or it disconnected),
   * `upstream` (the server exited or dropped the connection) or `close`
   * ({@link close} was called). A `downstream` given in the options has its
   * `stdout` ended then; the process's own stdout is left open.
   */
  readonly closed: Promise<McpProxyEnd>;
  /**
   * How an MCP server run as a command ended (its exit code, or the signal
   * that ended it), once it has; undefined while it runs, for a server
   * reached by URL, and on Windows.
   */
  readonly serverExit: McpServerExit | undefined;
  /**
   * Closes both sides. Every request of the client still being served gets
   * an error answer at once (JSON-RPC code -32603, `… could not be served:
   * the proxy is closing`), before the client side is closed; the server's
   * answers to them, should they come, are not passed on. A server run as a
   * command is ended with its process group (see {@link startMcpProxy});
   * resolves once it has ended, or has been sent SIGKILL. A server reached
   * by URL is told first that those requests are cancelled, and that the
   * session ends (see {@link startMcpProxy}).
   */
  close(): Promise<void>;
}

/** Which side ended an {@link McpProxy}. */
export type McpProxyEnd = 'client' | 'upstream' | 'close';

const COMMAND_UPSTREAM_RULES: OptionRules<McpCommandUpstream> = {
  command: is.string({ nonEmpty: true }),
  args: is.arrayOf(is.string()),
  env: is.recordOf(is.string()),
  cwd: is.string({ nonEmpty: true }),
};

const URL_UPSTREAM_RULES: OptionRules<McpUrlUpstream> = {
  url: (value, path) => {
    if (typeof value !== 'string' || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      throw new InvalidOptionError(path, 'must be the http(s) URL of a Streamable HTTP MCP server');
    }
  },
};

const MCP_PROXY_RULES: OptionRules<McpProxyOptions> = {
  upstream: (value, path) => {
    is.object()(value, path);
    if (Object.hasOwn(value as object, 'url'))
      validateOptions('an MCP URL upstream', value as McpUrlUpstream, URL_UPSTREAM_RULES, { required: ['url'], prefix: path });
    else validateOptions('an MCP command upstream', value as McpCommandUpstream, COMMAND_UPSTREAM_RULES, { required: ['command'], prefix: path });
  },
  breaker: is.having('an AgentBreaker', 'checkToolCall'),
  sessionId: is.string({ nonEmpty: true }),
  downstream: is.having('{ stdin, stdout } streams', 'stdin', 'stdout'),
  onError: is.function(),
  onNotMcpOutput: is.function(),
};

/** The longest wait a timer allows: the client downstream decides how long to wait, and its cancellation aborts the request. */
const NO_TIMEOUT_MS = 2_147_483_647;

/** How long requests still being handled when the upstream ends are given to be answered (the breaker may record a failed call first). */
const ANSWER_GRACE_MS = 2_000;

/** How long a Streamable HTTP server is given, when the proxy ends, to take the cancellations of its calls still running and the end of its session. */
const END_SESSION_MS = 1_000;

/** Resolves once every promise of `pending` has settled, or after `ms`. */
async function settledWithin(pending: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(pending), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** What a forwarded request needs of the downstream request it answers. */
interface ForwardExtra {
  readonly requestId: string | number;
  readonly signal: AbortSignal;
  sendNotification(notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }): Promise<void>;
}

/**
 * Forwards `request` upstream with `send` (the client's request method): no
 * time limit of the proxy's own (the SDK's default of 60 s would cut off a
 * long tool the client is willing to wait for), the client's cancellation,
 * and the upstream's progress passed back under the client's own progress
 * token, each notification before the answer, as the server sent them.
 */
async function forwardRequest<T>(
  request: unknown,
  extra: ForwardExtra,
  send: (options: { signal: AbortSignal; timeout: number; onprogress?: (p: { progress: number; total?: number; message?: string }) => void }) => Promise<T>,
): Promise<T> {
  const token = (request as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta?.progressToken;
  let told = Promise.resolve();
  const progress =
    typeof token === 'string' || typeof token === 'number'
      ? {
          onprogress: (p: { progress: number; total?: number; message?: string }) => {
            told = told.then(() => extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })).catch(() => {});
          },
        }
      : {};
  const result = await send({ signal: extra.signal, timeout: NO_TIMEOUT_MS, ...progress });
  await told;
  return result;
}

/** A request as the log names it: its method, and the tool of a `tools/call`. */
function requestName(request: { method: string; params?: unknown }): string {
  const tool = (request.params as { name?: unknown } | undefined)?.name;
  return request.method === 'tools/call' && typeof tool === 'string' ? `tools/call ${JSON.stringify(tool)}` : request.method;
}

/**
 * The upstream's error as the server half passes it on: the SDK's client
 * reads an error answer into an McpError whose message adds `MCP error
 * <code>: ` to the message on the wire, and the server half would send that
 * message on, so the client would read the prefix once more than a direct
 * client does. It is taken off, and the client reads what a direct client would.
 */
function asUpstreamAnswer(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (!(error instanceof Error) || typeof code !== 'number') return error;
  const prefix = `MCP error ${code}: `;
  if (!error.message.startsWith(prefix)) return error;
  return Object.assign(new Error(error.message.slice(prefix.length)), { code, data: (error as { data?: unknown }).data });
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/** A percent-encoded part of a URL as it reads; a lone `%` is taken as written. */
function safelyDecoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The URL and the request options to reach it: `user:password@` in the URL
 * becomes a Basic Authorization header, as curl does, since fetch refuses a
 * URL that holds credentials.
 */
function withoutCredentials(text: string): [URL, { requestInit?: RequestInit }] {
  const url = new URL(text);
  if (url.username === '' && url.password === '') return [url, {}];
  const basic = Buffer.from(`${safelyDecoded(url.username)}:${safelyDecoded(url.password)}`).toString('base64');
  url.username = '';
  url.password = '';
  return [url, { requestInit: { headers: { authorization: `Basic ${basic}` } } }];
}

/**
 * An MCP server that stands in front of another one: it starts (or connects
 * to) the upstream server, mirrors its tools, resources and prompts, and
 * judges every `tools/call` with the breaker before forwarding it. A blocked
 * or stopped call comes back as a tool result with `isError: true` and the
 * explanation; after a stop every further call of the session is refused the
 * same way. One breaker session per client connection.
 *
 * A Streamable HTTP server that no longer knows the session (HTTP 404, as
 * after a restart) gets a new session, started as the MCP spec asks, and the
 * request is sent once more; when no new session can be started the proxy
 * ends (`closed` resolves to `upstream`). A request that cannot be served
 * (the server did not answer, dropped the connection or the response stream
 * before it answered, or lost the session) gets an {@link McpRequestError}
 * as its error answer at once, and `onError` is told; the session goes on.
 *
 * A message over stdio has a limit of 10 MiB, as in the MCP SDK, whose end
 * of a stdio connection closes it on reading one over it. The proxy keeps it
 * both ways: for what it reads (from the client, or from a server run as a
 * command) and for what it sends (to the client, whatever the server's
 * transport; to a server run as a command), measured as the line written.
 * One over it is dropped and the session goes on: a request over it, and a
 * request whose answer is over it, gets an {@link McpRequestError} saying so
 * (a `tools/call` so failed is a failed call to the breaker), and `onError`
 * is told of any other, such as a log message or progress notification
 * ({@link McpMessageTooLargeError}).
 *
 * A server run as a command is started as the leader of a process group of
 * its own (on POSIX), and the proxy's end, whichever side ended it, ends the
 * whole group: the server's input is ended; once the group has closed the
 * server's output, or after 2 s, the group gets SIGTERM, and SIGKILL 2 s
 * later if it still holds the output. So a server started through a wrapper
 * (`npx`, `uvx`, `sh -c`) is not left running when it outlives the end of
 * its input. On Windows only the process started is ended, as the MCP SDK
 * does.
 *
 * When the client goes away or the proxy is closed, the requests still
 * waiting on a Streamable HTTP server are cancelled there (with
 * `notifications/cancelled`, as a cancellation of the client's own is passed
 * on), and then the session is ended (HTTP DELETE), as the MCP spec asks of a
 * client that leaves; the server is given up to 1 s for both before the
 * connection is closed. A server run as a command sees its calls end with
 * its process group instead.
 *
 * A server reached by URL is named in messages by the origin of its URL: its
 * path and query, which may hold a secret, are left out, also where the
 * server's own words (an error page, a redirect) repeat them.
 *
 * Needs the optional package `@modelcontextprotocol/sdk`.
 *
 * @throws InvalidOptionError for malformed options
 * @throws MissingDependencyError when `@modelcontextprotocol/sdk` is not installed
 * @throws McpUpstreamError when the upstream server cannot be reached or refuses the connection
 */
export async function startMcpProxy(options: McpProxyOptions): Promise<McpProxy> {
  validateOptions('startMcpProxy', options, MCP_PROXY_RULES, { required: ['upstream', 'breaker'] });
  const [{ Client }, { Server }, { StdioServerTransport }, { deserializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE }, types] = await importOptional(
    SDK,
    FEATURE,
    () =>
      Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/server/index.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('@modelcontextprotocol/sdk/shared/stdio.js'),
        import('@modelcontextprotocol/sdk/types.js'),
      ]),
  );
  const { breaker } = options;
  const sessionId = options.sessionId ?? `mcp:${randomUUID()}`;

  let endedBy: McpProxyEnd | undefined;
  /** Tells `onError` of `failure`, unless the proxy is being closed (then nothing failed that anyone waits for). */
  const tell = (failure: Error): void => {
    if (endedBy !== undefined && endedBy !== 'upstream') return;
    try {
      options.onError?.(failure);
    } catch {
      // A failing logger must not take the answer down with it.
    }
  };
  /**
   * The MCP SDK's limit for one message over stdio, kept, but for each message rather than for the connection.
   * `notMcp` is shown each line that is not an MCP message, which the SDK's transports then skip.
   */
  const readBuffer = (
    source: string,
    standIn?: (tooLarge: McpMessageTooLargeError) => ReturnType<typeof deserializeMessage> | undefined,
    notMcp?: (line: string) => void,
  ) => {
    const deserialize = (line: string): ReturnType<typeof deserializeMessage> => {
      try {
        return deserializeMessage(line);
      } catch (error) {
        notMcp?.(line);
        throw error;
      }
    };
    return new LimitedReadBuffer({ limit: STDIO_DEFAULT_MAX_BUFFER_SIZE, source, deserialize, ...(standIn === undefined ? {} : { standIn }) });
  };
  /** A message over the limit that the SDK read itself, another version whose read buffer could not be replaced: it ends the connection. */
  const sdkOverflow = (error: Error, source: string): McpMessageTooLargeError | undefined =>
    /^ReadBuffer exceeded maximum size/.test(error.message) ? new McpMessageTooLargeError(source, undefined, STDIO_DEFAULT_MAX_BUFFER_SIZE) : undefined;
  /** Answers that the upstream server's own could not be: dropped, or too large to read. */
  const standIns = new StandInAnswers();
  /** The client's requests being answered, and their answers as measured against the limit while served. */
  const answers = new ServedAnswers();

  const upstream = options.upstream;
  // A URL is named by its origin alone: its path may be the secret (a hosted server's `/s/<token>/mcp`). A command by
  // its program alone: its arguments may hold one in a form no rule knows (`-p hunter2`), and the name goes into what
  // the client, so the model, is told.
  const upstreamName = 'url' in upstream ? new URL(upstream.url).origin : JSON.stringify(upstream.command.split(/[\\/]/).at(-1));
  const { pathname, search, password } = 'url' in upstream ? new URL(upstream.url) : { pathname: '/', search: '', password: '' };
  // The password as written in the URL and as the server received it (decoded), either of which its words may echo.
  const passwords = password === '' ? [] : [...new Set([password, safelyDecoded(password)])].sort((a, b) => b.length - a.length);
  /** `text` in the server's own words (an error page, a redirect) without the password, path and query of its URL, which they may echo. */
  const concealUrl = (text: string): string => {
    let concealed = passwords.reduce((out, secret) => out.replaceAll(secret, '[REDACTED]'), text);
    if (search !== '') concealed = concealed.replaceAll(search, '?…');
    return pathname === '/' ? concealed : concealed.replaceAll(pathname, '/…');
  };
  const upstreamSource = `the MCP server ${upstreamName}`;
  /** Cancellations being sent to the HTTP server: closing its connection would cut them off, so it waits for them (see `closeClient`). */
  const cancelling = new Set<Promise<void>>();
  const http = 'url' in upstream ? await import('@modelcontextprotocol/sdk/client/streamableHttp.js') : undefined;
  const stdio = 'url' in upstream ? undefined : await import('@modelcontextprotocol/sdk/client/stdio.js');
  /** How a server run as a command ended, once it has. */
  let serverExit = (): McpServerExit | undefined => undefined;
  const openTransport = (notMcp: (line: string) => void) => {
    if ('url' in upstream) {
      const [url, init] = withoutCredentials(upstream.url);
      const { StreamableHTTPClientTransport } = http!;
      // A request whose response stream is dropped before its answer fails at once, where the SDK would leave it waiting.
      const fetch = fetchAnsweringDroppedStreams(
        (id) => standIns.answer(id, `${upstreamSource} closed the connection before it answered`),
        (answer) => transport.onmessage?.(answer),
      );
      const transport: InstanceType<typeof StreamableHTTPClientTransport> = new StreamableHTTPClientTransport(url, { ...init, fetch });
      const send = transport.send.bind(transport);
      transport.send = (message, sendOptions) => {
        const sent = send(message, sendOptions);
        if ('method' in message && message.method === 'notifications/cancelled') {
          cancelling.add(sent);
          const done = () => void cancelling.delete(sent);
          sent.then(done, done);
        }
        return sent;
      };
      return transport;
    }
    const { transport, stdin, exit } = commandTransport(stdio!, {
      command: upstream.command,
      args: upstream.args ?? [],
      // The wrapped server is the user's own: it gets the environment the user gave the proxy.
      env: upstream.env ?? definedEnv(process.env),
      ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
      // An answer too large fails its own request; any other message too large is only told of (the proxy asked nothing of it).
      readBuffer: readBuffer(
        upstreamSource,
        (tooLarge) => (tooLarge.id !== undefined && tooLarge.method === undefined ? standIns.answer(tooLarge.id, tooLarge.message) : undefined),
        notMcp,
      ),
    });
    // What is sent to it keeps within its limit too: a client's request written anew (its id, its progress token, text that
    // was not UTF-8) can come out larger than it came in. One over it fails its call (the client's SDK request rejects).
    limitSends(transport, {
      limit: STDIO_DEFAULT_MAX_BUFFER_SIZE,
      source: 'the MCP client',
      stream: stdin,
      answerInstead: (tooLarge) => {
        tell(tooLarge);
        return { jsonrpc: '2.0' as const, id: tooLarge.id, error: { code: types.ErrorCode.InternalError, message: tooLarge.message } };
      },
      tell,
    });
    serverExit = exit;
    return transport;
  };
  type UpstreamClient = InstanceType<typeof Client>;
  /** What the SDK's client reports of a connected upstream: a message too large is told of, the rest is the SDK's own concern. */
  const upstreamError = (error: Error): void => {
    const tooLarge = McpMessageTooLargeError.isInstance(error) ? error : sdkOverflow(error, upstreamSource);
    if (tooLarge !== undefined) tell(tooLarge);
  };
  /** A client connected to the upstream server: for an HTTP server, a new session. */
  const connectUpstream = async (): Promise<UpstreamClient> => {
    const client = new Client({ name: 'governor-mcp', version: '1' });
    // A server that prints to stdout what is not MCP (logs, a usage text) is the usual reason a start fails: the first such line says so.
    let notMcp: Error | undefined;
    client.onerror = (error) => {
      if (error instanceof SyntaxError || error.name === 'ZodError') notMcp ??= error;
      upstreamError(error);
    };
    // Said at once, not only when the wait for an answer runs out: the first line that is not blank (a banner, a log line, a usage text).
    // And once after that: a server that logs to its stdout mid-session loses any answer such a line cuts into.
    let connecting = true;
    let shownStarting = false;
    let shownAfter = false;
    const showNotMcp = (line: string): void => {
      if (line.trim() === '') return;
      const starting = connecting;
      if (starting ? shownStarting : shownAfter) return;
      if (starting) shownStarting = true;
      else shownAfter = true;
      try {
        options.onNotMcpOutput?.(redact(line), { starting });
      } catch {
        // A failing logger must not take the connection down with it.
      }
    };
    try {
      await client.connect(openTransport(showNotMcp));
    } catch (error) {
      const exit = serverExit();
      const hints = [
        exit === undefined ? undefined : `it ${exitInWords(exit)} before it answered (its standard error may say why)`,
        notMcp === undefined
          ? undefined
          : `it wrote what is not an MCP message to its standard output (${firstLine(notMcp.message)}); a stdio MCP server writes only MCP messages there, and logs to stderr`,
      ].filter((hint) => hint !== undefined);
      throw new McpUpstreamError(upstreamName, error, hints.length === 0 ? undefined : hints.join('; '), concealUrl);
    } finally {
      connecting = false;
    }
    client.onerror = upstreamError;
    return client;
  };
  let current = await connectUpstream();

  const capabilities = current.getServerCapabilities() ?? {};
  const mirrored = {
    ...(capabilities.tools ? { tools: capabilities.tools } : {}),
    ...(capabilities.resources ? { resources: capabilities.resources } : {}),
    ...(capabilities.prompts ? { prompts: capabilities.prompts } : {}),
    ...(capabilities.completions ? { completions: capabilities.completions } : {}),
    ...(capabilities.logging ? { logging: capabilities.logging } : {}),
  };
  const instructions = current.getInstructions();
  const server = new Server(current.getServerVersion() ?? { name: 'governor-mcp', version: '1' }, {
    capabilities: mirrored,
    ...(instructions === undefined ? {} : { instructions }),
  });

  let closing: Promise<void> | undefined;
  const { promise: closed, resolve: resolveClosed } = Promise.withResolvers<McpProxyEnd>();
  /** Clients of sessions the server lost, still waiting for answers sent before: closed once they have them. */
  const retired = new Set<UpstreamClient>();
  /** The client's requests being handled: when the upstream ends, they are answered before the client is let go. */
  const answering = new Set<Promise<unknown>>();
  /**
   * Closes `client`. A session the proxy leaves while its server may still be running calls of it (the client went
   * away, or the proxy is closing) is ended as the MCP spec asks: the SDK has sent the cancellations of those calls
   * as the server half aborted them, and they are let reach the server, then the session is ended (HTTP DELETE);
   * the connection is closed after {@link END_SESSION_MS} in any case. Closing alone would leave the calls running.
   */
  const closeClient = async (client: UpstreamClient): Promise<void> => {
    const transport = client.transport;
    if (endedBy !== 'upstream' && http !== undefined && transport instanceof http.StreamableHTTPClientTransport) {
      await settledWithin([Promise.allSettled(cancelling).then(() => transport.terminateSession())], END_SESSION_MS);
    }
    await client.close();
  };
  const closeUpstream = () => Promise.allSettled([current, ...retired].map(closeClient));
  // The first side to end names the end. The closes start a tick later, once `closing` is set: closing one side calls back here for the other.
  const end = (by: McpProxyEnd): Promise<void> => {
    endedBy ??= by;
    return (closing ??= Promise.resolve().then(async () => {
      if (endedBy === 'upstream') {
        // Requests still waiting on the server fail at once, and their error answers reach the client before it is let go.
        await closeUpstream();
        await settledWithin(answering, ANSWER_GRACE_MS);
        await new Promise((resolve) => setImmediate(resolve));
      } else if (endedBy === 'close') {
        // The client is not left waiting for answers that cannot come. Closing the server half first aborts the
        // handlers (the SDK sends nothing for a request whose handler it aborted), so no request is answered twice,
        // and a tools/call cut off so is not recorded as failed: nothing was learned of it.
        const unanswered = answers.unanswered();
        await server.close();
        await Promise.allSettled(
          unanswered.map(({ id, name }) =>
            downstreamTransport.send({
              jsonrpc: '2.0',
              id,
              error: { code: types.ErrorCode.InternalError, message: new McpRequestError(name, 'the proxy is closing', undefined).message },
            }),
          ),
        );
      }
      // The client's end of a stream of its own is told that nothing more comes; the process's stdout is the process's.
      const endDownstream = (): void => {
        if (stdout !== process.stdout && !stdout.writableEnded) stdout.end();
      };
      // The server half first: closing it aborts the requests it still handles, which sends their cancellations upstream.
      await Promise.allSettled([server.close().finally(endDownstream), closeUpstream()]);
      resolveClosed(endedBy!);
    }));
  };
  const close = (): Promise<void> => end('close');
  /** Makes `client` the one requests go to: its end is the upstream's end, its notifications reach the client unchanged. */
  const adopt = (client: UpstreamClient): void => {
    current = client;
    client.onclose = () => {
      if (client === current) void end('upstream');
    };
    // List changes, resource updates and log messages of the upstream server reach the client unchanged.
    client.fallbackNotificationHandler = async (notification) => {
      await server.notification(notification as Parameters<typeof server.notification>[0]);
    };
  };

  const inFlight = new Map<UpstreamClient, number>();
  /** `call` on `client`, counted while it waits, so that a retired client is closed once nothing waits on it. */
  const counted = async <T>(client: UpstreamClient, call: (client: UpstreamClient) => Promise<T>): Promise<T> => {
    inFlight.set(client, (inFlight.get(client) ?? 0) + 1);
    try {
      return await call(client);
    } finally {
      const left = inFlight.get(client)! - 1;
      if (left > 0) inFlight.set(client, left);
      else {
        inFlight.delete(client);
        if (retired.delete(client)) void client.close();
      }
    }
  };
  /** The HTTP server answered 404 to a request of a session: it no longer knows the session (it restarted, or ended it). */
  const sessionLost = (error: unknown, client: UpstreamClient): boolean =>
    http !== undefined && error instanceof http.StreamableHTTPError && error.code === 404 && client.transport?.sessionId !== undefined;
  let renewal: { readonly lost: UpstreamClient; readonly fresh: Promise<UpstreamClient> } | undefined;
  /** A client of a new session in place of `lost`'s, started once however many requests found it lost; the proxy ends if none can be started. */
  const renewSession = (lost: UpstreamClient, error: unknown): Promise<UpstreamClient> => {
    if (endedBy !== undefined) return Promise.reject(error);
    if (lost !== current) return Promise.resolve(current);
    if (renewal?.lost !== lost) {
      const fresh = connectUpstream().then(
        async (client) => {
          if (endedBy !== undefined) {
            await closeClient(client);
            throw error;
          }
          lost.onclose = undefined;
          adopt(client);
          if (inFlight.has(lost)) retired.add(lost);
          else void lost.close();
          return client;
        },
        (failure: unknown) => {
          void end('upstream');
          throw failure;
        },
      );
      renewal = { lost, fresh };
    }
    return renewal.fresh;
  };
  /** `call` on the current client; once more on a new session when the HTTP server lost the session. */
  const onUpstream = async <T>(call: (client: UpstreamClient) => Promise<T>): Promise<T> => {
    const used = current;
    try {
      return await counted(used, call);
    } catch (error) {
      if (!sessionLost(error, used)) throw error;
      const fresh = await renewSession(used, error);
      try {
        return await counted(fresh, call);
      } catch (again) {
        // A new session lost at once: the host restarts the proxy, and the server with it when it is a command.
        if (sessionLost(again, fresh)) void end('upstream');
        throw again;
      }
    }
  };

  /** Why a request could not be served, in words (the server's own may echo the path of its URL: see {@link reasonOf}). */
  const reasonInWords = (error: unknown): string => {
    const standIn = standIns.reasonOf(error);
    if (standIn !== undefined) return standIn;
    if (McpMessageTooLargeError.isInstance(error)) return error.message;
    if (McpUpstreamError.isInstance(error)) return `the MCP server no longer knows the session (HTTP 404), and ${error.message}`;
    if (http !== undefined && error instanceof http.StreamableHTTPError) {
      const what = firstLine(error.message.replace(/^Streamable HTTP error: /, ''));
      return typeof error.code === 'number' && error.code >= 100 && error.code < 600
        ? `${upstreamSource} answered HTTP ${error.code}: ${what}`
        : `${upstreamSource}: ${what}`;
    }
    if (error instanceof types.McpError && error.code === types.ErrorCode.ConnectionClosed) return `${upstreamSource} closed the connection`;
    if (error instanceof Error && error.name === 'ZodError') return `${upstreamSource} sent an answer that is not a valid MCP result`;
    const network = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
    if (typeof network === 'string') return `${upstreamSource} did not answer (${network})`;
    return firstLine(error instanceof Error ? error.message : String(error));
  };
  /** Why a request could not be served, in words, without the path of the server's URL. */
  const reasonOf = (error: unknown): string => concealUrl(reasonInWords(error));
  /** An error answer of the upstream server, as opposed to one of the connection or of the SDK's own. */
  const isAnswer = (error: unknown): boolean =>
    error instanceof types.McpError &&
    standIns.reasonOf(error) === undefined &&
    !(error.code === types.ErrorCode.ConnectionClosed && error.message === 'MCP error -32000: Connection closed');
  /**
   * Runs `handle` for `request`: an error answer of the upstream server reaches the client as a
   * direct client gets it; any other failure as an McpRequestError saying why, which `onError` is
   * told of unless the client cancelled the request or the proxy is closing.
   */
  const passedOn = new WeakSet<object>();
  const served = <T>(request: { method: string; params?: unknown }, extra: ForwardExtra, handle: () => Promise<T>): Promise<T> => {
    const answer = (async () => {
      try {
        const result = await handle();
        // An answer the client's SDK would refuse (it ends the connection for a message over the limit) fails its call here, where
        // the breaker sees a tools/call fail: as when a server over stdio answers over it. Not measured: one that will not be sent.
        if (!extra.signal.aborted) {
          const bytes = answers.measure(extra.requestId, requestName(request), result, STDIO_DEFAULT_MAX_BUFFER_SIZE);
          if (bytes > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
            throw new McpMessageTooLargeError(upstreamSource, bytes, STDIO_DEFAULT_MAX_BUFFER_SIZE, { id: extra.requestId });
          }
        }
        return result;
      } catch (error) {
        // Already what the client is to get (a tools/call is served within the breaker's judgement, and the judgement within that).
        if ((typeof error === 'object' && error !== null && passedOn.has(error)) || extra.signal.aborted) throw error;
        if (isAnswer(error)) {
          const upstreamAnswer = asUpstreamAnswer(error) as Error;
          passedOn.add(upstreamAnswer);
          throw upstreamAnswer;
        }
        const failure = new McpRequestError(requestName(request), reasonOf(error), error);
        passedOn.add(failure);
        tell(failure);
        throw failure;
      }
    })();
    answering.add(answer);
    const done = () => void answering.delete(answer);
    answer.then(done, done);
    return answer;
  };

  type Forwardable = Parameters<UpstreamClient['request']>[0];
  const forward =
    <S extends Parameters<UpstreamClient['request']>[1]>(schema: S) =>
    (request: Forwardable, extra: ForwardExtra) =>
      served(request, extra, () => forwardRequest(request, extra, (options) => onUpstream((client) => client.request(request, schema, options))));

  if (capabilities.tools) {
    server.setRequestHandler(types.ListToolsRequestSchema, forward(types.ListToolsResultSchema));
    server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params;
      // The breaker sees what the client is told when the call could not be served.
      return served(request, extra, () =>
        judgeToolCall(
          breaker,
          sessionId,
          name,
          args ?? {},
          () =>
            served(request, extra, () =>
              forwardRequest(request, extra, (options) => onUpstream((client) => client.request(request, types.CallToolResultSchema, options))),
            ),
          extra.signal,
        ),
      );
    });
  }
  if (capabilities.resources) {
    server.setRequestHandler(types.ListResourcesRequestSchema, forward(types.ListResourcesResultSchema));
    server.setRequestHandler(types.ListResourceTemplatesRequestSchema, forward(types.ListResourceTemplatesResultSchema));
    server.setRequestHandler(types.ReadResourceRequestSchema, forward(types.ReadResourceResultSchema));
    if (capabilities.resources.subscribe) {
      server.setRequestHandler(types.SubscribeRequestSchema, forward(types.EmptyResultSchema));
      server.setRequestHandler(types.UnsubscribeRequestSchema, forward(types.EmptyResultSchema));
    }
  }
  if (capabilities.prompts) {
    server.setRequestHandler(types.ListPromptsRequestSchema, forward(types.ListPromptsResultSchema));
    server.setRequestHandler(types.GetPromptRequestSchema, forward(types.GetPromptResultSchema));
  }
  if (capabilities.completions) server.setRequestHandler(types.CompleteRequestSchema, forward(types.CompleteResultSchema));
  if (capabilities.logging) server.setRequestHandler(types.SetLevelRequestSchema, forward(types.EmptyResultSchema));

  adopt(current);
  server.onclose = () => void end('client');

  const downstream = options.downstream;
  const stdin = downstream?.stdin ?? process.stdin;
  const stdout = downstream?.stdout ?? process.stdout;
  const downstreamTransport = new StdioServerTransport(stdin, stdout);
  replaceReadBuffer(downstreamTransport, readBuffer('the MCP client'));
  // The requests of the client, as they arrive (the server's handling follows): each is let go once answered, or cancelled.
  downstreamTransport.onmessage = (message) => {
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof method !== 'string') return;
    if (typeof id === 'string' || typeof id === 'number') answers.asked(id, requestName({ method, params }));
    else if (method === 'notifications/cancelled') answers.forget(params?.requestId);
  };
  // What the client is sent keeps within its SDK's limit, which would end the connection: an answer over it (one that
  // was not measured while served, as an initialize answer or an error answer) becomes an error answer of that request
  // alone; a notification over it (a log message, progress) is dropped and told of.
  limitSends(downstreamTransport, {
    limit: STDIO_DEFAULT_MAX_BUFFER_SIZE,
    source: upstreamSource,
    stream: () => stdout,
    serialized: (message) => answers.take(message),
    answerInstead: (tooLarge, answer) => {
      const failure = new McpRequestError(answers.nameOf(answer) ?? 'a request', tooLarge.message, tooLarge);
      tell(failure);
      return { jsonrpc: '2.0' as const, id: tooLarge.id, error: { code: types.ErrorCode.InternalError, message: failure.message } };
    },
    tell,
  });
  /** A request too large to read is answered as one the proxy could not serve, when its id could be read; any other message is told of. */
  server.onerror = (error) => {
    const tooLarge = McpMessageTooLargeError.isInstance(error) ? error : sdkOverflow(error, 'the MCP client');
    if (tooLarge?.id === undefined || tooLarge.method === undefined) {
      if (tooLarge !== undefined) tell(tooLarge);
      return;
    }
    const failure = new McpRequestError(requestName({ method: tooLarge.method }), tooLarge.message, tooLarge);
    tell(failure);
    downstreamTransport.send({ jsonrpc: '2.0', id: tooLarge.id, error: { code: types.ErrorCode.InternalError, message: failure.message } }).catch(() => {});
  };
  await server.connect(downstreamTransport);
  // The stdio transport does not notice its client leaving: end of input is the end of the session.
  stdin.once('end', () => void end('client'));
  stdin.once('close', () => void end('client'));
  // Nor one that stopped reading (our output's pipe closed: EPIPE): calls it would still send could not be answered, and
  // must not run.
  stdout.once('error', () => void end('client'));
  return {
    sessionId,
    closed,
    get serverExit() {
      return serverExit();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}
