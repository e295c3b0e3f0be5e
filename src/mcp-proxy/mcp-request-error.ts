import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/**
 * A request of the MCP client that the proxy could not serve: the MCP server
 * behind it did not answer, dropped the connection (or the response stream)
 * before it answered, lost the session and no new one could be started, or
 * answered with a message over the size limit of one message over stdio
 * (the client's, whatever the server's transport); or the request was over
 * it, as read or as passed on to a server run as a command
 * ({@link McpMessageTooLargeError} is then its cause). The message names the request (its method, and
 * the tool of a `tools/call`), the server (the origin of its URL, or its
 * command) and what went wrong; it is redacted. The client gets it as the
 * error answer (JSON-RPC code -32603), and `onError` of `startMcpProxy` is
 * told of it.
 */
export class McpRequestError extends GovernorError {
  declare readonly code: 'GOVERNOR_MCP_REQUEST';
  /** `request`: what was asked, e.g. `tools/call "search"`; `reason`: what went wrong, in words. */
  constructor(request: string, reason: string, cause: unknown) {
    super('GOVERNOR_MCP_REQUEST', redact(`${request} could not be served: ${reason}`), { cause });
  }
}
