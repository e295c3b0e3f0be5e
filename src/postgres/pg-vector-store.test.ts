import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { LexicalHashEmbedding } from '../rag/lexical-hash-embedding.ts';
import { EmbeddingDimensionMismatchError } from '../rag/retrieval-errors.ts';
import { COMPASS, TableEmbedder } from '../rag/test-support/table-embedder.ts';
import { describeVectorStoreContract } from '../rag/test-support/vector-store-contract.ts';
import { PgVectorStore } from './pg-vector-store.ts';

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
    const statements: string[] = [];
    const original = pool.query;
    pool.query = ((text: string, values?: unknown[]) => {
      statements.push(text);
      return (original as (text: string, values?: unknown[]) => Promise<pg.QueryResult>).call(pool, text, values);
    }) as typeof pool.query;
    try {
      const found = await store.similaritySearch({
        query: 'north',
        filter: { kind: "it's", 'author.name': { $ne: 'Mallory' }, year: { $gte: 1999 } },
      });
      assert.deepEqual(
        found.map((document) => document.id),
        ['north'],
      );
    } finally {
      pool.query = original;
    }
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
    await assert.rejects(store.add(documents), /refused/);
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
      await assert.rejects(store.add([{ id: 'north', text: 'north', metadata: {} }]), /Connection terminated unexpectedly/);
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
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option, option);
    }
    assert.doesNotThrow(() => new PgVectorStore({ pool, dimensions: 3_000, createIndex: 'none' }));
  });
});
