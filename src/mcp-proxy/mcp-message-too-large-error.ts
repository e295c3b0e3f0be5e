import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/** `10 MiB` for a whole number of MiB, else the bytes. */
function sizeText(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/**
 * A message over stdio over the limit of one message, 10 MiB as in the MCP
 * SDK: one read (from the MCP client, or from an MCP server run as a
 * command), or one the proxy was to send there (an answer or a notification
 * to the client, whatever the server's transport; a request passed on to a
 * server run as a command), which the MCP SDK at the other end would refuse
 * by closing the connection. It was dropped (one read, once read to its
 * end), the session goes on: a request of the client is answered with an
 * `McpRequestError` saying so, a server's answer fails its request the same
 * way; `onError` of `startMcpProxy` is told of a message that is no
 * request's answer (a notification, or no JSON).
 */
export class McpMessageTooLargeError extends GovernorError {
  declare readonly code: 'GOVERNOR_MCP_MESSAGE_TOO_LARGE';
  /**
   * The message's size, without its line end (as serialized, for one to be
   * sent); undefined when another version of the MCP SDK read it, whose own
   * limit ended the connection.
   */
  readonly bytes: number | undefined;
  /** The most a message may have. */
  readonly limit: number;
  /** The message's own `id`, when it could be read: what an answer to it carries. */
  readonly id: string | number | undefined;
  /** The message's `method`, when it could be read (an answer has none). */
  readonly method: string | undefined;

  /** `source`: who sent it, e.g. `the MCP client`. */
  constructor(source: string, bytes: number | undefined, limit: number, head: { readonly id?: string | number; readonly method?: string } = {}) {
    const what = bytes === undefined ? 'a message' : `a message of ${bytes} bytes`;
    const ended = bytes === undefined ? '; the MCP SDK ended the connection' : '';
    super('GOVERNOR_MCP_MESSAGE_TOO_LARGE', redact(`${source} sent ${what}, over the limit of ${sizeText(limit)} for one MCP message${ended}`));
    this.bytes = bytes;
    this.limit = limit;
    this.id = head.id;
    this.method = head.method;
  }
}
