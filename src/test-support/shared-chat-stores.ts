import { randomBytes } from 'node:crypto';
import type { ModelMessage } from 'ai';
import pg from 'pg';
import { InMemoryChatMemoryRepository, type ChatMemoryRepository } from '../index.ts';
import { PostgresChatMemoryRepository } from '../postgres/index.ts';
import { RedisChatMemoryRepository } from '../redis/index.ts';
import { requirePostgres, requireRedis, testDatabaseUrl, testRedisUrl } from './services.ts';

/**
 * One store that several replicas share, each through a handle of its own
 * (its own connection, as separate processes would have); everything the
 * test wrote is removed when the test's `await using` scope ends.
 */
export interface SharedStore extends AsyncDisposable {
  /** A new handle on the store. */
  handle(): ChatMemoryRepository;
}

/** The stores replicas share in tests of requests that race: in this process, and the real servers. */
export const SHARED_STORES: ReadonlyArray<readonly [string, () => Promise<SharedStore>]> = [
  [
    'in-memory',
    async () => {
      const repository = new InMemoryChatMemoryRepository();
      return { handle: () => repository, [Symbol.asyncDispose]: async () => {} };
    },
  ],
  [
    'Redis',
    async () => {
      const url = await requireRedis(testRedisUrl());
      const keyPrefix = `governor-test:${randomBytes(6).toString('hex')}:`;
      const handles: RedisChatMemoryRepository[] = [];
      return {
        handle() {
          const repository = new RedisChatMemoryRepository({ url, keyPrefix, connectTimeoutMs: 2000 });
          handles.push(repository);
          return repository;
        },
        async [Symbol.asyncDispose]() {
          const [first] = handles;
          if (first !== undefined) for (const id of await first.findConversationIds()) await first.deleteByConversationId(id);
          await Promise.all(handles.map((handle) => handle.close()));
        },
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const connectionString = await requirePostgres(testDatabaseUrl());
      const tableName = `chat_memory_test_${randomBytes(6).toString('hex')}`;
      const handles: PostgresChatMemoryRepository[] = [];
      return {
        handle() {
          const repository = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
          handles.push(repository);
          return repository;
        },
        async [Symbol.asyncDispose]() {
          await Promise.all(handles.map((handle) => handle.close()));
          const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
          await client.connect();
          try {
            await client.query(`DROP TABLE IF EXISTS ${tableName}, ${tableName}_schema_migrations`);
          } finally {
            await client.end();
          }
        },
      };
    },
  ],
];

/**
 * Lines requests up: once armed for `count`, the next `count` reads of a
 * conversation through handles it wrapped each wait, after reading, until all
 * of them have read. Requests that start together then all read the history
 * before any of them writes, the interleaving in which two requests race.
 */
export class ReadMeeting {
  #left = 0;
  #waiting: Array<() => void> = [];

  arm(count: number): void {
    this.#left = count;
  }

  wrap(repository: ChatMemoryRepository): ChatMemoryRepository {
    return {
      findConversationIds: () => repository.findConversationIds(),
      findByConversationId: async (conversationId: string) => {
        const messages = await repository.findByConversationId(conversationId);
        await this.#meet();
        return messages;
      },
      saveAll: (conversationId: string, messages: readonly ModelMessage[]) => repository.saveAll(conversationId, messages),
      deleteByConversationId: (conversationId: string) => repository.deleteByConversationId(conversationId),
      append: (conversationId: string, messages: readonly ModelMessage[]) => repository.append(conversationId, messages),
    };
  }

  async #meet(): Promise<void> {
    if (this.#left === 0) return;
    this.#left--;
    if (this.#left > 0) return new Promise((resolve) => this.#waiting.push(resolve));
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}
