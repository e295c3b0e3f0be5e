import { randomUUID } from 'node:crypto';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { McpUpstreamError } from './mcp-upstream-error.ts';
import { importOptional } from '../errors/missing-dependency-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { McpCommandUpstream, McpProxyOptions, McpUrlUpstream } from './mcp-proxy-options.ts';
import { judgeToolCall } from './tool-call-judge.ts';

const SDK = '@modelcontextprotocol/sdk';
const FEATURE = 'The MCP proxy (governor mcp)';

/** A running MCP proxy. */
export interface McpProxy {
  /** The breaker session of this connection. */
  readonly sessionId: string;
  /**
   * Resolves when either side has closed (and the other has been closed
   * too), to which ended it: `client` (its input ended or it disconnected),
   * `upstream` (the server exited or dropped the connection) or `close`
   * ({@link close} was called).
   */
  readonly closed: Promise<McpProxyEnd>;
  /** Closes both sides (a child server process is ended). */
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
};

/** The longest wait a timer allows: the client downstream decides how long to wait, and its cancellation aborts the request. */
const NO_TIMEOUT_MS = 2_147_483_647;

/** What a forwarded request needs of the downstream request it answers. */
interface ForwardExtra {
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
  let result: T;
  try {
    result = await send({ signal: extra.signal, timeout: NO_TIMEOUT_MS, ...progress });
  } catch (error) {
    throw asUpstreamAnswer(error);
  }
  await told;
  return result;
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

/**
 * The URL and the request options to reach it: `user:password@` in the URL
 * becomes a Basic Authorization header, as curl does, since fetch refuses a
 * URL that holds credentials.
 */
function withoutCredentials(text: string): [URL, { requestInit?: RequestInit }] {
  const url = new URL(text);
  if (url.username === '' && url.password === '') return [url, {}];
  const decoded = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part; // a lone % is taken as written
    }
  };
  const basic = Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`).toString('base64');
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
 * Needs the optional package `@modelcontextprotocol/sdk`.
 *
 * @throws InvalidOptionError for malformed options
 * @throws MissingDependencyError when `@modelcontextprotocol/sdk` is not installed
 * @throws McpUpstreamError when the upstream server cannot be reached or refuses the connection
 */
export async function startMcpProxy(options: McpProxyOptions): Promise<McpProxy> {
  validateOptions('startMcpProxy', options, MCP_PROXY_RULES, { required: ['upstream', 'breaker'] });
  const [{ Client }, { Server }, { StdioServerTransport }, types] = await importOptional(SDK, FEATURE, () =>
    Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]),
  );
  const { breaker } = options;
  const sessionId = options.sessionId ?? `mcp:${randomUUID()}`;

  const upstream = options.upstream;
  const clientTransport =
    'url' in upstream
      ? new (await import('@modelcontextprotocol/sdk/client/streamableHttp.js')).StreamableHTTPClientTransport(...withoutCredentials(upstream.url))
      : new (await import('@modelcontextprotocol/sdk/client/stdio.js')).StdioClientTransport({
          command: upstream.command,
          args: [...(upstream.args ?? [])],
          // The wrapped server is the user's own: it gets the environment the user gave the proxy.
          env: upstream.env === undefined ? definedEnv(process.env) : { ...upstream.env },
          ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
          stderr: 'inherit',
        });
  const client = new Client({ name: 'governor-mcp', version: '1' });
  // A server that prints to stdout what is not MCP (logs, a usage text) is the usual reason a start fails: the first such line says so.
  let notMcp: Error | undefined;
  client.onerror = (error) => {
    if (error instanceof SyntaxError || error.name === 'ZodError') notMcp ??= error;
  };
  try {
    await client.connect(clientTransport);
  } catch (error) {
    throw new McpUpstreamError(
      'url' in upstream ? withoutCredentials(upstream.url)[0].href : JSON.stringify([upstream.command, ...(upstream.args ?? [])].join(' ')),
      error,
      notMcp === undefined
        ? undefined
        : `it wrote what is not an MCP message to its standard output (${firstLine(notMcp.message)}); a stdio MCP server writes only MCP messages there, and logs to stderr`,
    );
  } finally {
    client.onerror = undefined;
  }

  const capabilities = client.getServerCapabilities() ?? {};
  const mirrored = {
    ...(capabilities.tools ? { tools: capabilities.tools } : {}),
    ...(capabilities.resources ? { resources: capabilities.resources } : {}),
    ...(capabilities.prompts ? { prompts: capabilities.prompts } : {}),
    ...(capabilities.completions ? { completions: capabilities.completions } : {}),
    ...(capabilities.logging ? { logging: capabilities.logging } : {}),
  };
  const instructions = client.getInstructions();
  const server = new Server(client.getServerVersion() ?? { name: 'governor-mcp', version: '1' }, {
    capabilities: mirrored,
    ...(instructions === undefined ? {} : { instructions }),
  });

  type Forwardable = Parameters<typeof client.request>[0];
  const forward =
    <S extends Parameters<typeof client.request>[1]>(schema: S) =>
    (request: unknown, extra: ForwardExtra) =>
      forwardRequest(request, extra, (options) => client.request(request as Forwardable, schema, options));

  if (capabilities.tools) {
    server.setRequestHandler(types.ListToolsRequestSchema, forward(types.ListToolsResultSchema));
    server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params;
      return judgeToolCall(breaker, sessionId, name, args ?? {}, () =>
        forwardRequest(request, extra, (options) => client.request(request, types.CallToolResultSchema, options)),
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
  // List changes, resource updates and log messages of the upstream server reach the client unchanged.
  client.fallbackNotificationHandler = async (notification) => {
    await server.notification(notification as Parameters<typeof server.notification>[0]);
  };

  let closing: Promise<void> | undefined;
  const { promise: closed, resolve: resolveClosed } = Promise.withResolvers<McpProxyEnd>();
  // The first side to end names the end. The closes start a tick later, once `closing` is set: closing one side calls back here for the other.
  const end = (by: McpProxyEnd): Promise<void> =>
    (closing ??= Promise.resolve().then(async () => {
      await Promise.allSettled([server.close(), client.close()]);
      resolveClosed(by);
    }));
  const close = (): Promise<void> => end('close');
  client.onclose = () => void end('upstream');
  server.onclose = () => void end('client');

  const downstream = options.downstream;
  const stdin = downstream?.stdin ?? process.stdin;
  await server.connect(new StdioServerTransport(stdin, downstream?.stdout ?? process.stdout));
  // The stdio transport does not notice its client leaving: end of input is the end of the session.
  stdin.once('end', () => void end('client'));
  stdin.once('close', () => void end('client'));
  return { sessionId, closed, close };
}

function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}
