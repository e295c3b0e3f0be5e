import pg from './pg-module.ts';
import { checkConnectionString, poolAddress } from './connection-string.ts';
import type { Pool, PoolClient } from 'pg';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import type { Document, DocumentInput, DocumentMetadata } from '../rag/document.ts';
import { embedChecked, type Embedder } from '../rag/embedder.ts';
import { LexicalHashEmbedding } from '../rag/lexical-hash-embedding.ts';
import { compareCodePoints } from '../rag/metadata-filter.ts';
import { filterToSql } from '../rag/metadata-filter-sql.ts';
import { EmbeddingDimensionMismatchError, VectorStoreError } from '../rag/retrieval-errors.ts';
import {
  checkIds,
  prepareDocuments,
  resolveSearchRequest,
  type AddDocumentsOptions,
  type ResolvedSearchRequest,
  type SearchRequest,
  type VectorStore,
} from '../rag/vector-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { inTransaction } from './pg-transaction.ts';
import { BoundedPool, isQueryTimeout } from './bounded-pool.ts';

/** Table used when {@link PgVectorStoreOptions.tableName} is not given. */
export const DEFAULT_PG_VECTOR_TABLE = 'governor_vector_store';

/** pgvector's limits: a `vector` column holds at most 16,000 dimensions, an HNSW index at most 2,000. */
const MAX_VECTOR_DIMENSIONS = 16_000;
const MAX_HNSW_DIMENSIONS = 2_000;

/** An unquoted-style PostgreSQL identifier of at most 63 bytes (the server's limit). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Rows per INSERT statement: keeps a statement far below PostgreSQL's 65,535 parameters. */
const ROWS_PER_INSERT = 500;

/**
 * pgvector's `hnsw.ef_search`: an HNSW index scan yields at most this many
 * rows, so a search raises it to `topK` within these bounds (40 is
 * pgvector's default, 1,000 its maximum).
 */
const MIN_EF_SEARCH = 40;
const MAX_EF_SEARCH = 1_000;

/** A row a search reads. */
interface SearchRow {
  readonly id: string;
  readonly content: string;
  readonly metadata: DocumentMetadata;
  readonly distance: number;
}

/** Parameters a search binds after the filter's: the similarity bound and `topK`. */
const SEARCH_PARAMETERS_AFTER_FILTER = 2;

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/**
 * Longer than the chat memory stores' 5 s: an exact search scans the whole
 * table, and a first use may build the HNSW index.
 */
const DEFAULT_TIMEOUT_MS = 30_000;

/** Options of {@link PgVectorStore}. */
export interface PgVectorStoreOptions {
  /**
   * A `pg` pool to use. The store never ends a pool it was given.
   * Give either this or {@link PgVectorStoreOptions.connectionString}.
   * Its own settings bound the waits: give it `connectionTimeoutMillis` and
   * `query_timeout`, or a stalled server holds calls for as long as it stalls.
   */
  readonly pool?: Pool;
  /**
   * Connection string for a pool the store creates and owns
   * (`close()` ends it), e.g. `postgres://user:password@host:5432/db`.
   */
  readonly connectionString?: string;
  /**
   * Table holding the documents, optionally schema-qualified (`rag.documents`).
   * Each part must be a plain identifier (letters, digits, `_`; at most 63
   * characters); it is used exactly as written (quoted, so case-sensitive).
   * @default 'governor_vector_store'
   */
  readonly tableName?: string;
  /**
   * Length of the embedding vectors: the table's column is `vector(dimensions)`.
   * Must match the embedder (e.g. 1536 for OpenAI `text-embedding-3-small`).
   */
  readonly dimensions: number;
  /**
   * Embeds documents and queries.
   * @default a {@link LexicalHashEmbedding} of `dimensions` dimensions: offline and lexical, not semantic
   */
  readonly embedder?: Embedder;
  /**
   * Distance used to rank documents. Only cosine is supported; scores are
   * `1 - cosine distance`, i.e. cosine similarity.
   * @default 'cosine'
   */
  readonly distance?: 'cosine';
  /**
   * Index created with the table. `'hnsw'` makes searches fast on large
   * tables but approximate: a document that is among the best may be missed.
   * Each search sets `hnsw.ef_search` to `topK` (at least 40), so up to
   * `topK` documents come back. With pgvector 0.8 or later it also turns on
   * `hnsw.iterative_scan` (`strict_order`), so that filters and similarity
   * thresholds still fill `topK`, as far as `hnsw.max_scan_tuples` (20,000
   * by default) lets the scan go: a filter matching only a few documents of a
   * large table may still return fewer. Before 0.8, filters and thresholds
   * are applied to at most `topK` candidates and can return fewer.
   * A search with `topK` above 1,000 (pgvector's limit on `ef_search`) does
   * not use the index but scans the table exactly.
   * `'none'` creates no index and searches exactly, by scanning, also on a
   * table that has one (another store's).
   * @default 'hnsw'
   */
  readonly createIndex?: 'hnsw' | 'none';
  /**
   * Create the `vector` extension, the table and the index on first use
   * (idempotent, serialised across processes with an advisory lock). Turn
   * off when the schema is managed by migrations or the role may not run DDL:
   * the store then only reads, at first use, the size of the table's
   * embedding column, and reports one of another size as an
   * `EmbeddingDimensionMismatchError`.
   * @default true
   */
  readonly initializeSchema?: boolean;
  /**
   * How long connecting may take before a call fails (own pool only).
   * @default 5000
   */
  readonly connectTimeoutMs?: number;
  /**
   * Longest wait for the reply to each statement (own pool only): past it
   * the call fails with a `VectorStoreError` (its cause pg's "Query read
   * timeout" error) instead of waiting for a server that has stalled for as
   * long as it stalls, and the connection is dropped, which rolls back its
   * transaction. An `add` or `delete` that timed out may still have been
   * applied, should its last statement (the COMMIT, or the single INSERT of
   * a small batch) have reached the server: the caller must not assume that
   * it was not.
   * A search that scans a large table exactly, or a first use that builds
   * the HNSW index over many rows already there, may need longer: raise it,
   * or create the schema beforehand (`initializeSchema: false`).
   * `close()` waits this long at most too.
   * @default 30000
   */
  readonly timeoutMs?: number;
}

/** What each option of PgVectorStore accepts. */
const PG_VECTOR_STORE_OPTION_RULES: OptionRules<PgVectorStoreOptions> = {
  pool: is.having('a pg Pool', 'query'),
  connectionString: is.string({ nonEmpty: true }),
  tableName: is.string({ nonEmpty: true }),
  dimensions: is.integer(1),
  embedder: is.having('an Embedder (with embed(texts))', 'embed'),
  distance: is.oneOf('cosine'),
  createIndex: is.oneOf('hnsw', 'none'),
  initializeSchema: is.boolean(),
  connectTimeoutMs: is.timeMs(),
  timeoutMs: is.timeMs(),
};

/**
 * A vector store in PostgreSQL with the pgvector extension, through the `pg`
 * driver. Documents live in one table (`id text` primary key, `content text`,
 * `metadata jsonb`, `embedding vector(N)`); adding upserts by id; searches
 * order by cosine distance (`<=>`) and apply metadata filters in SQL, with
 * every filter key and value bound as a parameter.
 *
 * The schema is created on first use. Every vector is checked against
 * `dimensions` before any SQL runs, and an existing table whose column has
 * another size is reported at first use instead of failing row by row.
 *
 * What fails in the database (pgvector not installed, refused credentials, a
 * server down or not answering in time) fails the call with a
 * `VectorStoreError` that names the server (never the credentials) and the
 * call (and the schema step each call runs first, when that is what failed),
 * and says what to do; pg's error is its `cause`. What the embedder throws is
 * left as it is.
 *
 * @example
 * const store = new PgVectorStore({
 *   connectionString: process.env.DATABASE_URL,
 *   dimensions: 1536,
 *   embedder: aiSdkEmbedder(openai.embedding('text-embedding-3-small')),
 * });
 */
export class PgVectorStore implements VectorStore, AsyncDisposable {
  readonly #pool: Pool;
  /** The pool this store created and ends; undefined for a pool it was given. */
  readonly #ownPool: BoundedPool | undefined;
  readonly #embedder: Embedder;
  readonly #dimensions: number;
  readonly #createIndex: 'hnsw' | 'none';
  readonly #initializeSchema: boolean;
  /** Quoted, possibly schema-qualified table name, safe to place in SQL. */
  readonly #table: string;
  /** Quoted index name (unqualified: an index lives in its table's schema). */
  readonly #index: string;
  /** The index as `to_regclass` finds it: in the table's schema. */
  readonly #indexRef: string;
  readonly #tableName: string;
  /** Where the pool connects (`host:port/database`), for error messages: never credentials. */
  readonly #address: string;
  /** The waits this store set on the pool it created; undefined for a pool it was given. */
  readonly #waits: { readonly connectTimeoutMs: number; readonly timeoutMs: number } | undefined;
  #schemaReady: Promise<void> | undefined;
  /** Whether the installed pgvector has `hnsw.iterative_scan` (0.8+); learnt at the first search. */
  #iterativeScan: Promise<boolean> | undefined;

  constructor(options: PgVectorStoreOptions) {
    validateOptions('PgVectorStore', options, PG_VECTOR_STORE_OPTION_RULES, { required: ['dimensions'] });
    const dimensions = options.dimensions;
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_VECTOR_DIMENSIONS) {
      throw new InvalidOptionError('dimensions', `expected an integer from 1 to ${MAX_VECTOR_DIMENSIONS} (pgvector's limit), got ${String(dimensions)}`);
    }
    const createIndex = options.createIndex ?? 'hnsw';
    if (createIndex === 'hnsw' && dimensions > MAX_HNSW_DIMENSIONS) {
      throw new InvalidOptionError(
        'createIndex',
        `pgvector's HNSW index supports at most ${MAX_HNSW_DIMENSIONS} dimensions, not ${dimensions}; use 'none' or fewer dimensions`,
      );
    }
    const embedder = options.embedder ?? new LexicalHashEmbedding({ dimensions });
    if (embedder.dimensions !== undefined && embedder.dimensions !== dimensions) {
      throw new InvalidOptionError(
        'dimensions',
        `the embedder produces ${embedder.dimensions}-dimensional vectors but the store is configured for ${dimensions}`,
      );
    }

    const tableName = options.tableName ?? DEFAULT_PG_VECTOR_TABLE;
    const parts = typeof tableName === 'string' ? tableName.split('.') : [];
    if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
      throw new InvalidOptionError(
        'tableName',
        'expected "table" or "schema.table", each part starting with a letter or "_" and holding only ' + 'letters, digits and "_" (at most 63 characters)',
      );
    }
    const baseName = parts[parts.length - 1] ?? DEFAULT_PG_VECTOR_TABLE;

    if (options.pool !== undefined && options.connectionString !== undefined) {
      throw new InvalidOptionError('connectionString', 'give either pool or connectionString, not both');
    }
    if (options.pool !== undefined) {
      this.#pool = options.pool;
      this.#ownPool = undefined;
      this.#waits = undefined;
    } else if (typeof options.connectionString === 'string' && options.connectionString.length > 0) {
      checkConnectionString(options.connectionString);
      this.#waits = {
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      };
      this.#ownPool = new BoundedPool(options.connectionString, this.#waits);
      this.#pool = this.#ownPool.pool;
    } else {
      throw new InvalidOptionError('pool', 'give a pg Pool (pool) or a connectionString');
    }

    this.#embedder = embedder;
    this.#dimensions = dimensions;
    this.#createIndex = createIndex;
    this.#initializeSchema = options.initializeSchema ?? true;
    this.#tableName = tableName;
    this.#address = poolAddress(this.#pool);
    this.#table = parts.map((part) => pg.escapeIdentifier(part)).join('.');
    this.#index = pg.escapeIdentifier(indexName(baseName));
    this.#indexRef = parts.length === 2 ? `${pg.escapeIdentifier(parts[0] ?? '')}.${this.#index}` : this.#index;
  }

  async add(documents: readonly DocumentInput[], options: AddDocumentsOptions = {}): Promise<void> {
    const prepared = prepareDocuments(documents);
    if (prepared.length === 0) return;
    const vectors = await embedChecked(
      this.#embedder,
      prepared.map((document) => document.text),
      this.#dimensions,
      'document embeddings',
      options.signal,
    );
    await this.#database('add documents', () => this.#write(prepared, vectors));
  }

  async #write(prepared: readonly Document[], vectors: readonly number[][]): Promise<void> {
    // Rows are locked in the order they are written: writing every batch in
    // one order (by id, as COLLATE "C" orders them) keeps two adds of
    // overlapping ids from deadlocking. Ids are unique by now, so the order
    // changes nothing else.
    const rows = prepared.map((document, index) => ({ document, vector: vectors[index] ?? [] }));
    rows.sort((a, b) => compareCodePoints(a.document.id, b.document.id));
    const statements: { text: string; values: unknown[] }[] = [];
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const placeholders: string[] = [];
      const values: unknown[] = [];
      for (const { document, vector } of rows.slice(start, start + ROWS_PER_INSERT)) {
        const n = values.length;
        placeholders.push(`($${n + 1}, $${n + 2}, $${n + 3}::jsonb, $${n + 4}::vector)`);
        values.push(document.id, document.text, JSON.stringify(document.metadata), vectorLiteral(vector));
      }
      statements.push({
        text:
          `INSERT INTO ${this.#table} (id, content, metadata, embedding) VALUES ${placeholders.join(', ')} ` +
          'ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding',
        values,
      });
    }
    if (statements.length === 1 && statements[0] !== undefined) {
      await this.#pool.query(statements[0].text, statements[0].values);
      return;
    }
    await inTransaction(this.#pool, async (client) => {
      for (const statement of statements) await client.query(statement.text, statement.values);
    });
  }

  async delete(ids: readonly string[]): Promise<void> {
    const checked = checkIds(ids);
    if (checked.length === 0) return;
    await this.#database('delete documents', async () => {
      // Rows are locked in id order first, the order add() writes them in: a delete and an add of
      // overlapping ids would otherwise lock them in two orders and deadlock.
      await inTransaction(this.#pool, async (client) => {
        await client.query(`SELECT id FROM ${this.#table} WHERE id = ANY($1::text[]) ORDER BY id COLLATE "C" FOR UPDATE`, [[...checked]]);
        await client.query(`DELETE FROM ${this.#table} WHERE id = ANY($1::text[])`, [[...checked]]);
      });
    });
  }

  async similaritySearch(request: SearchRequest): Promise<Document[]> {
    const search = resolveSearchRequest(request);
    if (search.blank) return [];
    const [query] = await embedChecked(this.#embedder, [search.query], this.#dimensions, 'query embedding', search.signal);
    // A zero query vector has no direction: pgvector's cosine distance would be NaN for every row.
    if (query === undefined || query.every((component) => component === 0)) return [];
    return this.#database('search', () => this.#search(search, query));
  }

  async #search(search: ResolvedSearchRequest, query: readonly number[]): Promise<Document[]> {
    const values: unknown[] = [vectorLiteral(query)];
    const conditions: string[] = [];
    if (search.filter !== undefined) {
      const filter = filterToSql(search.filter, 'metadata', values.length + 1, SEARCH_PARAMETERS_AFTER_FILTER);
      conditions.push(filter.sql);
      values.push(...filter.values);
    }
    // Bounded on the distance, not the score, so that an index can still serve
    // the ordering. 2 is the largest cosine distance: with no threshold the
    // bound only drops stored zero vectors, whose distance is NaN (which
    // PostgreSQL orders above every number).
    values.push(search.similarityThreshold > 0 ? 1 - search.similarityThreshold : 2);
    conditions.push(`(embedding <=> $1::vector) <= $${values.length}`);
    values.push(search.topK);
    // An HNSW scan yields at most ef_search rows, which cannot exceed 1,000:
    // for more, ordering by an expression the index cannot serve makes the
    // search an exact scan. So it does for a store built to search exactly,
    // on a table that another store gave an index.
    const exact = this.#createIndex === 'none' || search.topK > MAX_EF_SEARCH;
    const text =
      `SELECT id, content, metadata, (embedding <=> $1::vector) AS distance FROM ${this.#table}` +
      ` WHERE ${conditions.join(' AND ')}` +
      // Equal distances go by id in code-point order, as in InMemoryVectorStore,
      // so the topK cut is the same in both and does not follow the heap order.
      ` ORDER BY ${exact ? '(embedding <=> $1::vector) + 0' : 'embedding <=> $1::vector'}, id COLLATE "C" LIMIT $${values.length}`;
    let rows: SearchRow[] = [];
    // pgvector's defaults serve a plain search of at most 40 rows, and an exact store has no index to tune:
    // neither needs settings, or a transaction.
    const plain = this.#createIndex === 'none' || (search.topK <= MIN_EF_SEARCH && search.filter === undefined && search.similarityThreshold <= 0);
    if (exact || plain) {
      rows = (await this.#pool.query<SearchRow>(text, values)).rows;
    } else {
      // set_config(..., true) is SET LOCAL: the settings end with the
      // transaction and never reach another user of the pooled connection.
      await inTransaction(this.#pool, async (client) => {
        await this.#tuneIndexScan(client, search.topK);
        rows = (await client.query<SearchRow>(text, values)).rows;
      });
    }
    return rows.map((row) => ({
      id: row.id,
      text: row.content,
      metadata: row.metadata,
      score: 1 - row.distance,
    }));
  }

  /**
   * Ends the pool when the store created it from a connection string, within
   * about `timeoutMs`: past it the connections still open are dropped. A
   * given pool is left open.
   */
  async close(): Promise<void> {
    await this.#ownPool?.end();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Lets an HNSW index scan yield `topK` rows: by default it stops after
   * `hnsw.ef_search` (40) candidates, before any filter or threshold.
   */
  async #tuneIndexScan(client: PoolClient, topK: number): Promise<void> {
    const efSearch = String(Math.max(topK, MIN_EF_SEARCH));
    if (await this.#hasIterativeScan(client)) {
      // strict_order keeps rows ordered by distance, so ORDER BY and LIMIT stay exact.
      await client.query("SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true)", [efSearch]);
    } else {
      await client.query("SELECT set_config('hnsw.ef_search', $1, true)", [efSearch]);
    }
  }

  #hasIterativeScan(client: PoolClient): Promise<boolean> {
    this.#iterativeScan ??= client
      .query<{ version: string | null }>("SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'")
      .then((result) => {
        const [major = 0, minor = 0] = (result.rows[0]?.version ?? '').split('.').map(Number);
        return major > 0 || minor >= 8;
      })
      .catch((error: unknown) => {
        // Ask again next time (the database may come back).
        this.#iterativeScan = undefined;
        throw error;
      });
    return this.#iterativeScan;
  }

  #ensureSchema(): Promise<void> {
    this.#schemaReady ??= (this.#initializeSchema ? this.#createSchema() : this.#checkSchema()).catch((error: unknown) => {
      // Let the next call try again (the database may come back).
      this.#schemaReady = undefined;
      throw error;
    });
    return this.#schemaReady;
  }

  /**
   * Runs what a call does in the database, after the schema step every call
   * runs first, reporting a failure as a {@link VectorStoreError} that names
   * the call (and the schema step, when that is what failed: the call's own
   * work did not start).
   */
  async #database<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      await this.#ensureSchema();
    } catch (error) {
      throw this.#failure(`${operation} (in the schema ${this.#initializeSchema ? 'setup' : 'check'} that runs first)`, error, false);
    }
    try {
      return await work();
    } catch (error) {
      throw this.#failure(operation, error, operation === 'add documents' || operation === 'delete documents');
    }
  }

  /** @param write whether the work that failed writes: one that timed out may have been applied. */
  #failure(operation: string, error: unknown, write: boolean): unknown {
    // The store's own errors (a column of another size, a filter too large) already say what is wrong.
    if (GovernorError.isInstance(error)) return error;
    return new VectorStoreError(`PostgreSQL at ${this.#address} (table ${this.#tableName})`, operation, error, this.#advice(error, write));
  }

  /** What to do about a failure, when its cause says. */
  #advice(error: unknown, write: boolean): string | undefined {
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : '';
    const aboutVector = message.includes('"vector"');
    if (code === '0A000' && aboutVector) {
      return (
        'The pgvector extension is not installed on this PostgreSQL server. Install it on the server (the pgvector package ' +
        'for its PostgreSQL version, or a build from source), then run CREATE EXTENSION vector in this database ' +
        '(the store runs it itself if its role may), or use a server that has pgvector.'
      );
    }
    if (code === '42704' && aboutVector) {
      return 'The vector extension is not created in this database, or not in the search_path: run CREATE EXTENSION vector (pgvector must be installed on the server).';
    }
    if (code === '42501' && aboutVector) {
      return 'This role may not create extensions: have one that may run CREATE EXTENSION vector in this database once.';
    }
    if (code === '42501') {
      return 'Grant this role the privilege, or have the owner create the vector extension, the table and its index beforehand and set initializeSchema: false.';
    }
    if (code === '42P01' && !this.#initializeSchema) {
      return (
        `Create the table (id text PRIMARY KEY, content text NOT NULL, metadata jsonb NOT NULL, embedding vector(${this.#dimensions}) NOT NULL) ` +
        'after CREATE EXTENSION vector (pgvector installed on the server), or let the store create both with initializeSchema: true.'
      );
    }
    if (code === '28000' || code === '28P01') return 'Check the user name and password the store connects with.';
    if (code === '3D000') return 'Create the database, or fix its name in the connection string.';
    if (isQueryTimeout(error)) {
      const wait = this.#waits === undefined ? "the pool's query_timeout" : `${this.#waits.timeoutMs} ms (timeoutMs)`;
      return `No reply within ${wait}${write ? ': the change may still have been applied, do not assume that it was not' : ''}.`;
    }
    if (/connection timeout|timeout expired/i.test(message)) {
      const wait = this.#waits === undefined ? "the pool's connectionTimeoutMillis" : `${this.#waits.connectTimeoutMs} ms (connectTimeoutMs)`;
      return `No connection within ${wait}: check that the server is running and answers.`;
    }
    if (code !== undefined && UNREACHABLE.has(code)) return 'Check that the server is running and accepts connections from here.';
    if ((code !== undefined && LOST.has(code)) || message === 'Connection terminated unexpectedly') {
      return 'The server ended the connection (it stopped, restarted or closed it, or the network dropped it): check that the server is running and accepts connections from here.';
    }
    return undefined;
  }

  /** Whether the table (with an embedding column of this size) and its index exist; reads only. */
  async #schemaInPlace(): Promise<boolean> {
    const result = await this.#pool.query<{ dimensions: number | null; indexed: boolean }>(
      `${EMBEDDING_COLUMN_SIZE}, ($2::text IS NULL OR to_regclass($2) IS NOT NULL) AS indexed`,
      [this.#table, this.#createIndex === 'hnsw' ? this.#indexRef : null],
    );
    const row = result.rows[0];
    if (row?.dimensions === null || row?.dimensions === undefined) return false;
    this.#checkDimensions(row.dimensions);
    return row.indexed;
  }

  /**
   * With the schema managed elsewhere (`initializeSchema: false`), only the
   * check, which reads and needs no privilege: a column of another size is
   * reported as such instead of as pgvector's bare "expected 3 dimensions,
   * not 4", which names neither the table nor the option. A table that is
   * not there yet is left to fail the call, and is checked again next time.
   */
  async #checkSchema(): Promise<void> {
    const result = await this.#pool.query<{ dimensions: number | null }>(EMBEDDING_COLUMN_SIZE, [this.#table]);
    const dimensions = result.rows[0]?.dimensions;
    if (dimensions === null || dimensions === undefined) {
      this.#schemaReady = undefined;
      return;
    }
    this.#checkDimensions(dimensions);
  }

  #checkDimensions(existing: number | null | undefined): void {
    // -1 is a column declared as plain `vector`, which accepts any length.
    if (typeof existing === 'number' && existing > 0 && existing !== this.#dimensions) {
      throw new EmbeddingDimensionMismatchError(this.#dimensions, existing, `table ${this.#tableName} already exists with an embedding column of another size`);
    }
  }

  /**
   * Creates what is missing. What exists is checked first without DDL:
   * PostgreSQL checks the CREATE privilege even for `CREATE … IF NOT EXISTS`
   * on a table that exists, so a role that may only read and write the table
   * would be refused on every first use.
   */
  async #createSchema(): Promise<void> {
    if (await this.#schemaInPlace()) return;
    await inTransaction(this.#pool, async (client) => {
      // Replicas starting together would race on CREATE EXTENSION / TABLE;
      // the lock makes them take turns, and IF NOT EXISTS makes turns cheap.
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent-governor:vector-store:${this.#tableName}`]);
      await client.query('CREATE EXTENSION IF NOT EXISTS vector');
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#table} (` +
          'id text PRIMARY KEY, ' +
          'content text NOT NULL, ' +
          "metadata jsonb NOT NULL DEFAULT '{}'::jsonb, " +
          `embedding vector(${this.#dimensions}) NOT NULL)`,
      );
      this.#checkDimensions((await client.query<{ dimensions: number | null }>(EMBEDDING_COLUMN_SIZE, [this.#table])).rows[0]?.dimensions);
      if (this.#createIndex === 'hnsw') {
        await client.query(`CREATE INDEX IF NOT EXISTS ${this.#index} ON ${this.#table} USING hnsw (embedding vector_cosine_ops)`);
      }
    });
  }
}

/** Codes of a server that could not be reached at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOENT']);

/**
 * Codes of a connection the server or the network ended: the server shutting
 * down or ending the session (57P01), after a crash (57P02), starting up or
 * shutting down (57P03), a broken connection (08006, ECONNRESET, EPIPE). pg
 * gives one that closed without a word no code, only its message.
 */
const LOST = new Set(['57P01', '57P02', '57P03', '08006', 'ECONNRESET', 'EPIPE']);

/** The SQLSTATE or system error code of a failure (of the first attempt, for a dual-stack connect). */
function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof AggregateError ? errorCode(error.errors[0]) : undefined;
}

/** The declared size of a table's embedding column (null when it has none). */
const EMBEDDING_COLUMN_SIZE =
  "SELECT (SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding' AND NOT attisdropped) AS dimensions";

/**
 * The table's index name. PostgreSQL truncates names beyond 63 bytes, which
 * could make two long table names share one index name; a hash keeps them apart.
 */
function indexName(table: string): string {
  const name = `${table}_embedding_hnsw_idx`;
  if (name.length <= 63) return name;
  let hash = 0x811c9dc5;
  for (let i = 0; i < table.length; i++) hash = Math.imul(hash ^ table.charCodeAt(i), 0x01000193);
  return `${table.slice(0, 40)}_${(hash >>> 0).toString(16).padStart(8, '0')}_hnsw_idx`;
}

/** pgvector's text input format: `[1,2.5,-3e-7]`. */
function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}
