/**
 * Both PostgreSQL stores take a connection string; pg parses it only when a
 * pool first connects, so each store checks it when it is built.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import { VectorStoreError } from '../rag/retrieval-errors.ts';
import { requirePostgres, testDatabaseUrl } from '../test-support/services.ts';
import { PgVectorStore, PostgresChatMemoryRepository } from './index.ts';

const stores: ReadonlyArray<[string, (connectionString: string) => { close(): Promise<void> }]> = [
  ['PgVectorStore', (connectionString) => new PgVectorStore({ connectionString, dimensions: 3 })],
  ['PostgresChatMemoryRepository', (connectionString) => new PostgresChatMemoryRepository({ connectionString })],
];

for (const [name, build] of stores) {
  describe(`${name}: its connection string`, () => {
    test('one pg cannot parse is rejected at construction, without echoing it', () => {
      for (const connectionString of [
        'postgres://app:pa#ss@db.example/app',
        'postgres://app:se/cret@db.example/app',
        'postgres://app:p?w@db.example:5432/app',
      ]) {
        assert.throws(
          () => build(connectionString),
          (error: unknown) =>
            error instanceof InvalidOptionError &&
            error.option === 'connectionString' &&
            !error.message.includes('pa#ss') &&
            !error.message.includes('cret') &&
            !error.message.includes('p?w') &&
            error.message.includes('percent-encode'),
          connectionString,
        );
      }
    });

    test('a string that is not a URL (libpq keywords, host:port, a database name) is refused at construction, without echoing it', () => {
      for (const [connectionString, says] of [
        [
          'host=127.0.0.1 port=5439 dbname=governor_test user=postgres password=s3cret',
          /libpq keyword\/value string.*postgres:\/\/user:password@host:5432\/database/,
        ],
        ['  user = app password=s3cret', /libpq keyword/],
        ['127.0.0.1:5439', /not a postgres:\/\/ URL.*socket directory/],
        ['localhost:5432', /not a postgres:\/\/ URL/],
        ['governor_test', /not a postgres:\/\/ URL/],
      ] as const) {
        assert.throws(
          () => build(connectionString),
          (error: unknown) =>
            error instanceof InvalidOptionError &&
            error.option === 'connectionString' &&
            says.test(error.message) &&
            !error.message.includes('s3cret') &&
            !error.message.includes(connectionString.trim()),
          connectionString,
        );
      }
    });

    test('a certificate file it names that cannot be read is reported as that, not as a bad URL', () => {
      assert.throws(
        () => build('postgres://app:s3cret@db.example/app?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem'),
        (error: unknown) =>
          error instanceof InvalidOptionError &&
          error.option === 'connectionString' &&
          /ENOENT.*\/nonexistent\/ca\.pem/.test(error.message) &&
          !error.message.includes('s3cret'),
      );
    });

    test('the forms pg accepts are accepted', async () => {
      for (const connectionString of [
        'postgres://app:pa%23ss@db.example:5432/app?sslmode=require',
        'postgresql://app@/app',
        'postgres://app:pass word@localhost/app',
        '/var/run/postgresql app',
        'socket:/var/run/postgresql?db=app',
        'POSTGRES://app@db.example/app',
      ]) {
        await build(connectionString).close();
      }
    });
  });
}

test('PostgresChatMemoryRepository without options says what it needs', () => {
  assert.throws(
    () => new PostgresChatMemoryRepository(undefined as never),
    (error: unknown) => error instanceof InvalidOptionError && /pool.*connection string/.test(error.message),
  );
});

/**
 * A password holding the characters that end a URL's user info early, in
 * pieces distinct enough to look for in messages.
 */
const PIECES = ['Kq7', 'Zx9', 'W4v', 'Jm2', 'Hb5'] as const;

/** Strings pg parses with part of the user info read as the host, path, query or fragment. */
const MISREAD: ReadonlyArray<[string, string]> = [
  ['an "@" and a "/" in the password, as the path', 'postgres://app:Kq7@Zx9/W4v@127.0.0.1:1/x'],
  ['a space, an "@" and a "/" in the password, as the path', 'postgres://app:Kq7@Zx9 W4v/Jm2@127.0.0.1:1/x'],
  ['an "@" and a "/" in the password, with no host after them', 'postgres://app:Kq7@/W4v@/x'],
  ['a "/" in the user name, as the path', 'postgres://Kq7/Zx9:W4v@127.0.0.1:1/x'],
  ['a "?" in the password, as a query parameter', 'postgres://app:7331?Jm2@127.0.0.1:1/x'],
  ['"?" and "/" in the password, as path and query', 'postgres://app:Kq7@Zx9/W4v?Jm2@127.0.0.1:1/x'],
  ['a "#" in the password, as the fragment', 'postgres://app:7331#Hb5@127.0.0.1:1/x'],
];

function holdsAPiece(text: string): boolean {
  return PIECES.some((piece) => text.includes(piece));
}

for (const [name, build] of stores) {
  describe(`${name}: a connection string whose user info pg would misread`, () => {
    for (const [form, connectionString] of MISREAD) {
      test(`${form} is refused at construction, saying to percent-encode, without any part of it`, () => {
        assert.throws(
          () => build(connectionString),
          (error: unknown) =>
            error instanceof InvalidOptionError &&
            error.option === 'connectionString' &&
            /percent-encode/.test(error.message) &&
            /encodeURIComponent/.test(error.message) &&
            !holdsAPiece(error.message) &&
            !error.message.includes('7331'),
        );
      });
    }

    test('query parameters holding an "@" (user=name@server) are still accepted', async () => {
      await build('postgres://db.example:5432/app?user=app@db-server&sslmode=require').close();
    });
  });
}

describe('the same password percent-encoded', () => {
  const password = 'Kq7@Zx9/W4v?Jm2#Hb5';
  const calls: ReadonlyArray<[string, (connectionString: string, tableName: string) => { call(): Promise<unknown>; close(): Promise<void> }]> = [
    [
      'PostgresChatMemoryRepository',
      (connectionString, tableName) => {
        const repository = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
        return { call: () => repository.findConversationIds(), close: () => repository.close() };
      },
    ],
    [
      'PgVectorStore',
      (connectionString, tableName) => {
        const store = new PgVectorStore({ connectionString, tableName, dimensions: 3, connectTimeoutMs: 2000 });
        return { call: () => store.delete(['a']), close: () => store.close() };
      },
    ],
  ];

  /** What a call through a store built from `connectionString` gives: its result, or its error message. */
  async function outcome(open: (typeof calls)[number][1], connectionString: string, tableName: string): Promise<unknown> {
    const store = open(connectionString, tableName);
    try {
      return { result: await store.call() };
    } catch (error) {
      return { failed: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    } finally {
      await store.close();
    }
  }

  for (const [name, open] of calls) {
    test(`${name}: is accepted, and reaches the test server as the URL without a password does`, async () => {
      const plain = await requirePostgres(testDatabaseUrl());
      const encoded = new URL(plain);
      encoded.password = encodeURIComponent(password);
      assert.ok(encoded.toString().includes('Kq7%40Zx9%2FW4v%3FJm2%23Hb5'), encoded.toString());
      const tableName = `connection_string_test_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: plain, connectionTimeoutMillis: 2000 });
      await admin.connect();
      try {
        // The test server trusts every local connection, so the password changes nothing there.
        const withPassword = await outcome(open, encoded.toString(), tableName);
        await admin.query(`DROP TABLE IF EXISTS ${tableName}, ${tableName}_schema_migrations`);
        assert.deepEqual(withPassword, await outcome(open, plain, tableName));
        assert.ok(!holdsAPiece(JSON.stringify(withPassword)), JSON.stringify(withPassword));
      } finally {
        await admin.query(`DROP TABLE IF EXISTS ${tableName}, ${tableName}_schema_migrations`);
        await admin.end();
      }
    });
  }
});

describe('a pool of the caller’s whose connection string pg misreads', () => {
  // pg reads the host 127.0.0.1, port 1 and database "W4v@db.example/x" from the password "Kq7@127.0.0.1:1/W4v".
  const connectionString = 'postgres://app:Kq7@127.0.0.1:1/W4v@db.example/x';
  const calls: ReadonlyArray<[string, (pool: pg.Pool) => () => Promise<unknown>]> = [
    ['PostgresChatMemoryRepository', (pool) => () => new PostgresChatMemoryRepository({ pool }).findConversationIds()],
    ['PgVectorStore', (pool) => () => new PgVectorStore({ pool, dimensions: 3 }).delete(['a'])],
  ];
  for (const [name, call] of calls) {
    test(`${name}: a failing call names the store without any part of the user info`, async () => {
      const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 2000 });
      try {
        await assert.rejects(call(pool)(), (error: unknown) => {
          assert.ok(error instanceof ChatMemoryStoreError || VectorStoreError.isInstance(error), String(error));
          for (const text of [error.store, error.message]) {
            assert.ok(!holdsAPiece(text) && !text.includes('db.example'), text);
          }
          return true;
        });
      } finally {
        await pool.end();
      }
    });
  }
});
