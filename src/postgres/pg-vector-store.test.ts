import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { inspect } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { LexicalHashEmbedding } from '../rag/lexical-hash-embedding.ts';
import { EmbeddingDimensionMismatchError, InvalidMetadataFilterError, VectorStoreError } from '../rag/retrieval-errors.ts';
import { COMPASS, TableEmbedder } from '../rag/test-support/table-embedder.ts';
import { describeVectorStoreContract } from '../rag/test-support/vector-store-contract.ts';
import { PgVectorStore } from './pg-vector-store.ts';
import { stallingServer, type StallingServer } from '../test-support/stalling-server.ts';
import { requirePostgres, testDatabaseUrl, unusedPort } from '../test-support/services.ts';
import { settlesWithin } from '../test-support/settles-within.ts';

// Debian ships no pgvector, so the tests run PostgreSQL compiled to WebAssembly
// (PGlite) with pgvector, served on a real socket and reached through `pg`,
// exactly as a deployed store reaches its server.
let database: PGlite;
let server: PGLiteSocketServer;
let pool: pg.Pool;
let tables = 0;

before(async () => {
  database = await PGlite.create({ extensions: { vector } });
  server = new PGLiteSocketServer({ db: database, host: '127.0.0.1', port: 0 });
  await server.start();
  // The socket server serves one connection at a time.
  pool = new pg.Pool({ connectionString: `postgres://postgres@${server.getServerConn()}/postgres`, max: 1 });
});

after(async () => {
  await pool?.end();
  await server?.stop();
  await database?.close();
});

/** Runs `work`, recording the SQL and values of every query any pg client sends meanwhile. */
async function recordingStatements<T>(work: () => Promise<T>): Promise<{ statements: string[]; values: unknown[][]; found: T }> {
  const statements: string[] = [];
  const values: unknown[][] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (typeof args[0] === 'string') {
      statements.push(args[0]);
      values.push(Array.isArray(args[1]) ? args[1] : []);
    }
    return (original as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { statements, values, found: await work() };
  } finally {
    pg.Client.prototype.query = original;
  }
}

/**
 * Waits until the server answers again: after a failed statement PGlite's
 * socket server closes that connection and refuses the next one meanwhile.
 */
async function answeringAgain(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await pool.query('SELECT 1');
      return;
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Checks that a call failed with a VectorStoreError whose message matches every pattern. */
function storeError(...patterns: RegExp[]): (error: unknown) => true {
  return (error) => {
    assert.ok(VectorStoreError.isInstance(error), String(error));
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  };
}

function freshTable(): string {
  tables += 1;
  return `vs_test_${tables}`;
}

describeVectorStoreContract('PgVectorStore', async ({ embedder, dimensions }) => new PgVectorStore({ pool, tableName: freshTable(), dimensions, embedder }));

describe('PgVectorStore', () => {
  test('creates the extension, table and HNSW index once, even when the first calls are concurrent', async () => {
    const tableName = freshTable();
    const store = new PgVectorStore({ pool, tableName, dimensions: 3, embedder: new TableEmbedder(COMPASS) });
    await Promise.all([store.add([{ id: 'north', text: 'north', metadata: {} }]), store.similaritySearch({ query: 'east' }), store.delete(['nothing'])]);
    const column = await pool.query<{ type: string }>(
      "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding'",
      [tableName],
    );
    assert.deepEqual(column.rows, [{ type: 'vector(3)' }]);
    const indexes = await pool.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE tablename = $1', [tableName]);
    assert.ok(
      indexes.rows.some((row) => /USING hnsw \(embedding vector_cosine_ops\)/.test(row.indexdef)),
      JSON.stringify(indexes.rows),
    );
  });

  test("createIndex: 'none' creates no vector index", async () => {
    const tableName = freshTable();
    const store = new PgVectorStore({ pool, tableName, dimensions: 3, embedder: new TableEmbedder(COMPASS), createIndex: 'none' });
    await store.add([{ id: 'north', text: 'north', metadata: {} }]);
    const indexes = await pool.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE tablename = $1', [tableName]);
    assert.ok(
      indexes.rows.every((row) => !row.indexdef.includes('hnsw')),
      JSON.stringify(indexes.rows),
    );
    assert.equal((await store.similaritySearch({ query: 'north' }))[0]?.id, 'north');
  });

  test('an existing table with another vector size is reported at first use, naming both sizes', async () => {
    const tableName = freshTable();
    await pool.query(`CREATE TABLE ${tableName} (id text PRIMARY KEY, content text NOT NULL, metadata jsonb NOT NULL, embedding vector(5) NOT NULL)`);
    const store = new PgVectorStore({ pool, tableName, dimensions: 3, embedder: new TableEmbedder(COMPASS) });
    await assert.rejects(
      store.add([{ id: 'north', text: 'north', metadata: {} }]),
      (error: unknown) => error instanceof EmbeddingDimensionMismatchError && error.expected === 3 && error.actual === 5 && error.message.includes(tableName),
    );
  });

  test('with initializeSchema: false, an existing table with another vector size is reported as such too, without any DDL', async () => {
    const tableName = freshTable();
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    await pool.query(`CREATE TABLE ${tableName} (id text PRIMARY KEY, content text NOT NULL, metadata jsonb NOT NULL, embedding vector(5) NOT NULL)`);
    const store = new PgVectorStore({ pool, tableName, dimensions: 3, embedder: new TableEmbedder(COMPASS), initializeSchema: false });
    const { statements } = await recordingStatements(async () => {
      for (const call of [() => store.similaritySearch({ query: 'north' }), () => store.add([{ id: 'north', text: 'north', metadata: {} }])]) {
        await assert.rejects(
          call(),
          (error: unknown) =>
            error instanceof EmbeddingDimensionMismatchError && error.expected === 3 && error.actual === 5 && error.message.includes(tableName),
        );
      }
    });
    assert.deepEqual(
      statements.filter((text) => /\b(CREATE|ALTER|INSERT)\b/.test(text)),
      [],
    );
  });

  test('with initializeSchema: false, a table created after the first call is checked when it is there', async () => {
    const tableName = freshTable();
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    const store = new PgVectorStore({ pool, tableName, dimensions: 3, embedder: new TableEmbedder(COMPASS), initializeSchema: false });
    await assert.rejects(store.similaritySearch({ query: 'north' }), storeError(/failed to search: .*does not exist/, /initializeSchema/));
    await answeringAgain();
    await pool.query(`CREATE TABLE ${tableName} (id text PRIMARY KEY, content text NOT NULL, metadata jsonb NOT NULL, embedding vector(4) NOT NULL)`);
    await assert.rejects(store.similaritySearch({ query: 'north' }), EmbeddingDimensionMismatchError);
  });

  test('a vector of the wrong dimension is rejected before any SQL is sent', async () => {
    // Nothing listens on port 1: any SQL would fail with a connection error instead.
    const store = new PgVectorStore({
      connectionString: 'postgres://nobody@127.0.0.1:1/none',
      dimensions: 3,
      embedder: new TableEmbedder(COMPASS),
    });
    try {
      await assert.rejects(store.add([{ id: 'short', text: 'short', metadata: {} }]), {
        name: 'EmbeddingDimensionMismatchError',
        expected: 3,
        actual: 2,
      });
      await assert.rejects(store.similaritySearch({ query: 'short' }), EmbeddingDimensionMismatchError);
    } finally {
      await store.close();
    }
  });

  test('metadata filters reach the database as parameters, never as SQL text', async () => {
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 3, embedder: new TableEmbedder(COMPASS) });
    await store.add([{ id: 'north', text: 'north', metadata: { kind: "it's", year: 2001 } }]);
    const { statements, found } = await recordingStatements(() =>
      store.similaritySearch({
        query: 'north',
        filter: { kind: "it's", 'author.name': { $ne: 'Mallory' }, year: { $gte: 1999 } },
      }),
    );
    assert.deepEqual(
      found.map((document) => document.id),
      ['north'],
    );
    const search = statements.find((text) => text.startsWith('SELECT id'));
    assert.ok(search !== undefined);
    for (const fragment of ["it's", 'Mallory', '1999', 'author', 'kind']) {
      assert.ok(!search.includes(fragment), `"${fragment}" must be a parameter: ${search}`);
    }
  });

  test('a schema-qualified table name works', async () => {
    await pool.query('CREATE SCHEMA IF NOT EXISTS rag_test');
    const store = new PgVectorStore({ pool, tableName: 'rag_test.documents', dimensions: 3, embedder: new TableEmbedder(COMPASS) });
    await store.add([{ id: 'east', text: 'east', metadata: {} }]);
    const rows = await pool.query<{ id: string }>('SELECT id FROM rag_test.documents');
    assert.deepEqual(rows.rows, [{ id: 'east' }]);
  });

  test('a large batch is written in several statements, atomically', async () => {
    const tableName = freshTable();
    const store = new PgVectorStore({ pool, tableName, dimensions: 16 });
    const documents = Array.from({ length: 1_201 }, (_, index) => ({
      id: `doc-${index}`,
      text: `document number ${index}`,
      metadata: { index },
    }));
    await store.add([{ id: 'first', text: 'creates the table', metadata: {} }]);
    // A row in the last statement fails: the rows of the earlier statements must not stay.
    await pool.query(
      `CREATE FUNCTION ${tableName}_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ ` +
        "BEGIN IF NEW.id = 'doc-1200' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$",
    );
    await pool.query(`CREATE TRIGGER refuse BEFORE INSERT ON ${tableName} FOR EACH ROW EXECUTE FUNCTION ${tableName}_refuse()`);
    await assert.rejects(store.add(documents), storeError(/failed to add documents: .*refused/));
    const countAfterFailure = await pool.query<{ count: string }>(`SELECT count(*) AS count FROM ${tableName}`);
    assert.equal(countAfterFailure.rows[0]?.count, '1');

    await pool.query(`DROP TRIGGER refuse ON ${tableName}`);
    await store.add(documents);
    const count = await pool.query<{ count: string }>(`SELECT count(*) AS count FROM ${tableName}`);
    assert.equal(count.rows[0]?.count, '1202');
    const [hit] = await store.similaritySearch({ query: 'document number 1200', filter: { index: 1200 } });
    assert.equal(hit?.id, 'doc-1200');
  });

  test('the default embedder is the lexical stand-in sized to the table', async () => {
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 64 });
    await store.add([
      { id: 'pg', text: 'PostgreSQL stores vectors with pgvector', metadata: {} },
      { id: 'redis', text: 'Redis keeps breaker state for replicas', metadata: {} },
    ]);
    const [best] = await store.similaritySearch({ query: 'which database stores vectors?', topK: 1 });
    assert.equal(best?.id, 'pg');
  });

  test('a connection lost mid-transaction fails the call, and the next call works', async () => {
    // A server of its own, reached through a cable the test cuts when the schema transaction takes its lock.
    const db = await PGlite.create({ extensions: { vector } });
    const upstream = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await upstream.start();
    const [host, port] = upstream.getServerConn().split(':');
    let cut = false;
    const cable = net.createServer((socket) => {
      const server = net.connect(Number(port), host);
      for (const end of [socket, server]) end.on('error', () => {});
      socket.on('close', () => server.destroy());
      server.on('close', () => socket.destroy());
      server.on('data', (chunk) => socket.write(chunk));
      socket.on('data', (chunk) => {
        if (!cut && chunk.includes('pg_advisory_xact_lock')) {
          cut = true;
          socket.destroy();
          return;
        }
        server.write(chunk);
      });
    });
    await new Promise<void>((resolve) => cable.listen(0, '127.0.0.1', resolve));
    // A pool of the caller's, with no 'error' listener: a connection lost while checked out must not reach it.
    const lossy = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${(cable.address() as net.AddressInfo).port}/postgres`, max: 1 });
    try {
      const store = new PgVectorStore({ pool: lossy, tableName: freshTable(), dimensions: 3, embedder: new TableEmbedder(COMPASS) });
      await assert.rejects(store.add([{ id: 'north', text: 'north', metadata: {} }]), storeError(/Connection terminated unexpectedly/));
      assert.ok(cut);
      // Let a late 'error' event, which would crash the process, have its chance.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await store.add([{ id: 'north', text: 'north', metadata: {} }]);
      assert.deepEqual(
        (await store.similaritySearch({ query: 'north' })).map((document) => document.id),
        ['north'],
      );
    } finally {
      await lossy.end();
      await new Promise((resolve) => cable.close(resolve));
      await upstream.stop();
      await db.close();
    }
  });

  describe('with the default HNSW index', () => {
    // 1,200 distinct documents, all similar to the query "shared".
    const documents = Array.from({ length: 1_200 }, (_, index) => ({
      id: `doc-${index}`,
      text: `shared w${index % 97} v${index % 89}`,
      metadata: { even: index % 2 === 0 },
    }));
    let hnsw: PgVectorStore;
    let table: string;
    before(async () => {
      table = freshTable();
      hnsw = new PgVectorStore({ pool, tableName: table, dimensions: 64 });
      await hnsw.add(documents);
    });

    test("a createIndex: 'none' store on that table searches exactly: it never takes the index", async () => {
      const exact = new PgVectorStore({ pool, tableName: table, dimensions: 64, createIndex: 'none' });
      // As on a large table, where the planner would take the index whenever the query lets it.
      await pool.query('SET enable_seqscan = off');
      try {
        const { statements, values, found } = await recordingStatements(() => exact.similaritySearch({ query: 'shared w3', topK: 5 }));
        const search = statements.findIndex((text) => text.startsWith('SELECT id'));
        const plan = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statements[search]}`, values[search]);
        assert.doesNotMatch(plan.rows.map((row) => row['QUERY PLAN']).join('\n'), /Index Scan using \S*hnsw/);
        const every = await exact.similaritySearch({ query: 'shared w3', topK: 5_000 });
        assert.deepEqual(
          found.map((document) => document.id),
          every.slice(0, 5).map((document) => document.id),
        );
      } finally {
        await pool.query('RESET enable_seqscan');
      }
    });

    test('a search returns topK documents, not just the 40 of hnsw.ef_search, also with a threshold and a filter', async () => {
      assert.equal((await hnsw.similaritySearch({ query: 'shared', topK: 100 })).length, 100);
      assert.equal((await hnsw.similaritySearch({ query: 'shared', topK: 500 })).length, 500);
      assert.equal((await hnsw.similaritySearch({ query: 'shared', topK: 100, similarityThreshold: 0.01 })).length, 100);
      const even = await hnsw.similaritySearch({ query: 'shared', topK: 300, filter: { even: true } });
      assert.equal(even.length, 300);
      assert.ok(even.every((document) => document.metadata['even'] === true));
      // The pool has one connection, the one the searches used: their settings ended with them.
      const settings = await pool.query<{ ef: string; iterative: string }>(
        "SELECT current_setting('hnsw.ef_search') AS ef, current_setting('hnsw.iterative_scan') AS iterative",
      );
      assert.deepEqual(settings.rows, [{ ef: '40', iterative: 'off' }]);
    });

    test('beyond the index limit (topK over 1,000) the search is exact and complete', async () => {
      // On a table this small the planner would scan it anyway; on a large one it takes the
      // index, which yields at most 1,000 rows. Disabling sequential scans stands in for that.
      await pool.query('SET enable_seqscan = off');
      let all: Awaited<ReturnType<PgVectorStore['similaritySearch']>>;
      try {
        all = await hnsw.similaritySearch({ query: 'shared', topK: 1_001 });
      } finally {
        await pool.query('RESET enable_seqscan');
      }
      assert.equal(all.length, 1_001);
      const scores = all.map((document) => document.score ?? Number.NaN);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
        'best first',
      );
      const every = await hnsw.similaritySearch({ query: 'shared', topK: 5_000 });
      assert.equal(every.length, documents.length);
      assert.deepEqual(
        all.map((document) => document.id),
        every.slice(0, 1_001).map((document) => document.id),
        'the best 1,001',
      );
    });
  });

  test('add writes rows in id order, whatever the order given, so overlapping adds cannot deadlock', async () => {
    // PostgreSQL locks rows in the order a statement writes them: two adds of
    // the same ids in different orders would each wait for the other (40P01).
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 16 });
    const ids = ['b', 'tie-😀', 'a', 'tie-～', 'c'];
    const expected = ['a', 'b', 'c', 'tie-～', 'tie-😀'];
    const inserted = async (documents: { id: string; text: string; metadata: Record<string, never> }[]) => {
      const { statements, values } = await recordingStatements(() => store.add(documents));
      return statements.flatMap((text, index) => (text.startsWith('INSERT') ? (values[index] ?? []).filter((_, i) => i % 4 === 0) : []));
    };
    assert.deepEqual(await inserted(ids.map((id) => ({ id, text: `text ${id}`, metadata: {} }))), expected);
    // Over several statements, the whole batch is in one order.
    const many = Array.from({ length: 1_100 }, (_, index) => `doc-${String(1_099 - index).padStart(4, '0')}`);
    assert.deepEqual(await inserted(many.map((id) => ({ id, text: `text ${id}`, metadata: {} }))), [...many].reverse());
  });

  test('delete locks its rows in the order add writes them, so a delete and an add of the same ids cannot deadlock', async () => {
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 16 });
    await store.add(['b', 'a', 'c'].map((id) => ({ id, text: `text ${id}`, metadata: {} })));
    const { statements } = await recordingStatements(() => store.delete(['c', 'a']));
    const lock = statements.findIndex((text) => /ORDER BY id COLLATE "C" FOR UPDATE/.test(text));
    const removal = statements.findIndex((text) => text.startsWith('DELETE'));
    assert.ok(lock >= 0 && lock < removal, statements.join('\n'));
    assert.deepEqual(
      (await store.similaritySearch({ query: 'text', topK: 5 })).map((document) => document.id),
      ['b'],
    );
  });

  test('a store that finds its table and index in place runs no DDL, so a role without CREATE can use them', async () => {
    await pool.query('CREATE SCHEMA IF NOT EXISTS rag_ddl');
    for (const tableName of [freshTable(), `rag_ddl.${freshTable()}`]) {
      await new PgVectorStore({ pool, tableName, dimensions: 16 }).add([{ id: 'a', text: 'first', metadata: {} }]);
      const { statements } = await recordingStatements(() =>
        new PgVectorStore({ pool, tableName, dimensions: 16 }).add([{ id: 'b', text: 'second', metadata: {} }]),
      );
      assert.deepEqual(
        statements.filter((text) => /\bCREATE\b/.test(text)),
        [],
        tableName,
      );
      // A store of another size still learns that the table is not its own.
      await assert.rejects(
        new PgVectorStore({ pool, tableName, dimensions: 8 }).add([{ id: 'c', text: 'third', metadata: {} }]),
        EmbeddingDimensionMismatchError,
      );
    }
  });

  test("createIndex: 'none' searches without index settings or a transaction", async () => {
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 16, createIndex: 'none' });
    await store.add(['a', 'b'].map((id) => ({ id, text: `text ${id}`, metadata: { kind: 'x' } })));
    const { statements } = await recordingStatements(() => store.similaritySearch({ query: 'text', topK: 100, filter: { kind: 'x' } }));
    assert.deepEqual(
      statements.filter((text) => !text.startsWith('SELECT id')),
      [],
    );
  });

  test('a filter needing more parameters than PostgreSQL accepts fails with a typed error suggesting $in', async () => {
    const store = new PgVectorStore({ pool, tableName: freshTable(), dimensions: 3, embedder: new TableEmbedder(COMPASS) });
    await store.add([{ id: 'north', text: 'north', metadata: { kind: 'k-1' } }]);
    const filter = { $or: Array.from({ length: 70_000 }, (_, index) => ({ kind: `k-${index}` })) };
    await assert.rejects(
      store.similaritySearch({ query: 'north', filter }),
      (error: unknown) =>
        error instanceof InvalidMetadataFilterError && error.option === 'filter' && /65535|65,535/.test(error.message) && error.message.includes('$in'),
    );
    const inList = { kind: { $in: filter.$or.map((condition) => condition.kind) } };
    assert.deepEqual(
      (await store.similaritySearch({ query: 'north', filter: inList })).map((document) => document.id),
      ['north'],
    );
  });

  test('bad options are rejected at construction, naming the option', () => {
    const cases: [() => unknown, string][] = [
      [() => new PgVectorStore({ pool, dimensions: 3, tableName: 'docs; DROP TABLE users' }), 'tableName'],
      [() => new PgVectorStore({ pool, dimensions: 3, tableName: '"docs"' }), 'tableName'],
      [() => new PgVectorStore({ pool, dimensions: 3, tableName: 'a.b.c' }), 'tableName'],
      [() => new PgVectorStore({ pool, dimensions: 0 }), 'dimensions'],
      [() => new PgVectorStore({ pool, dimensions: 1.5 }), 'dimensions'],
      [() => new PgVectorStore({ pool, dimensions: 3, embedder: new LexicalHashEmbedding() }), 'dimensions'],
      [() => new PgVectorStore({ dimensions: 3 }), 'pool'],
      [() => new PgVectorStore({ pool, connectionString: 'postgres://x@127.0.0.1/db', dimensions: 3 }), 'connectionString'],
      [() => new PgVectorStore({ pool, dimensions: 3_000 }), 'createIndex'],
      [() => new PgVectorStore({ pool, dimensions: 3, distance: 'l2' as 'cosine' }), 'distance'],
      [() => new PgVectorStore({ connectionString: 'postgres://x@127.0.0.1/db', dimensions: 3, connectTimeoutMs: 0 }), 'connectTimeoutMs'],
      [() => new PgVectorStore({ connectionString: 'postgres://x@127.0.0.1/db', dimensions: 3, timeoutMs: Number.POSITIVE_INFINITY }), 'timeoutMs'],
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option, option);
    }
    assert.doesNotThrow(() => new PgVectorStore({ pool, dimensions: 3_000, createIndex: 'none' }));
  });
});

describe('PgVectorStore failures on a real PostgreSQL', () => {
  const databaseUrl = testDatabaseUrl();
  // The test server trusts local connections: it accepts any password, and never asks for this one.
  const secret = `pw-${randomBytes(6).toString('hex')}`;
  let stores: PgVectorStore[] = [];
  after(async () => {
    await Promise.all(stores.map((store) => store.close()));
    stores = [];
  });

  function storeAt(url: URL, options: { initializeSchema?: boolean } = {}): PgVectorStore {
    url.password = secret;
    const store = new PgVectorStore({ connectionString: url.toString(), tableName: freshTable(), dimensions: 8, connectTimeoutMs: 2000, ...options });
    stores.push(store);
    return store;
  }

  /**
   * Every call of the store fails with a VectorStoreError naming the server and the call, with the driver's error
   * (of `code`) as cause and no password.
   */
  async function failsEveryCall(store: PgVectorStore, address: string, code: string, ...advice: RegExp[]): Promise<void> {
    const calls: [string, () => Promise<unknown>][] = [
      ['add documents', () => store.add([{ id: 'a', text: 'hello', metadata: {} }])],
      ['search', () => store.similaritySearch({ query: 'hello' })],
      ['delete documents', () => store.delete(['a'])],
    ];
    for (const [name, call] of calls) {
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(VectorStoreError.isInstance(error), `${name}: ${inspect(error)}`);
        assert.ok(GovernorError.isInstance(error));
        assert.equal(error.name, 'VectorStoreError');
        assert.equal(error.code, 'GOVERNOR_VECTOR_STORE');
        assert.ok(error.store.includes(address), error.store);
        assert.ok(error.message.includes(`PostgreSQL at ${address}`), error.message);
        assert.ok(error.message.includes(`failed to ${name}`), `the call is named: ${error.message}`);
        for (const pattern of advice) assert.match(error.message, pattern, name);
        assert.equal((error.cause as { code?: unknown } | undefined)?.code, code, name);
        assert.ok(!inspect(error, { depth: 10, showHidden: true }).includes(secret), `${name}: the error holds the password`);
        return true;
      });
    }
  }

  test('without the pgvector extension, every call says to install it and run CREATE EXTENSION vector', async (t) => {
    await requirePostgres(databaseUrl);
    const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    await probe.connect();
    let available: boolean;
    try {
      available = (await probe.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rowCount === 1;
    } finally {
      await probe.end();
    }
    if (available) {
      t.skip('the test PostgreSQL has pgvector installed');
      return;
    }
    const url = new URL(databaseUrl);
    const address = `${url.host}${url.pathname}`;
    await failsEveryCall(
      storeAt(new URL(databaseUrl)),
      address,
      '0A000',
      /\(in the schema setup that runs first\): .*extension "vector" is not available/,
      /pgvector/,
      /CREATE EXTENSION vector/,
    );
    // With the schema left to migrations, the missing table is what fails, and the advice covers the extension too.
    const managed = storeAt(new URL(databaseUrl), { initializeSchema: false });
    await failsEveryCall(managed, address, '42P01', /does not exist/, /CREATE EXTENSION vector/, /initializeSchema/);
  });

  test('an unreachable server fails every call with a VectorStoreError naming it, without the password', async () => {
    const port = await unusedPort();
    const url = new URL(databaseUrl);
    url.port = String(port);
    await failsEveryCall(
      storeAt(url),
      `${url.hostname}:${port}${url.pathname}`,
      'ECONNREFUSED',
      /in the schema setup that runs first/,
      /ECONNREFUSED/,
      /check that the server is running/i,
    );
    await failsEveryCall(
      storeAt(url, { initializeSchema: false }),
      `${url.hostname}:${port}${url.pathname}`,
      'ECONNREFUSED',
      /in the schema check that runs first/,
      /check that the server is running/i,
    );
    // A pool of the caller's is named from its settings, without the password either.
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'governor', password: secret, database: 'vectors', connectionTimeoutMillis: 2000 });
    try {
      await failsEveryCall(new PgVectorStore({ pool, dimensions: 8 }), `127.0.0.1:${port}/vectors`, 'ECONNREFUSED', /check that the server is running/i);
    } finally {
      await pool.end();
    }
  });

  test('credentials the server refuses fail every call with a VectorStoreError saying to check them, without the password', async () => {
    await requirePostgres(databaseUrl);
    const url = new URL(databaseUrl);
    url.username = `no_such_role_${randomBytes(4).toString('hex')}`;
    await failsEveryCall(
      storeAt(url),
      `${url.host}${url.pathname}`,
      '28000',
      /in the schema setup that runs first/,
      /does not exist/,
      /user name and password/,
    );
  });

  test('await using ends the pool the store created at the end of its scope', async () => {
    await requirePostgres(databaseUrl);
    const url = new URL(databaseUrl);
    const applicationName = `vs_disposed_${randomBytes(4).toString('hex')}`;
    url.searchParams.set('application_name', applicationName);
    const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    await probe.connect();
    const connections = async () =>
      Number((await probe.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName])).rows[0].n);
    try {
      {
        await using store = new PgVectorStore({ connectionString: url.toString(), tableName: freshTable(), dimensions: 8, initializeSchema: false });
        // The table is not there: the call fails, rolls its transaction back and leaves its connection idle in the pool.
        await assert.rejects(store.delete(['a']), VectorStoreError);
        assert.equal(await connections(), 1);
      }
      for (const deadline = Date.now() + 2000; (await connections()) > 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await connections(), 0, 'the connection is closed');
    } finally {
      await probe.end();
    }
  });

  test('a connection the server ends while a call waits on it fails the call saying to check that the server is running', async () => {
    await requirePostgres(databaseUrl);
    const url = new URL(databaseUrl);
    const applicationName = `vs_terminated_${randomBytes(4).toString('hex')}`;
    url.searchParams.set('application_name', applicationName);
    const tableName = freshTable();
    const store = new PgVectorStore({ connectionString: url.toString(), tableName, dimensions: 8, connectTimeoutMs: 2000 });
    stores.push(store);
    // Holds the lock the store's schema setup takes, so that its statement waits on the server, where it is ended.
    const locker = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    // Not in a transaction: there, pg_stat_activity would show the snapshot of its first read.
    const admin = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
    await locker.connect();
    await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`agent-governor:vector-store:${tableName}`]);
      const search = store.similaritySearch({ query: 'hello' });
      search.catch(() => {});
      let ended = false;
      for (let attempt = 0; attempt < 100 && !ended; attempt++) {
        const result = await admin.query(
          "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [applicationName],
        );
        ended = result.rows.some((row: { ended: boolean }) => row.ended);
        if (!ended) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(ended, 'the store waited on the lock');
      await assert.rejects(search, (error: unknown) => {
        assert.ok(VectorStoreError.isInstance(error), inspect(error));
        assert.equal((error.cause as { code?: unknown } | undefined)?.code, '57P01');
        assert.match(error.message, /failed to search \(in the schema setup that runs first\): .*terminating connection/);
        assert.match(error.message, /check that the server is running/i);
        return true;
      });
    } finally {
      await locker.end();
      await admin.end();
    }
  });

  test('a connection that drops without a word (a server process gone, a network cut) fails the call saying to check that the server is running', async () => {
    await requirePostgres(databaseUrl);
    const target = new URL(databaseUrl);
    // Reached through a cable the test cuts when the store's schema setup takes its lock.
    const cable = net.createServer((socket) => {
      const origin = net.connect(Number(target.port), target.hostname);
      for (const end of [socket, origin]) end.on('error', () => {});
      socket.on('close', () => origin.destroy());
      origin.on('close', () => socket.destroy());
      origin.on('data', (chunk) => socket.write(chunk));
      socket.on('data', (chunk) => {
        if (chunk.includes('pg_advisory_xact_lock')) socket.destroy();
        else origin.write(chunk);
      });
    });
    await new Promise<void>((resolve) => cable.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${(cable.address() as net.AddressInfo).port}`;
      await assert.rejects(storeAt(url).add([{ id: 'a', text: 'hello', metadata: {} }]), (error: unknown) => {
        assert.ok(VectorStoreError.isInstance(error), inspect(error));
        assert.match(error.message, /failed to add documents \(in the schema setup that runs first\): Connection terminated unexpectedly/);
        assert.match(error.message, /check that the server is running/i);
        return true;
      });
    } finally {
      await new Promise((resolve) => cable.close(resolve));
    }
  });
});

describe('PgVectorStore against a server that stalls', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });
  /** A server that answers nothing (see stallingServer), closed after the tests. */
  async function stalling(upstream?: { host: string; port: number }): Promise<StallingServer> {
    const server = await stallingServer(upstream);
    cleanups.push(() => server.close());
    return server;
  }

  test('a server that never answers fails a call after connectTimeoutMs, and close() returns', async () => {
    const silent = await stalling();
    const store = new PgVectorStore({
      connectionString: silent.address('postgres://postgres@127.0.0.1/postgres'),
      dimensions: 3,
      embedder: new TableEmbedder(COMPASS),
      connectTimeoutMs: 300,
    });
    const started = performance.now();
    await assert.rejects(
      settlesWithin(store.similaritySearch({ query: 'north' }), 2000, 'the search'),
      storeError(/connection timeout/, /300 ms \(connectTimeoutMs\)/),
    );
    assert.ok(performance.now() - started < 1000, 'bounded by connectTimeoutMs');
    await settlesWithin(store.close(), 2000, 'close()');
  });

  test('a server that stops answering fails a call after timeoutMs, and close() with it in flight returns within about timeoutMs', async () => {
    const db = await PGlite.create({ extensions: { vector } });
    const upstream = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await upstream.start();
    cleanups.push(async () => {
      await upstream.stop();
      await db.close();
    });
    const [host = '', port] = upstream.getServerConn().split(':');
    const relay = await stalling({ host, port: Number(port) });
    const store = new PgVectorStore({
      connectionString: relay.address('postgres://postgres@127.0.0.1/postgres'),
      dimensions: 3,
      embedder: new TableEmbedder(COMPASS),
      timeoutMs: 500,
    });
    cleanups.push(() => store.close());
    await store.add([{ id: 'north', text: 'north', metadata: {} }]);
    relay.stall();

    const started = performance.now();
    const inFlight = store.similaritySearch({ query: 'north' });
    inFlight.catch(() => {});
    // Sent, waiting for its reply.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await settlesWithin(store.close(), 2000, 'close()');
    await assert.rejects(settlesWithin(inFlight, 1000, 'the search in flight'), storeError(/Query read timeout/, /500 ms \(timeoutMs\)/));
    const took = performance.now() - started;
    assert.ok(took < 1000, `took ${Math.round(took)} ms: bounded by timeoutMs (500 ms)`);
  });
});
