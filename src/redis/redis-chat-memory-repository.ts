import type { ModelMessage } from 'ai';
import { createClient } from './redis-module.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError, MessageDecodingError } from '../memory/chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../memory/chat-memory-repository.ts';
import { assertConversationId } from '../memory/conversation-id.ts';
import { decodeConversation, encodeMessages } from '../memory/message-codec.ts';
import { redactedAddress } from '../memory/store-address.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { assertRedisUrl, createClientForUrl } from './redis-url.ts';
import { closeWithin } from './close-within.ts';
import { MAX_RECONNECT_DELAY_MS, unlessRefused } from './reconnect-strategy.ts';
import { isErrorReply } from './error-reply.ts';

/** The commands of a transaction the repository queues. */
export interface RedisChatMemoryTransaction {
  rPush(key: string, elements: string[]): RedisChatMemoryTransaction;
  sAdd(key: string, members: string): RedisChatMemoryTransaction;
  sRem(key: string, members: string): RedisChatMemoryTransaction;
  del(key: string): RedisChatMemoryTransaction;
  exec(): Promise<unknown>;
}

/**
 * The part of a node-redis client (`createClient()`, also with RESP 2, or
 * `createCluster()`) the repository uses.
 */
export interface RedisChatMemoryClient {
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  lRange(key: string, start: number, stop: number): Promise<unknown>;
  sMembers(key: string): Promise<unknown>;
  multi(): RedisChatMemoryTransaction;
  /**
   * The repository bounds each call itself (`timeoutMs`), so it sends its
   * commands through a client with `timeout: 0` (no timer of the client's
   * own) and an `abortSignal` that is aborted when the call times out: a
   * command the client has not written yet is then dropped. A client
   * without this method is used as it is, the call still bounded.
   */
  withCommandOptions?(options: { abortSignal: AbortSignal; timeout: number }): RedisChatMemoryClient;
}

/** Options of {@link RedisChatMemoryRepository}. Give `client` or `url`, not both. */
export interface RedisChatMemoryRepositoryOptions {
  /**
   * A node-redis client you own. It is connected on first use if it is not
   * open yet, and never closed by the repository. Listen to its `error` event
   * yourself. With Redis Cluster, put a hash tag in `keyPrefix`.
   */
  client?: RedisChatMemoryClient;
  /**
   * Where to connect (`redis://[[user]:password@]host[:port][/db]`); the
   * repository creates its own client and closes it on `close()`.
   */
  url?: string;
  /**
   * Prefix of every key. The repository uses `<prefix>conversations` (a set
   * of conversation ids) and `<prefix>messages:<conversationId>` (a list per
   * conversation). For Redis Cluster use a hash tag, e.g.
   * `'{governor:chat-memory}:'`, so that a transaction's keys share a slot.
   * @default 'governor:chat-memory:'
   */
  keyPrefix?: string;
  /**
   * How long connecting may take before a call fails (own client only), the
   * server's answer to the handshake included.
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait for one call, connecting included (also with a client
   * passed in): past it the call fails with a `ChatMemoryStoreError` saying
   * that no reply came within this many milliseconds, instead of waiting
   * for a server that has stalled for as long as it stalls. `close()` waits
   * this long at most too.
   *
   * A read or a write that the client has not written to the server yet is
   * dropped when its call times out. A write that timed out (`append`,
   * `saveAll`, `deleteByConversationId`) may still be applied, though: it
   * may have reached the server, which applies it should it resume, and
   * node-redis cannot withdraw a transaction it holds. Its error says so
   * (`mayBeApplied`), unless the call timed out while connecting, before it
   * sent anything. The caller must not assume that it was not applied; read
   * the conversation to find out.
   * @default 5000
   */
  timeoutMs?: number;
}

/** What each option of RedisChatMemoryRepository accepts. */
const REDIS_CHAT_MEMORY_REPOSITORY_OPTION_RULES: OptionRules<RedisChatMemoryRepositoryOptions> = {
  client: is.object(),
  url: is.string({ nonEmpty: true }),
  keyPrefix: is.string(),
  connectTimeoutMs: is.timeMs(),
  timeoutMs: is.timeMs(),
};

/**
 * Chat memory in Redis through node-redis: one list per conversation and a
 * set of conversation ids.
 *
 * An append is one RPUSH of the whole batch (atomic, so concurrent writers
 * never lose messages and each batch stays contiguous) in a MULTI with the
 * SADD that lists the conversation; `saveAll` and deletes are MULTI
 * transactions too, so the list and the set never disagree. Every call
 * fails after `timeoutMs` without a reply (see
 * {@link RedisChatMemoryRepositoryOptions.timeoutMs}).
 */
export class RedisChatMemoryRepository implements ChatMemoryRepository, AsyncDisposable {
  readonly #client: RedisChatMemoryClient;
  /** The client this repository created and must close; undefined for a client passed in. */
  readonly #ownClient: { readonly isOpen: boolean; close(): Promise<void>; destroy(): void } | undefined;
  readonly #prefix: string;
  readonly #store: string;
  readonly #timeoutMs: number;
  /** How long connecting the own client may take, handshake included. */
  readonly #connectTimeoutMs: number;
  #connecting: Promise<void> | undefined;
  /** Set by close(): calls made after it are refused. */
  #closed = false;
  /** Calls made and not settled yet, which close() lets finish. */
  readonly #calls = new Set<Promise<unknown>>();

  constructor(options: RedisChatMemoryRepositoryOptions) {
    validateOptions('RedisChatMemoryRepository', options, REDIS_CHAT_MEMORY_REPOSITORY_OPTION_RULES);
    const { client, url } = options;
    if (client !== undefined && url !== undefined) {
      throw new InvalidOptionError('client', 'give either client or url, not both');
    }
    const keyPrefix: unknown = options.keyPrefix ?? 'governor:chat-memory:';
    if (typeof keyPrefix !== 'string' || keyPrefix === '') {
      throw new InvalidOptionError('keyPrefix', 'must be a non-empty string, so that the keys do not mix with others');
    }
    this.#prefix = keyPrefix;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5000;

    if (client !== undefined) {
      this.#client = client;
      this.#ownClient = undefined;
      this.#store = `Redis (keys ${keyPrefix}*)`;
    } else {
      if (typeof url !== 'string' || url === '') {
        throw new InvalidOptionError('url', 'give a node-redis client as client, or a redis:// URL');
      }
      const connectTimeoutMs = this.#connectTimeoutMs;
      if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs <= 0) {
        throw new InvalidOptionError('connectTimeoutMs', `must be a positive integer, got ${String(options.connectTimeoutMs)}`);
      }
      assertRedisUrl(url);
      let connectedOnce = false;
      const own = createClientForUrl(() =>
        createClient({
          url,
          // Fail calls at once while disconnected instead of queueing them for an unknown time.
          disableOfflineQueue: true,
          socket: {
            connectTimeout: connectTimeoutMs,
            // A first connection that fails is reported to the caller, not retried forever;
            // a connection that was up and dropped is re-established with backoff, unless the
            // server refuses the handshake (a password changed meanwhile): the next call then
            // connects anew and reports the server's reason, not only that the client is offline.
            reconnectStrategy: unlessRefused((retries) => (connectedOnce ? Math.min(2 ** retries * 50, MAX_RECONNECT_DELAY_MS) : false)),
          },
        }),
      );
      own.on('ready', () => {
        connectedOnce = true;
      });
      // Given up: the next call's connect() is a first connection again, whose failure its caller hears.
      own.on('terminated', () => {
        connectedOnce = false;
      });
      // Errors surface through the commands that fail; an unheard 'error' event would crash the process.
      own.on('error', () => {});
      this.#client = own;
      this.#ownClient = own;
      this.#store = `Redis at ${redactedAddress(url)} (keys ${keyPrefix}*)`;
    }
  }

  async findConversationIds(): Promise<string[]> {
    const members = await this.#command('list conversations', { write: false }, (client) => client.sMembers(this.#conversationsKey()));
    return this.#strings(members).sort();
  }

  async findByConversationId(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    const stored = await this.#command('read a conversation', { write: false }, (client) => client.lRange(this.#messagesKey(conversationId), 0, -1));
    return decodeConversation(this.#strings(stored), this.#store, conversationId);
  }

  async saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    await this.#command('replace a conversation', { write: true }, (client) => {
      const key = this.#messagesKey(conversationId);
      const transaction = client.multi().del(key);
      if (encoded.length === 0) return transaction.sRem(this.#conversationsKey(), conversationId).exec();
      return transaction.rPush(key, encoded).sAdd(this.#conversationsKey(), conversationId).exec();
    });
  }

  async deleteByConversationId(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.#command('delete a conversation', { write: true }, (client) =>
      client.multi().del(this.#messagesKey(conversationId)).sRem(this.#conversationsKey(), conversationId).exec(),
    );
  }

  async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) return;
    await this.#command('append to a conversation', { write: true }, (client) =>
      client.multi().rPush(this.#messagesKey(conversationId), encoded).sAdd(this.#conversationsKey(), conversationId).exec(),
    );
  }

  /**
   * Closes the repository. Calls made after it fail with a
   * `ChatMemoryStoreError` saying that the repository has been closed
   * (`mayBeApplied` false: nothing was sent), and no connection is made
   * again. Calls made before it finish first, one still waiting for the
   * connection included: it waits for them, then closes the client if the
   * repository created it, all within about `timeoutMs`, past which the
   * connection is dropped (a call still waiting then fails). A client passed
   * in is left open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const own = this.#ownClient;
    if (own === undefined) return;
    const graceful = (async () => {
      await Promise.allSettled(this.#calls);
      await this.#connecting?.catch(() => {});
      if (own.isOpen) await own.close();
    })();
    await closeWithin(graceful, this.#timeoutMs, () => own.destroy());
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #conversationsKey(): string {
    return `${this.#prefix}conversations`;
  }

  #messagesKey(conversationId: string): string {
    return `${this.#prefix}messages:${conversationId}`;
  }

  /**
   * Runs one call within `timeoutMs`.
   *
   * @param write whether the call writes: one whose commands went to the
   * client and got no answer (a timeout, a connection that dropped) may have
   * been applied, and its error says so.
   */
  async #command<T>(operation: string, { write }: { write: boolean }, run: (client: RedisChatMemoryClient) => Promise<T>): Promise<T> {
    // Refused before anything else: connecting again would leave a socket open that keeps the process alive.
    if (this.#closed) throw new ChatMemoryStoreError(this.#store, operation, new Error('the repository has been closed'));
    // node-redis waits for a reply without end once a command is written (its
    // own timeout only covers commands not written yet), and a server that
    // accepts connections but never answers stalls the handshake of connect()
    // too: one timer bounds the whole call instead. The abort makes the
    // client drop a command it still holds once the caller was told it failed.
    const abort = new AbortController();
    let sent = false;
    let timedOut = false;
    const work = this.#connected().then(() => {
      // Connected after the call timed out: what it would send now must not run after its caller was told it failed.
      if (abort.signal.aborted) throw new Error('connected after the call timed out');
      sent = true;
      return run(this.#client.withCommandOptions?.({ abortSignal: abort.signal, timeout: 0 }) ?? this.#client);
    });
    // close() waits for what calls made before it have sent, or are about to send.
    this.#calls.add(work);
    const done = (): void => void this.#calls.delete(work);
    work.then(done, done);
    const timeoutMs = this.#timeoutMs;
    try {
      return await new Promise<T>((resolve, reject) => {
        let settled = false;
        const timer = setTimeout(() => {
          // A reply that arrived while this process was busy is read before giving up on it (timers run before I/O).
          setImmediate(() => {
            if (settled) return;
            settled = true;
            timedOut = true;
            abort.abort();
            reject(new Error(`no reply within ${timeoutMs} ms`));
          });
        }, timeoutMs);
        timer.unref();
        work.then(
          (reply) => {
            clearTimeout(timer);
            if (settled) return;
            settled = true;
            resolve(reply);
          },
          (error: unknown) => {
            clearTimeout(timer);
            if (settled) return;
            settled = true;
            reject(error);
          },
        );
      });
    } catch (error) {
      // The abort does not withdraw a transaction (node-redis writes MULTI at once, without the signal): a
      // server that stalled has it, and applies it should it resume; so may one whose connection dropped after
      // it was sent. A call still connecting sent nothing, nor did one the client refused as closed (it checks
      // before queueing anything), and an error reply is the server saying what it did.
      const unanswered = timedOut || !(isErrorReply(error) || isClientClosed(error));
      throw new ChatMemoryStoreError(this.#store, operation, error, { mayBeApplied: write && sent && unanswered });
    }
  }

  async #connected(): Promise<void> {
    // Callers arriving while a connection is being made wait for it: the client reports
    // itself open before it is ready, and would refuse their commands.
    if (this.#connecting === undefined && !this.#client.isOpen) {
      this.#connecting = this.#connect().then(
        () => {
          this.#connecting = undefined;
        },
        (error: unknown) => {
          this.#connecting = undefined;
          throw error;
        },
      );
    }
    await this.#connecting;
  }

  async #connect(): Promise<void> {
    const own = this.#ownClient;
    if (own === undefined) {
      await this.#client.connect();
      return;
    }
    // node-redis's connectTimeout covers the TCP connection only: a server that
    // accepts it but never answers the handshake would hold connect() for ever.
    // Destroying the client ends the attempt; the next call connects anew.
    const connectTimeoutMs = this.#connectTimeoutMs;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      own.destroy();
    }, connectTimeoutMs);
    try {
      await this.#client.connect();
    } catch (error) {
      if (timedOut) throw new Error(`no reply within ${connectTimeoutMs} ms while connecting (the server accepted the connection)`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  #strings(reply: unknown): string[] {
    // A RESP3 client may map sets to Set (node-redis's type mapping).
    const list = reply instanceof Set ? [...reply] : reply;
    if (!Array.isArray(list)) throw new MessageDecodingError(`${this.#store} answered with a non-list reply`);
    return list.map((item: unknown) => {
      if (typeof item === 'string') return item;
      if (item instanceof Uint8Array) return Buffer.from(item).toString('utf8');
      throw new MessageDecodingError(`${this.#store} answered with a non-string element`);
    });
  }
}

/**
 * Whether node-redis refused a command because the client is closed: it
 * checks that before it queues anything, so the command was never sent.
 */
function isClientClosed(error: unknown): boolean {
  return error instanceof Error && error.message === 'The client is closed';
}
