import { PassThrough } from 'node:stream';
import { startMcpProxy } from '../mcp-proxy/mcp-proxy.ts';
import { exitInWords } from '../mcp-proxy/server-exit.ts';
import { breakerFromFlags, type FlagBreaker, untilSignal } from './breaker-flags.ts';
import { parseCommandArgs } from './command-args.ts';
import { startExitCode, writeCommandError } from './command-error.ts';
import { checkBreakerStore, logBreaker } from './log-breaker.ts';
import { type CliIO, clip } from './progress.ts';
import { MCP_USAGE } from './commands/mcp.ts';
import { serverLog } from './server-log.ts';

/**
 * `governor mcp … -- COMMAND [ARGS…]`: serves the MCP proxy on stdio until
 * the client or the upstream server goes away (or SIGINT/SIGTERM).
 * Resolves to the exit code. Once the proxy has closed and its cleanup has
 * run, the process exits shortly after, even if a handle is left open: a
 * command of the CLI's own process, not one to run inside another.
 */
export async function runMcpCommand(argv: readonly string[], io: CliIO, cwd = process.cwd()): Promise<number> {
  let values: ReturnType<typeof parseMcpArgs>['values'];
  let positionals: string[];
  try {
    ({ values, positionals } = parseMcpArgs(argv));
  } catch (error) {
    writeCommandError(io, 'mcp', error, MCP_USAGE);
    return 2;
  }
  if (values.help) {
    // Help is asked for by a person, not an MCP client: stdout is free here.
    io.stdout.write(`${MCP_USAGE}\n`);
    return 0;
  }
  const [command, ...args] = positionals;
  if ((command === undefined) === (values.url === undefined)) {
    const problem = command === undefined ? 'give the MCP server to wrap: -- COMMAND [ARGS…] or --url URL' : 'give either -- COMMAND or --url, not both';
    writeCommandError(io, 'mcp', problem, MCP_USAGE);
    return 2;
  }
  const flagProblem = mcpFlagProblem(command, values.url, values.session);
  if (flagProblem !== undefined) {
    writeCommandError(io, 'mcp', flagProblem, MCP_USAGE);
    return 2;
  }
  let flagBreaker: FlagBreaker;
  try {
    flagBreaker = await breakerFromFlags(
      {
        config: values.config,
        store: values.store,
        storePrefix: values['store-prefix'],
        storeTimeout: values['store-timeout'],
        defaults: { idleResetMs: MCP_IDLE_RESET_MS },
      },
      cwd,
    );
  } catch (error) {
    writeCommandError(io, 'mcp', error);
    return startExitCode(error);
  }
  // stdout carries the MCP protocol: the operator's log is stderr.
  const log = serverLog(io, 'mcp');
  const stopLogging = logBreaker(flagBreaker.breaker, log);
  if (values.store !== undefined && values.session === undefined) {
    // Each connection is a session of its own then: another replica on the same store never sees it.
    log('--store without --session: this connection is a session of its own, shared with no other replica; give replicas the same --session to share one');
  }
  const checked = checkBreakerStore(flagBreaker.breaker, log);
  // A server that never answers is only given up on after the MCP SDK's 60 s: say what is going on before then.
  const waiting = setTimeout(() => log(`waiting for the MCP server to answer (${GIVEN})…`), WAITING_NOTE_MS);
  // Watched from the start: a signal while the server starts must end it too, not kill this process and leave it.
  const signalled = untilSignal();
  // So is the client's input, read through a pipe from now on (the proxy reads it once the server has started):
  // a client that leaves while the server starts is gone, not a server that failed to start 60 s later.
  const clientInput = new PassThrough();
  process.stdin.pipe(clientInput);
  const clientLeft = new Promise<'client'>((resolve) => process.stdin.once('end', () => resolve('client')));
  try {
    const starting = startMcpProxy({
      breaker: flagBreaker.breaker,
      downstream: { stdin: clientInput, stdout: process.stdout },
      upstream: command === undefined ? { url: values.url as string } : { command, args },
      ...(values.session === undefined ? {} : { sessionId: values.session }),
      // A request it could not serve (the server did not answer, dropped it, or lost the session), a message over the size limit: one line each, redacted.
      onError: (error) => log(error.message),
      // The likely reason it does not answer (it is not an MCP server, or not in stdio mode), said at once, in place of the note.
      onNotMcpOutput: (line, { starting }) => {
        const wrote = `the MCP server wrote what is not an MCP message to its standard output: "${clip(line, 100)}" (a stdio MCP server writes only MCP messages there, and logs to stderr)`;
        if (!starting) {
          log(`${wrote}; skipped, and an answer it was written into is lost; later such lines are not logged`);
          return;
        }
        clearTimeout(waiting);
        log(`${wrote}; waiting for it to answer (${GIVEN})…`);
      },
    }).finally(() => clearTimeout(waiting));
    const proxy = await Promise.race([starting, signalled, clientLeft]);
    if (typeof proxy === 'string') {
      // Not started yet: the server's process group is ended as this process exits (see the finally below).
      starting.catch(() => undefined);
      log(proxy === 'client' ? 'the client left before the MCP server answered; closing' : 'stopped before the MCP server answered');
      return 0;
    }
    const ended = await Promise.race([proxy.closed, signalled]);
    await proxy.close();
    if (ended === 'upstream') {
      // The client loses its tools: the operator's log says why, and the exit code that it was not the client's doing.
      const exit = proxy.serverExit;
      log(exit === undefined ? 'the MCP server closed the connection (it exited or dropped it); closing' : `the MCP server ${exitInWords(exit)}; closing`);
      return 1;
    }
    return 0;
  } catch (error) {
    writeCommandError(io, 'mcp', error);
    // A malformed --url or --session, or the MCP SDK not installed, is a usage error; a server that cannot be reached is not.
    return startExitCode(error);
  } finally {
    await checked;
    stopLogging();
    await flagBreaker.close();
    // The process ends with the proxy, whatever is left open (a process that left the server's group holding its
    // output, a connection): once cleanup has run and the caller has set the exit code, which is what process.exit uses.
    setTimeout(() => process.exit(), EXIT_AFTER_CLOSE_MS).unref();
  }
}

/** How long after the proxy closed a handle left open may keep the process running. */
const EXIT_AFTER_CLOSE_MS = 1_000;
const WAITING_NOTE_MS = 3_000;
/**
 * The breaker's idleResetMs unless --config sets it: a connection lives as long as its client, for days, and
 * people ask again; an agent's loop never pauses this long between calls.
 */
const MCP_IDLE_RESET_MS = 15 * 60_000;
/** How long the MCP SDK waits for the server's first answer, as the log says it. */
const GIVEN = 'it is given up to 60 s to start';

/**
 * What is wrong with the flags that name the server and the session, in the
 * flags' own words (the proxy's options would name `upstream.url`). A URL is
 * named by its scheme alone: the rest may hold a password or a token.
 */
function mcpFlagProblem(command: string | undefined, url: string | undefined, session: string | undefined): string | undefined {
  if (command === '') return 'the command after -- is empty';
  if (url !== undefined) {
    if (!URL.canParse(url)) return '--url is not a URL: give the http(s) URL of a Streamable HTTP MCP server';
    const { protocol } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') return `--url must be the http: or https: URL of a Streamable HTTP MCP server, not ${protocol}`;
  }
  if (session === '') return '--session is empty: give a session id, or leave the flag out for one per connection';
  return undefined;
}

/** The arguments of `governor mcp`; throws on an unknown or malformed option. */
function parseMcpArgs(argv: readonly string[]) {
  return parseCommandArgs(
    argv,
    {
      config: { type: 'string' },
      store: { type: 'string' },
      'store-prefix': { type: 'string' },
      'store-timeout': { type: 'string' },
      session: { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    true,
  );
}
