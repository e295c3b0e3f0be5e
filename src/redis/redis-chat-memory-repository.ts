import type { ModelMessage } from 'ai';
import { createClient } from './redis-module.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError, MessageDecodingError } from '../memory/chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../memory/chat-memory-repository.ts';
import { assertConversationId } from '../memory/conversation-id.ts';
import { decodeMessage, encodeMessages } from '../memory/message-codec.ts';
import { redactedAddress } from '../memory/store-address.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { assertRedisUrl, createClientForUrl } from './redis-url.ts';

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
   * How long connecting may take before a call fails (own client only).
   * @default 5000
   */
  connectTimeoutMs?: number;
}

/** What each option of RedisChatMemoryRepository accepts. */
const REDIS_CHAT_MEMORY_REPOSITORY_OPTION_RULES: OptionRules<RedisChatMemoryRepositoryOptions> = {
  client: is.object(),
  url: is.string({ nonEmpty: true }),
  keyPrefix: is.string(),
  connectTimeoutMs: is.timeMs(),
};

/**
 * Chat memory in Redis through node-redis: one list per conversation and a
 * set of conversation ids.
 *
 * An append is one RPUSH of the whole batch (atomic, so concurrent writers
 * never lose messages and each batch stays contiguous) in a MULTI with the
 * SADD that lists the conversation; `saveAll` and deletes are MULTI
 * transactions too, so the list and the set never disagree.
 */
export class RedisChatMemoryRepository implements ChatMemoryRepository, AsyncDisposable {
  readonly #client: RedisChatMemoryClient;
  /** The client this repository created and must close; undefined for a client passed in. */
  readonly #ownClient: { readonly isOpen: boolean; close(): Promise<void> } | undefined;
  readonly #prefix: string;
  readonly #store: string;
  #connecting: Promise<void> | undefined;

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

    if (client !== undefined) {
      this.#client = client;
      this.#ownClient = undefined;
      this.#store = `Redis (keys ${keyPrefix}*)`;
    } else {
      if (typeof url !== 'string' || url === '') {
        throw new InvalidOptionError('url', 'give a node-redis client as client, or a redis:// URL');
      }
      const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
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
            // a connection that was up and dropped is re-established with backoff.
            reconnectStrategy: (retries) => (connectedOnce ? Math.min(2 ** retries * 50, 2000) : false),
          },
        }),
      );
      own.on('ready', () => {
        connectedOnce = true;
      });
      // Errors surface through the commands that fail; an unheard 'error' event would crash the process.
      own.on('error', () => {});
      this.#client = own;
      this.#ownClient = own;
      this.#store = `Redis at ${redactedAddress(url)} (keys ${keyPrefix}*)`;
    }
  }

  async findConversationIds(): Promise<string[]> {
    const members = await this.#command('list conversations', (client) => client.sMembers(this.#conversationsKey()));
    return this.#strings(members).sort();
  }

  async findByConversationId(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    const stored = await this.#command('read a conversation', (client) => client.lRange(this.#messagesKey(conversationId), 0, -1));
    return this.#strings(stored).map(decodeMessage);
  }

  async saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    await this.#command('replace a conversation', (client) => {
      const key = this.#messagesKey(conversationId);
      const transaction = client.multi().del(key);
      if (encoded.length === 0) return transaction.sRem(this.#conversationsKey(), conversationId).exec();
      return transaction.rPush(key, encoded).sAdd(this.#conversationsKey(), conversationId).exec();
    });
  }

  async deleteByConversationId(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.#command('delete a conversation', (client) =>
      client.multi().del(this.#messagesKey(conversationId)).sRem(this.#conversationsKey(), conversationId).exec(),
    );
  }

  async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) return;
    await this.#command('append to a conversation', (client) =>
      client.multi().rPush(this.#messagesKey(conversationId), encoded).sAdd(this.#conversationsKey(), conversationId).exec(),
    );
  }

  /** Closes the client if the repository created it; a client passed in is left open. */
  async close(): Promise<void> {
    const own = this.#ownClient;
    if (own === undefined) return;
    await this.#connecting?.catch(() => {});
    if (own.isOpen) await own.close();
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

  async #command<T>(operation: string, run: (client: RedisChatMemoryClient) => Promise<T>): Promise<T> {
    try {
      await this.#connected();
      return await run(this.#client);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, operation, error);
    }
  }

  async #connected(): Promise<void> {
    // Callers arriving while a connection is being made wait for it: the client reports
    // itself open before it is ready, and would refuse their commands.
    if (this.#connecting === undefined && !this.#client.isOpen) {
      this.#connecting = this.#client.connect().then(
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

  #strings(reply: unknown): string[] {
    if (!Array.isArray(reply)) throw new MessageDecodingError(`${this.#store} answered with a non-list reply`);
    return reply.map((item: unknown) => {
      if (typeof item === 'string') return item;
      if (item instanceof Uint8Array) return Buffer.from(item).toString('utf8');
      throw new MessageDecodingError(`${this.#store} answered with a non-string element`);
    });
  }
}
