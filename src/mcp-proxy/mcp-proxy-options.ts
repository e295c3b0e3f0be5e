import type { Readable, Writable } from 'node:stream';
import type { AgentBreaker } from '../breaker/agent-breaker.ts';

/**
 * An MCP server started as a child process, spoken to over stdio. On POSIX it
 * leads a process group of its own, which the proxy ends as a whole.
 */
export interface McpCommandUpstream {
  readonly command: string;
  readonly args?: readonly string[];
  /** Environment of the child. @default this process's environment */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the child. @default this process's */
  readonly cwd?: string;
}

/** An MCP server reached over Streamable HTTP. */
export interface McpUrlUpstream {
  readonly url: string;
}

/** Options of {@link startMcpProxy}. */
export interface McpProxyOptions {
  /** The MCP server whose tools, resources and prompts are mirrored. */
  readonly upstream: McpCommandUpstream | McpUrlUpstream;
  /** Judges every `tools/call`. Share its store to share sessions between processes. */
  readonly breaker: AgentBreaker;
  /**
   * The breaker session of this connection.
   * @default `mcp:<random uuid>` — one session per client connection
   */
  readonly sessionId?: string;
  /**
   * Where the MCP client is connected.
   * @default this process's stdin and stdout
   */
  readonly downstream?: { readonly stdin: Readable; readonly stdout: Writable };
  /**
   * Told of each request that could not be served (the MCP server did not
   * answer, dropped the connection or the response stream before its answer,
   * lost the session and no new one could be started, or sent an answer over
   * the size limit of one message over stdio, whatever its transport; or the
   * request itself was over it, as read or as passed on), with an
   * `McpRequestError` whose message is redacted; the client gets the same
   * error as its answer. Told with an `McpMessageTooLargeError` of any other
   * message over the limit (a notification, such as a log message or
   * progress), which is dropped. Not told of the server's own error answers,
   * which reach the client unchanged.
   */
  readonly onError?: (error: Error) => void;
  /**
   * Told of the first line an MCP server started as a command wrote to its
   * standard output that is not an MCP message (a banner, a log line, a usage
   * text), redacted: once while the proxy waits for the server to answer its
   * first request (`starting: true`), and once after that (`starting:
   * false`). The line is skipped, as the MCP SDK skips it, so a server that
   * prints a banner before it speaks MCP still works; one that never speaks
   * MCP is given up on after the SDK's 60 s, with an `McpUpstreamError`
   * saying that it wrote what is not an MCP message. Later in a session such
   * a line means a server that logs to its stdout: an answer the line was
   * written into is lost, and the request waits for the client's timeout.
   * @default nothing
   */
  readonly onNotMcpOutput?: (line: string, context: { readonly starting: boolean }) => void;
}
