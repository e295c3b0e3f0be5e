import type { ModelMessage } from 'ai';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../memory/chat-memory-repository.ts';
import { assertConversationId } from '../memory/conversation-id.ts';
import { decodeConversation, encodeMessages } from '../memory/message-codec.ts';
import { redactedAddress } from '../memory/store-address.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { checkConnectionString, poolAddress } from './connection-string.ts';
import { inTransaction, type TransactionOutcome } from './pg-transaction.ts';
import { BoundedPool, isQueryTimeout } from './bounded-pool.ts';

/** Options of {@link PostgresChatMemoryRepository}. Give `pool` or `connectionString`, not both. */
export interface PostgresChatMemoryRepositoryOptions {
  /**
   * A pool you own; the repository borrows connections and never ends it.
   * Its own settings bound the waits: give it `connectionTimeoutMillis` and
   * `query_timeout`, or a stalled server holds calls for as long as it stalls.
   */
  pool?: Pool;
  /** Where to connect; the repository creates its own pool and ends it on `close()`. */
  connectionString?: string;
  /**
   * Table holding the messages, optionally schema-qualified (`app.chat_memory`).
   * Lower-case letters, digits and underscores; the table part at most 45
   * characters. Its schema versions go to `<tableName>_schema_migrations`.
   * @default 'governor_chat_memory'
   */
  tableName?: string;
  /**
   * How long connecting may take before a call fails (own pool only).
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait for the reply to each statement (own pool only): past it
   * the call fails with a `ChatMemoryStoreError` saying that no reply came
   * within this many milliseconds, instead of waiting for a server that has
   * stalled for as long as it stalls. A call makes one to a few statements;
   * an append's wait for the lock of another writer of the same conversation
   * counts too. The connection of a statement that timed out is dropped,
   * which rolls back its transaction, but a write that timed out may still
   * have been applied, should its last statement (the COMMIT, or the DELETE
   * of `deleteByConversationId`) have reached the server: the caller must
   * not assume that it was not. `close()` waits this long at most too.
   * @default 5000
   */
  timeoutMs?: number;
}

interface Migration {
  readonly version: number;
  readonly statements: (table: string) => readonly string[];
}

/**
 * Schema history, oldest first. Each database records the versions it has
 * applied, so a later release appends a migration here and existing tables
 * catch up on first use.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: (table) => [
      `CREATE TABLE ${table} (
        conversation_id text NOT NULL,
        seq bigint NOT NULL,
        role text NOT NULL,
        message text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (conversation_id, seq)
      )`,
    ],
  },
];

const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const MAX_TABLE_PART_LENGTH = 45;
/** First key of the advisory lock that serialises schema changes; the second is the table's hash. */
const SCHEMA_LOCK_NAMESPACE = 'governor.chat_memory.schema';

/**
 * The table's schema-qualified name as the server resolves the configured
 * one: the table `to_regclass` finds (through `search_path` for a bare name),
 * or where CREATE TABLE would put it when there is none yet. Locks are keyed
 * on it, so that `chat` and `public.chat` (one table spelt two ways by two
 * services) take the same lock.
 */
const QUALIFIED_TABLE_NAME = `SELECT COALESCE(
  (SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1::text)),
  CASE WHEN strpos($1::text, '.') > 0 THEN $1::text ELSE current_schema() || '.' || $1::text END,
  $1::text) AS name`;

/** What each option of PostgresChatMemoryRepository accepts. */
const POSTGRES_CHAT_MEMORY_REPOSITORY_OPTION_RULES: OptionRules<PostgresChatMemoryRepositoryOptions> = {
  pool: is.having('a pg Pool', 'query'),
  connectionString: is.string({ nonEmpty: true }),
  tableName: is.string({ nonEmpty: true }),
  connectTimeoutMs: is.timeMs(),
  timeoutMs: is.timeMs(),
};

/**
 * Chat memory in PostgreSQL through `pg`, for services with several replicas.
 *
 * The table is created (or migrated) on first use, inside a transaction that
 * holds an advisory lock, so replicas starting together do not race. When the
 * schema is already current nothing is created, so a role with only SELECT,
 * INSERT and DELETE on the two tables (and USAGE on their schema) can use
 * tables that their owner or a migration job created. Each
 * append takes a transaction-scoped advisory lock on its conversation (keyed
 * on the table as the server resolves its name, so services that spell it
 * differently, `chat` and `public.chat`, still take turns) and
 * numbers its messages after the conversation's last one: concurrent writers
 * never lose messages and every batch stays contiguous. Messages are stored
 * as JSON text (not `jsonb`, which rejects NUL characters).
 */
export class PostgresChatMemoryRepository implements ChatMemoryRepository, AsyncDisposable {
  readonly #pool: Pool;
  /** The pool this repository created and ends; undefined for a pool passed in. */
  readonly #ownPool: BoundedPool | undefined;
  readonly #timeoutMs: number;
  readonly #table: string;
  readonly #migrationsTable: string;
  readonly #store: string;
  /** Resolves to the table's qualified name once its schema is current. */
  #schemaReady: Promise<string> | undefined;
  /** Set by close(): calls made after it are refused. */
  #closed = false;
  /** Calls made and not settled yet, which close() lets finish. */
  readonly #calls = new Set<Promise<unknown>>();

  constructor(options: PostgresChatMemoryRepositoryOptions) {
    validateOptions('PostgresChatMemoryRepository', options, POSTGRES_CHAT_MEMORY_REPOSITORY_OPTION_RULES);
    if (options === undefined) throw new InvalidOptionError('options', 'give a pg.Pool as pool, or a connection string');
    const { pool, connectionString } = options;
    if (pool !== undefined && connectionString !== undefined) {
      throw new InvalidOptionError('pool', 'give either pool or connectionString, not both');
    }
    const tableName = options.tableName ?? 'governor_chat_memory';
    const parts = tableName.split('.');
    if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part)) || (parts.at(-1) ?? '').length > MAX_TABLE_PART_LENGTH) {
      throw new InvalidOptionError(
        'tableName',
        `"${tableName}" is not a plain table name: use lower-case letters, digits and underscores, ` +
          `optionally "schema.table", the table part at most ${MAX_TABLE_PART_LENGTH} characters`,
      );
    }
    this.#table = tableName;
    this.#migrationsTable = `${tableName}_schema_migrations`;
    this.#timeoutMs = options.timeoutMs ?? 5000;

    if (pool !== undefined) {
      this.#pool = pool;
      this.#ownPool = undefined;
      this.#store = `PostgreSQL at ${poolAddress(pool)} (table ${tableName})`;
    } else {
      if (typeof connectionString !== 'string' || connectionString === '') {
        throw new InvalidOptionError('connectionString', 'give a pg.Pool as pool, or a connection string');
      }
      checkConnectionString(connectionString);
      const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
      if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs <= 0) {
        throw new InvalidOptionError('connectTimeoutMs', `must be a positive integer, got ${String(options.connectTimeoutMs)}`);
      }
      this.#ownPool = new BoundedPool(connectionString, { connectTimeoutMs, timeoutMs: this.#timeoutMs });
      this.#pool = this.#ownPool.pool;
      this.#store = `PostgreSQL at ${redactedAddress(connectionString)} (table ${tableName})`;
    }
  }

  async findConversationIds(): Promise<string[]> {
    return this.#admitted('list conversations', async () => {
      await this.#ensureSchema();
      const result = await this.#query('list conversations', `SELECT DISTINCT conversation_id FROM ${this.#table}`);
      // Sorted here, not in SQL: the database collation would order ids differently per server.
      return result.rows.map((row: { conversation_id: string }) => row.conversation_id).sort();
    });
  }

  async findByConversationId(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    return this.#admitted('read a conversation', async () => {
      await this.#ensureSchema();
      const result = await this.#query('read a conversation', `SELECT message FROM ${this.#table} WHERE conversation_id = $1 ORDER BY seq`, [conversationId]);
      return decodeConversation(
        result.rows.map((row: { message: string }) => row.message),
        this.#store,
        conversationId,
      );
    });
  }

  async saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    await this.#admitted('replace a conversation', async () => {
      const qualified = await this.#ensureSchema();
      await this.#transaction('replace a conversation', async (client) => {
        await this.#lockConversation(client, qualified, conversationId);
        await client.query(`DELETE FROM ${this.#table} WHERE conversation_id = $1`, [conversationId]);
        await this.#insertAfterLast(client, conversationId, messages, encoded);
      });
    });
  }

  async deleteByConversationId(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.#admitted('delete a conversation', async () => {
      await this.#ensureSchema();
      await this.#query('delete a conversation', `DELETE FROM ${this.#table} WHERE conversation_id = $1`, [conversationId], true);
    });
  }

  async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) return;
    await this.#admitted('append to a conversation', async () => {
      const qualified = await this.#ensureSchema();
      await this.#transaction('append to a conversation', async (client) => {
        await this.#lockConversation(client, qualified, conversationId);
        await this.#insertAfterLast(client, conversationId, messages, encoded);
      });
    });
  }

  /**
   * Closes the repository. Calls made after it fail with a
   * `ChatMemoryStoreError` saying that the repository has been closed
   * (`mayBeApplied` false: nothing was sent). Calls made before it finish
   * first: it waits for them, then ends the pool if the repository created
   * it, all within about `timeoutMs`, past which the connections still open
   * are dropped (a call still running then fails, saying that the repository
   * has been closed when it had not been given a connection yet). A pool
   * passed in is left open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const own = this.#ownPool;
    if (own === undefined) return;
    const deadline = performance.now() + this.#timeoutMs;
    await settledWithin(this.#calls, this.#timeoutMs);
    await own.end(Math.max(0, deadline - performance.now()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Runs `call` unless the repository has been closed, and lets close() wait for it. */
  #admitted<T>(operation: string, call: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new ChatMemoryStoreError(this.#store, operation, new Error('the repository has been closed')));
    const running = call();
    this.#calls.add(running);
    const settled = (): void => void this.#calls.delete(running);
    running.then(settled, settled);
    return running;
  }

  /** Serialises writers of one conversation until the transaction ends, whatever name they know the table by. */
  async #lockConversation(client: PoolClient, qualified: string, conversationId: string): Promise<void> {
    await advisoryLocks(
      client,
      this.#lockNames(qualified).map((name) => [name, conversationId]),
    );
  }

  /**
   * The qualified name, then the configured one when it differs: releases
   * up to 0.1.0 keyed the locks on the name as configured, and taking that
   * lock too keeps their replicas and these in step during a rolling upgrade.
   * Every caller takes them in this order, so the two cannot deadlock.
   */
  #lockNames(qualified: string): string[] {
    return qualified === this.#table ? [qualified] : [qualified, this.#table];
  }

  async #insertAfterLast(client: PoolClient, conversationId: string, messages: readonly ModelMessage[], encoded: readonly string[]): Promise<void> {
    if (encoded.length === 0) return;
    await client.query(
      `INSERT INTO ${this.#table} (conversation_id, seq, role, message)
       SELECT $1, last.seq + batch.ord, batch.role, batch.message
       FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM ${this.#table} WHERE conversation_id = $1) AS last,
            unnest($2::text[], $3::text[]) WITH ORDINALITY AS batch(role, message, ord)`,
      [conversationId, messages.map((message) => message.role), encoded],
    );
  }

  #ensureSchema(): Promise<string> {
    this.#schemaReady ??= this.#migrate().catch((error: unknown) => {
      // Let the next call try again (the server may be back).
      this.#schemaReady = undefined;
      throw error;
    });
    return this.#schemaReady;
  }

  /**
   * Checks the schema version first, without DDL: PostgreSQL checks the
   * CREATE privilege even for `CREATE TABLE IF NOT EXISTS` on a table that
   * exists. Only a missing or older schema takes the lock and runs DDL.
   */
  async #migrate(): Promise<string> {
    let current: number;
    try {
      current = await this.#schemaVersion(this.#pool);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, 'check its schema', this.#explained(error));
    }
    if (current !== LATEST_VERSION) await this.#migrateUnderLock();
    try {
      return await qualifiedTableName(this.#pool, this.#table);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, 'check its schema', this.#explained(error));
    }
  }

  async #migrateUnderLock(): Promise<void> {
    await this.#transaction('create or migrate its schema', async (client) => {
      const qualified = await qualifiedTableName(client, this.#table);
      await advisoryLocks(
        client,
        this.#lockNames(qualified).map((name) => [SCHEMA_LOCK_NAMESPACE, name]),
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#migrationsTable} (
          version integer PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
      // Read again under the lock: another replica may have migrated meanwhile.
      const version = await this.#schemaVersion(client);
      for (const migration of MIGRATIONS) {
        if (migration.version <= version) continue;
        for (const statement of migration.statements(this.#table)) await client.query(statement);
        await client.query(`INSERT INTO ${this.#migrationsTable} (version) VALUES ($1)`, [migration.version]);
      }
    });
  }

  /** The recorded schema version, 0 when there is none; refuses one newer than this library knows. */
  async #schemaVersion(queryable: Pool | PoolClient): Promise<number> {
    // to_regclass resolves the name as the queries do (search_path, or its schema) and needs no privilege on the table.
    const found = await queryable.query('SELECT to_regclass($1) IS NOT NULL AS present', [this.#migrationsTable]);
    if ((found.rows[0] as { present?: unknown } | undefined)?.present !== true) return 0;
    const result = await queryable.query(`SELECT COALESCE(MAX(version), 0) AS version FROM ${this.#migrationsTable}`);
    const version = Number((result.rows[0] as { version?: unknown } | undefined)?.version ?? 0);
    if (version > LATEST_VERSION) {
      throw new Error(`its chat memory schema is version ${version}, newer than this version of the library knows (${LATEST_VERSION}); upgrade the library`);
    }
    return version;
  }

  /** `write`: a statement that changes the conversation, which may have been applied when its answer did not come. */
  async #query(operation: string, text: string, values?: unknown[], write = false): Promise<QueryResult> {
    try {
      return await this.#pool.query(text, values);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, operation, this.#explained(error), { mayBeApplied: write && isQueryTimeout(error) });
    }
  }

  async #transaction(operation: string, work: (client: PoolClient) => Promise<void>): Promise<void> {
    const outcome: TransactionOutcome = { unknown: false };
    try {
      await inTransaction(this.#pool, work, outcome);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, operation, this.#explained(error), { mayBeApplied: outcome.unknown });
    }
  }

  /**
   * pg's "Query read timeout" names neither the wait nor the option that set
   * it; a call that close() ended the pool under before it got a connection
   * is refused by the pool in words of the pool's own.
   */
  #explained(error: unknown): unknown {
    if (this.#closed && this.#pool.ending && isRefusedByEndedPool(error)) return new Error('the repository has been closed', { cause: error });
    if (this.#ownPool === undefined || !isQueryTimeout(error)) return error;
    return new Error(`no reply within ${this.#timeoutMs} ms (timeoutMs)`, { cause: error });
  }
}

/**
 * Whether pg-pool gave no connection because the pool was ended: asked for
 * one after, or waiting in its queue when it was (never served, that waiter
 * times out). Nothing was sent. pg-pool marks both by their message only.
 */
function isRefusedByEndedPool(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.message === 'Cannot use a pool after calling end on the pool' || error.message === 'timeout exceeded when trying to connect')
  );
}

/** Resolves once every promise of `pending` has settled, or after `ms`. */
async function settledWithin(pending: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(pending), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

async function qualifiedTableName(queryable: Pool | PoolClient, table: string): Promise<string> {
  const result = await queryable.query(QUALIFIED_TABLE_NAME, [table]);
  const name = (result.rows[0] as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : table;
}

/** Takes transaction-scoped advisory locks, each keyed on two texts, in the order given. */
async function advisoryLocks(client: PoolClient, keys: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const calls = keys.map((_, i) => `pg_advisory_xact_lock(hashtext($${2 * i + 1}), hashtext($${2 * i + 2}))`);
  await client.query(`SELECT ${calls.join(', ')}`, keys.flat());
}
