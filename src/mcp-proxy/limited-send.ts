import type { Writable } from 'node:stream';
import { McpMessageTooLargeError } from './mcp-message-too-large-error.ts';

/** A JSON-RPC message, as far as the limit reads it. */
interface MessageLike {
  readonly id?: unknown;
  readonly method?: unknown;
}

/** What {@link limitSends} needs of one of the MCP SDK's stdio transports: its `send`. */
interface SendingTransport<M> {
  send(message: M, options?: unknown): Promise<void>;
}

/** Options of {@link limitSends}. */
export interface SendLimitOptions<M> {
  /** The most bytes one message may have, its line end not counted, as for what is read (`LimitedReadBuffer`). */
  readonly limit: number;
  /** Who the messages sent are from, as the error names it, e.g. `the MCP server "my-server"`. */
  readonly source: string;
  /**
   * The stream the transport writes to, once it has one: the line measured
   * is written there. Without one, the transport's own `send` writes the
   * message (and serializes it again).
   */
  readonly stream: () => Writable | null | undefined;
  /** The JSON of `message`, when it is known already (an answer measured as it was served), else undefined. */
  readonly serialized?: (message: M) => string | undefined;
  /**
   * The error answer to send in place of `answer`, which is over the limit
   * (its id is that of `tooLarge`); whoever is to be told, is told here. One
   * over the limit too is dropped.
   */
  readonly answerInstead: (tooLarge: McpMessageTooLargeError & { readonly id: string | number }, answer: M) => M;
  /** Told of a notification over the limit, which is dropped. */
  readonly tell: (tooLarge: McpMessageTooLargeError) => void;
}

/** The drain each stream's writes wait for, once its buffer is full: one listener, however many writes wait. */
const draining = new WeakMap<Writable, Promise<void>>();

/**
 * Writes `line` to `stream`, as the MCP SDK's stdio transports do: settled
 * once written, or once the stream has drained. Writes made while it is full
 * share one wait: a listener each (a burst of progress notifications to a
 * slow client) set off Node's warning of a listener leak.
 */
function writeLine(stream: Writable, line: string): Promise<void> {
  if (stream.write(line)) return Promise.resolve();
  let drained = draining.get(stream);
  if (drained === undefined) {
    drained = new Promise((resolve) =>
      stream.once('drain', () => {
        draining.delete(stream);
        resolve();
      }),
    );
    draining.set(stream, drained);
  }
  return drained;
}

/**
 * Keeps the messages `transport` sends within the limit of one message over
 * stdio, which is the peer's limit too: the MCP SDK ends the connection
 * when it reads a message over it (its read buffer refuses it). Each message
 * is serialized once (the SDK's `serializeMessage` is `JSON.stringify` and a
 * line end), measured, and that line is written. Over the limit: an answer
 * (a result or an error, to a request it names by id) gets the error answer
 * of `answerInstead` in its place, so that the request it answers fails
 * alone; a request is dropped and its `send` fails with the
 * {@link McpMessageTooLargeError}, so that its sender does not wait for an
 * answer that cannot come (and says so); a notification is dropped, and
 * `tell` is told of it.
 */
export function limitSends<M extends MessageLike>(transport: SendingTransport<M>, options: SendLimitOptions<M>): void {
  const send = transport.send.bind(transport);
  const limited = async (message: M, sendOptions?: unknown, inPlaceOfAnswer = false): Promise<void> => {
    const json = options.serialized?.(message) ?? JSON.stringify(message);
    const bytes = Buffer.byteLength(json);
    if (bytes <= options.limit) {
      const stream = options.stream();
      return stream == null ? send(message, sendOptions) : writeLine(stream, `${json}\n`);
    }
    const { id, method } = message;
    const head = {
      ...(typeof id === 'string' || typeof id === 'number' ? { id } : {}),
      ...(typeof method === 'string' ? { method } : {}),
    };
    const tooLarge = new McpMessageTooLargeError(options.source, bytes, options.limit, head);
    if (!inPlaceOfAnswer && head.id !== undefined && method === undefined && ('result' in message || 'error' in message)) {
      return limited(options.answerInstead(tooLarge as typeof tooLarge & { readonly id: string | number }, message), sendOptions, true);
    }
    // A request: its sender is told, by the failure.
    if (method !== undefined && id !== undefined) throw tooLarge;
    options.tell(tooLarge);
  };
  transport.send = (message, sendOptions) => limited(message, sendOptions);
}
