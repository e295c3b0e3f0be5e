import type { StatementSync } from 'node:sqlite';
import { DatabaseSync } from './sqlite-module.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../memory/chat-memory-repository.ts';
import { assertConversationId } from '../memory/conversation-id.ts';
import { decodeConversation, encodeMessages } from '../memory/message-codec.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link SqliteChatMemoryRepository}. */
export interface SqliteChatMemoryRepositoryOptions {
  /** Database file, created if missing; `':memory:'` for a private in-memory database. */
  path: string;
  /**
   * How long a call waits for another connection (or process) holding the
   * database lock before it fails. The wait is asynchronous: other work of
   * the process goes on meanwhile.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

interface Migration {
  readonly version: number;
  readonly sql: string;
}

const MESSAGES_TABLE = 'chat_memory_messages';
const MIGRATIONS_TABLE = 'chat_memory_schema_migrations';

/**
 * Schema history, oldest first. A database records the versions it has
 * applied, so a later release appends a migration here and existing databases
 * catch up on first use.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE ${MESSAGES_TABLE} (
      conversation_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      message TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      PRIMARY KEY (conversation_id, seq)
    ) WITHOUT ROWID`,
  },
];

interface Statements {
  readonly conversationIds: StatementSync;
  readonly messages: StatementSync;
  readonly lastSeq: StatementSync;
  readonly insert: StatementSync;
  readonly deleteConversation: StatementSync;
}

/** What each option of SqliteChatMemoryRepository accepts. */
const SQLITE_CHAT_MEMORY_REPOSITORY_OPTION_RULES: OptionRules<SqliteChatMemoryRepositoryOptions> = {
  path: is.string({ nonEmpty: true }),
  busyTimeoutMs: is.timeMs(0),
};

/**
 * Chat memory in an SQLite database through `node:sqlite`: embedded, no
 * server. Several processes may share one database file.
 *
 * The database is opened on first use in WAL mode (readers do not block the
 * writer) and its schema is created or migrated then; a database whose schema
 * is current is not written to on opening, so a read-only file can be read
 * where SQLite may create its `-wal` and `-shm` files (a writable directory),
 * or once the file is out of WAL mode (`PRAGMA journal_mode = DELETE`).
 * Every write runs in an immediate transaction, so appends from many
 * connections or processes are serialised: none is lost and each batch stays
 * contiguous. A call that finds the database locked by another writer waits
 * for it asynchronously, for up to `busyTimeoutMs`.
 */
export class SqliteChatMemoryRepository implements ChatMemoryRepository, Disposable {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  readonly #store: string;
  #database: DatabaseSync | undefined;
  #opening: Promise<DatabaseSync> | undefined;
  #statements: Statements | undefined;
  #closed = false;
  /** Calls made and not yet settled: close() leaves the database open until they have. */
  #inFlight = 0;

  constructor(options: SqliteChatMemoryRepositoryOptions) {
    validateOptions('SqliteChatMemoryRepository', options, SQLITE_CHAT_MEMORY_REPOSITORY_OPTION_RULES, { required: ['path'] });
    const { path } = options;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new InvalidOptionError('busyTimeoutMs', `must be a non-negative integer, got ${String(options.busyTimeoutMs)}`);
    }
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#store = `SQLite database ${path}`;
  }

  async findConversationIds(): Promise<string[]> {
    const rows = await this.#run('list conversations', (s) => s.conversationIds.all());
    // Sorted here, not in SQL, so that every repository orders ids the same way.
    return rows.map((row) => String(row.conversation_id)).sort();
  }

  async findByConversationId(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    const rows = await this.#run('read a conversation', (s) => s.messages.all(conversationId));
    return decodeConversation(
      rows.map((row) => String(row.message)),
      this.#store,
      conversationId,
    );
  }

  async saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    await this.#write('replace a conversation', (s) => {
      s.deleteConversation.run(conversationId);
      this.#insert(s, conversationId, 0, messages, encoded);
    });
  }

  async deleteByConversationId(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.#write('delete a conversation', (s) => {
      s.deleteConversation.run(conversationId);
    });
  }

  async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    const encoded = encodeMessages(messages);
    if (encoded.length === 0) return;
    await this.#write('append to a conversation', (s) => {
      const last = Number(s.lastSeq.get(conversationId)?.last ?? 0);
      this.#insert(s, conversationId, last, messages, encoded);
    });
  }

  /**
   * Closes the repository: calls made after it fail with ChatMemoryStoreError
   * at once; calls already made finish (one waiting for another writer's lock
   * waits at most `busyTimeoutMs`), and the database is closed when the last
   * of them has settled, at once when none is in flight.
   */
  close(): void {
    this.#closed = true;
    if (this.#inFlight === 0) this.#release();
  }

  #release(): void {
    this.#statements = undefined;
    const database = this.#database;
    this.#database = undefined;
    // No `isOpen` check: that getter only exists from Node 22.15, and before it
    // reads as undefined, which left the file open. This handle is only ever
    // closed here, once; close() must not throw (it runs on `using` disposal).
    try {
      database?.close();
    } catch {}
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #insert(s: Statements, conversationId: string, after: number, messages: readonly ModelMessage[], encoded: readonly string[]): void {
    for (let i = 0; i < encoded.length; i++) {
      s.insert.run(conversationId, after + i + 1, messages[i]?.role ?? '', encoded[i] ?? '');
    }
  }

  /**
   * Runs `work` in an immediate transaction: the write lock is taken before
   * anything is read. A whole attempt is repeated when the database is busy;
   * it has changed nothing then, as it is rolled back.
   */
  #write(operation: string, work: (statements: Statements) => void): Promise<void> {
    return this.#run(operation, (statements, database) => {
      database.exec('BEGIN IMMEDIATE');
      try {
        work(statements);
        database.exec('COMMIT');
      } catch (error) {
        rollback(database);
        throw error;
      }
    });
  }

  /**
   * Runs `work` on the open database, all within one `busyTimeoutMs`: opening
   * and every attempt that finds the database locked.
   */
  async #run<T>(operation: string, work: (statements: Statements, database: DatabaseSync) => T): Promise<T> {
    if (this.#closed) throw new ChatMemoryStoreError(this.#store, operation, new Error('the repository has been closed'));
    const deadline = performance.now() + this.#busyTimeoutMs;
    this.#inFlight++;
    try {
      const database = this.#database ?? (await (this.#opening ??= this.#whileBusy(deadline, () => this.#open()).finally(() => (this.#opening = undefined))));
      return await this.#whileBusy(deadline, () => work(this.#statements ?? this.#prepare(database), database));
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, operation, withReadOnlyHint(error));
    } finally {
      // The last call made before close() closes the database.
      if (--this.#inFlight === 0 && this.#closed) this.#release();
    }
  }

  /**
   * Runs `attempt` again while it fails because another connection holds the
   * lock, until `deadline`. The connection's busy timeout is 0, so a locked
   * database fails at once instead of SQLite's busy handler sleeping, which
   * would block the whole event loop; the pauses between attempts (jittered,
   * growing to 100 ms) are awaited instead. The same covers opening: switching
   * a new file to WAL can report "database is locked" while another process
   * creates or switches it.
   */
  async #whileBusy<T>(deadline: number, attempt: () => T): Promise<T> {
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        return attempt();
      } catch (error) {
        const remaining = deadline - performance.now();
        if (!isBusy(error) || remaining <= 0) throw error;
        // One last attempt at the deadline, rather than giving up a pause before it.
        await sleep(Math.min(remaining, pause * (0.5 + Math.random() / 2)));
      }
    }
  }

  #open(): DatabaseSync {
    if (this.#database !== undefined) return this.#database;
    // No busy timeout (SQLite's default is 0): see #whileBusy. Inside a write
    // transaction nothing needs one either: BEGIN IMMEDIATE already holds the
    // write lock, and in WAL mode neither writing nor COMMIT waits for readers.
    // Should a statement there still find the database busy (a file another
    // program keeps in rollback-journal mode), the attempt is rolled back and
    // repeated like a BEGIN that found it locked.
    const database = new DatabaseSync(this.#path);
    try {
      prepareSchema(database);
    } catch (error) {
      database.close();
      throw error;
    }
    this.#database = database;
    return database;
  }

  #prepare(database: DatabaseSync): Statements {
    this.#statements = {
      conversationIds: database.prepare(`SELECT DISTINCT conversation_id FROM ${MESSAGES_TABLE}`),
      messages: database.prepare(`SELECT message FROM ${MESSAGES_TABLE} WHERE conversation_id = ? ORDER BY seq`),
      lastSeq: database.prepare(`SELECT COALESCE(MAX(seq), 0) AS last FROM ${MESSAGES_TABLE} WHERE conversation_id = ?`),
      insert: database.prepare(`INSERT INTO ${MESSAGES_TABLE} (conversation_id, seq, role, message) VALUES (?, ?, ?, ?)`),
      deleteConversation: database.prepare(`DELETE FROM ${MESSAGES_TABLE} WHERE conversation_id = ?`),
    };
    return this.#statements;
  }
}

/** SQLITE_BUSY or SQLITE_LOCKED, with any extended code. */
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
}

/**
 * SQLite's error when it may not create a WAL database's `-wal` and `-shm`
 * files, which even a read needs (SQLITE_READONLY_DIRECTORY, _CANTINIT): it
 * says "attempt to write a readonly database", so it is told what to do.
 */
function withReadOnlyHint(error: unknown): unknown {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  if (code !== 1544 && code !== 1288) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(
    `${reason}: the database is in WAL mode, and SQLite cannot create its -wal and -shm files beside it, which reading needs too; let this process write to the database's directory, or switch the file out of WAL mode (PRAGMA journal_mode = DELETE) where it is written`,
    { cause: error },
  );
}

/** SQLITE_READONLY, with any extended code. */
function isReadOnly(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 8;
}

/**
 * Ends the transaction `database` may be in. Not guarded by `isTransaction`,
 * which only exists from Node 22.16 (before it, it reads as undefined and no
 * transaction was ever rolled back); SQLite may also have rolled back on its
 * own, so "no transaction is active" is expected here.
 */
function rollback(database: DatabaseSync): void {
  try {
    database.exec('ROLLBACK');
  } catch {}
}

const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** The schema version recorded in the database, 0 for none; only reads. */
function schemaVersion(database: DatabaseSync): number {
  const table = database.prepare("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATIONS_TABLE);
  if (table === undefined) return 0;
  return Number(database.prepare(`SELECT COALESCE(MAX(version), 0) AS version FROM ${MIGRATIONS_TABLE}`).get()?.version ?? 0);
}

function assertKnownVersion(version: number): void {
  if (version > LATEST_VERSION) {
    throw new Error(`its chat memory schema is version ${version}, newer than this version of the library knows (${LATEST_VERSION}); upgrade the library`);
  }
}

/**
 * Switches the database to WAL and brings its schema up to date. It is only
 * read first, and nothing is written when the schema is current: a database
 * file this process may not write can then still be read (its writes fail).
 */
function prepareSchema(database: DatabaseSync): void {
  const version = schemaVersion(database);
  assertKnownVersion(version);
  try {
    // WAL lets readers work while a writer commits; the setting persists in the
    // file, and asking for it again when it is set writes nothing.
    database.exec('PRAGMA journal_mode = WAL');
  } catch (error) {
    // A read-only file in another journal mode: read it as it is.
    if (!(isReadOnly(error) && version === LATEST_VERSION)) throw error;
  }
  if (version < LATEST_VERSION) migrate(database);
}

/** Brings the schema up to date; the immediate transaction keeps two processes from migrating at once. */
function migrate(database: DatabaseSync): void {
  database.exec('BEGIN IMMEDIATE');
  try {
    database.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
    // Read again under the lock: another process may have migrated meanwhile.
    const current = schemaVersion(database);
    assertKnownVersion(current);
    const record = database.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES (?, ?)`);
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      database.exec(migration.sql);
      record.run(migration.version, new Date().toISOString());
    }
    database.exec('COMMIT');
  } catch (error) {
    rollback(database);
    throw error;
  }
}
