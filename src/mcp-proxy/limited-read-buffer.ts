import { MessageHead } from './message-head.ts';
import { McpMessageTooLargeError } from './mcp-message-too-large-error.ts';

const NEWLINE = 0x0a;

/** What the MCP SDK's stdio transports need of their read buffer (its `ReadBuffer`). */
interface ReadBufferLike {
  append(chunk: Buffer): void;
  readMessage(): unknown;
  clear(): void;
}

/** Options of a {@link LimitedReadBuffer}. */
export interface LimitedReadBufferOptions<M> {
  /** The most bytes one message may have, its line end not counted. */
  readonly limit: number;
  /** Who sends what is read, as the error names it, e.g. `the MCP client`. */
  readonly source: string;
  /** One line into a message, as the SDK reads it (it throws for a line that is not one). */
  readonly deserialize: (line: string) => M;
  /** A message to read in place of one over the limit, if any; without one, reading it throws. */
  readonly standIn?: (tooLarge: McpMessageTooLargeError) => M | undefined;
}

/** A line read whole, or one over the limit, read to its end and dropped. */
type Item = { readonly line: Buffer } | { readonly tooLarge: McpMessageTooLargeError };

/**
 * The MCP SDK's stdio `ReadBuffer` with a limit per message rather than on
 * the transport: the SDK's buffer throws from `append` once what it holds
 * passes 10 MiB, and its transports then close — one oversize message ends
 * the session. Here a line over the limit is read to its end without being
 * kept (its `id` and `method` are read as it goes by), and reading it throws
 * an {@link McpMessageTooLargeError} from `readMessage`, which the SDK's
 * transports report to `onerror` and read on, as for a line that is not
 * JSON. Memory stays within the limit.
 */
export class LimitedReadBuffer<M> implements ReadBufferLike {
  readonly #options: LimitedReadBufferOptions<M>;
  /** The start of the line being read, while it is within the limit. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The line being read past the limit: how long it is so far, and its head. */
  #skipping: { bytes: number; readonly head: MessageHead } | undefined;
  #items: Item[] = [];

  constructor(options: LimitedReadBufferOptions<M>) {
    this.#options = options;
  }

  append(chunk: Buffer): void {
    for (let start = 0; start < chunk.length; ) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  readMessage(): M | null {
    const item = this.#items.shift();
    if (item === undefined) return null;
    if ('line' in item) return this.#options.deserialize(item.line.toString('utf8').replace(/\r$/, ''));
    const standIn = this.#options.standIn?.(item.tooLarge);
    if (standIn !== undefined) return standIn;
    throw item.tooLarge;
  }

  clear(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#skipping = undefined;
    this.#items = [];
  }

  /** Part of the line being read. */
  #take(part: Buffer): void {
    if (this.#skipping === undefined && this.#pendingBytes + part.length <= this.#options.limit) {
      if (part.length > 0) this.#pending.push(part);
      this.#pendingBytes += part.length;
      return;
    }
    if (this.#skipping === undefined) {
      // Past the limit: what was kept of the line is read for its head, and let go.
      this.#skipping = { bytes: this.#pendingBytes, head: new MessageHead() };
      for (const kept of this.#pending) this.#skipping.head.feed(kept);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    this.#skipping.bytes += part.length;
    this.#skipping.head.feed(part);
  }

  #endLine(): void {
    const skipped = this.#skipping;
    if (skipped === undefined) {
      this.#items.push({ line: this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes) });
    } else {
      this.#items.push({ tooLarge: new McpMessageTooLargeError(this.#options.source, skipped.bytes, this.#options.limit, skipped.head.fields) });
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#skipping = undefined;
  }
}

/**
 * Puts `buffer` in place of the read buffer of one of the MCP SDK's stdio
 * transports (`StdioClientTransport`, `StdioServerTransport`), before it is
 * started. The SDK has no option for this: its buffer is the private field
 * `_readBuffer`, read on every chunk. Returns false, changing nothing, when
 * the transport has no such field (another version of the SDK): its own
 * limit then applies, and one oversize message ends the connection.
 */
export function replaceReadBuffer(transport: object, buffer: ReadBufferLike): boolean {
  const holder = transport as { _readBuffer?: Partial<ReadBufferLike> };
  const current = holder._readBuffer;
  if (typeof current?.append !== 'function' || typeof current.readMessage !== 'function' || typeof current.clear !== 'function') return false;
  holder._readBuffer = buffer;
  return true;
}
