/**
 * Both PostgreSQL stores take a connection string; pg parses it only when a
 * pool first connects, so each store checks it when it is built.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidOptionError } from '../errors/governor-error.ts';
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
