import type { StatementSync } from 'node:sqlite';
import { DatabaseSync } from './sqlite-module.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../memory/chat-memory-repository.ts';
import { assertConversationId } from '../memory/conversation-id.ts';
import { decodeMessage, encodeMessages } from '../memory/message-codec.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link SqliteChatMemoryRepository}. */
export interface SqliteChatMemoryRepositoryOptions {
  /** Database file, created if missing; `':memory:'` for a private in-memory database. */
  path: string;
  /**
   * How long a write waits for another connection (or process) holding the
   * database lock before it fails.
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
 * writer) and its schema is created or migrated then. Every write runs in an
 * immediate transaction, so appends from many connections or processes are
 * serialised: none is lost and each batch stays contiguous.
 */
export class SqliteChatMemoryRepository implements ChatMemoryRepository, Disposable {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  readonly #store: string;
  #database: DatabaseSync | undefined;
  #opening: Promise<DatabaseSync> | undefined;
  #statements: Statements | undefined;
  #closed = false;

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
    return rows.map((row) => decodeMessage(String(row.message)));
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

  /** Closes the database. The repository cannot be used afterwards. */
  close(): void {
    this.#closed = true;
    this.#statements = undefined;
    const database = this.#database;
    this.#database = undefined;
    if (database?.isOpen === true) database.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #insert(s: Statements, conversationId: string, after: number, messages: readonly ModelMessage[], encoded: readonly string[]): void {
    for (let i = 0; i < encoded.length; i++) {
      s.insert.run(conversationId, after + i + 1, messages[i]?.role ?? '', encoded[i] ?? '');
    }
  }

  /** Runs `work` in an immediate transaction: the write lock is taken before anything is read. */
  #write(operation: string, work: (statements: Statements) => void): Promise<void> {
    return this.#run(operation, (statements, database) => {
      database.exec('BEGIN IMMEDIATE');
      try {
        work(statements);
        database.exec('COMMIT');
      } catch (error) {
        if (database.isTransaction) database.exec('ROLLBACK');
        throw error;
      }
    });
  }

  async #run<T>(operation: string, work: (statements: Statements, database: DatabaseSync) => T): Promise<T> {
    try {
      const database = this.#database ?? (await (this.#opening ??= this.#openWaiting().finally(() => (this.#opening = undefined))));
      if (this.#closed) throw new Error('the repository has been closed');
      return work(this.#statements ?? this.#prepare(database), database);
    } catch (error) {
      throw new ChatMemoryStoreError(this.#store, operation, error);
    }
  }

  /**
   * Opens the database, waiting out other connections for up to
   * `busyTimeoutMs`. Switching a new file to WAL can fail with "database is
   * locked" without SQLite's busy handler ever waiting (another process is
   * creating or switching the same file), so the open is retried here.
   */
  async #openWaiting(): Promise<DatabaseSync> {
    const deadline = performance.now() + this.#busyTimeoutMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        return this.#open();
      } catch (error) {
        if (!isBusy(error) || performance.now() + pause > deadline) throw error;
        await sleep(pause * (0.5 + Math.random() / 2));
      }
    }
  }

  #open(): DatabaseSync {
    if (this.#closed) throw new Error('the repository has been closed');
    if (this.#database !== undefined) return this.#database;
    const database = new DatabaseSync(this.#path, { timeout: this.#busyTimeoutMs });
    try {
      // WAL lets readers work while a writer commits; the setting persists in the file.
      database.exec('PRAGMA journal_mode = WAL');
      database.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
      migrate(database);
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

/** Brings the schema up to date; the immediate transaction keeps two processes from migrating at once. */
function migrate(database: DatabaseSync): void {
  database.exec('BEGIN IMMEDIATE');
  try {
    database.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
    const current = Number(database.prepare(`SELECT COALESCE(MAX(version), 0) AS version FROM ${MIGRATIONS_TABLE}`).get()?.version ?? 0);
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new Error(`its chat memory schema is version ${current}, newer than this version of the library knows (${latest}); upgrade the library`);
    }
    const record = database.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES (?, ?)`);
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      database.exec(migration.sql);
      record.run(migration.version, new Date().toISOString());
    }
    database.exec('COMMIT');
  } catch (error) {
    if (database.isTransaction) database.exec('ROLLBACK');
    throw error;
  }
}
