import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import { chatMemoryRepositoryContract } from '../memory/test-support/chat-memory-repository-contract.ts';
import { userText } from '../memory/test-support/sample-messages.ts';
import { requirePostgres, testDatabaseUrl } from '../test-support/services.ts';
import { PostgresChatMemoryRepository } from './postgres-chat-memory-repository.ts';
import { stallingServer, type StallingServer } from '../test-support/stalling-server.ts';
import { settlesWithin } from '../test-support/settles-within.ts';
import { assertRefusedWhenClosed, closedRefusal } from '../memory/test-support/closed-repository.ts';

const connectionString = testDatabaseUrl();

/** A table name no other test run uses. */
function uniqueTable(): string {
  return `chat_memory_test_${randomBytes(6).toString('hex')}`;
}

async function dropTables(...tables: string[]): Promise<void> {
  if (tables.length === 0) return;
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    for (const table of tables) {
      await client.query(`DROP TABLE IF EXISTS ${table}, ${table}_schema_migrations`);
    }
  } finally {
    await client.end();
  }
}

chatMemoryRepositoryContract('PostgresChatMemoryRepository', async () => {
  await requirePostgres(connectionString);
  const tableName = uniqueTable();
  const handles: PostgresChatMemoryRepository[] = [];
  return {
    // Each handle has its own pool: the concurrent writers are separate clients, as replicas would be.
    open: async () => {
      const repository = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
      handles.push(repository);
      return repository;
    },
    cleanup: async () => {
      await Promise.all(handles.map((handle) => handle.close()));
      await dropTables(tableName);
    },
  };
});

describe('PostgresChatMemoryRepository', () => {
  const tables: string[] = [];
  const table = (): string => {
    const name = uniqueTable();
    tables.push(name);
    return name;
  };

  before(() => requirePostgres(connectionString));
  after(() => dropTables(...tables));

  test('replicas starting together create the schema once and all write', async () => {
    const tableName = table();
    const replicas = Array.from({ length: 8 }, () => new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 }));
    try {
      await Promise.all(replicas.map((replica, i) => replica.append('c', [userText(`from ${i}`)])));
      assert.equal((await replicas[0]!.findByConversationId('c')).length, replicas.length);
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }

    const pool = new pg.Pool({ connectionString });
    try {
      const versions = await pool.query(`SELECT version FROM ${tableName}_schema_migrations`);
      assert.deepStrictEqual(versions.rows, [{ version: 1 }]);
    } finally {
      await pool.end();
    }
  });

  test('services that name one table two ways (bare and schema-qualified) take the same locks: concurrent appends lose nothing', async () => {
    const tableName = table();
    const bare = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
    const qualified = new PostgresChatMemoryRepository({ connectionString, tableName: `public.${tableName}`, connectTimeoutMs: 2000 });
    try {
      // The first calls run at once too: both create the schema under one lock.
      const appends = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? bare : qualified).append('c', [userText(`${i}a`), userText(`${i}b`)]));
      const failed = (await Promise.allSettled(appends)).filter((outcome) => outcome.status === 'rejected');
      assert.deepEqual(
        failed.map((outcome) => String(outcome.reason)),
        [],
      );
      const stored = (await qualified.findByConversationId('c')).map((message) => message.content);
      assert.equal(stored.length, 80);
      for (let i = 0; i < stored.length; i += 2) assert.equal(`${stored[i]}`.replace(/a$/, 'b'), stored[i + 1], 'each batch stays contiguous');
    } finally {
      await bare.close();
      await qualified.close();
    }
  });

  test('works on a pool it is given and leaves that pool open on close', async () => {
    const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 2000 });
    try {
      const tableName = table();
      const repository = new PostgresChatMemoryRepository({ pool, tableName });
      await repository.saveAll('c', [userText('hello')]);
      await repository.close();
      assert.equal(pool.ended, false);
      // Closed is closed, whoever owns the pool: another repository on it reads what this one wrote.
      await assert.rejects(repository.findByConversationId('c'), closedRefusal);
      assert.deepStrictEqual(await new PostgresChatMemoryRepository({ pool, tableName }).findByConversationId('c'), [userText('hello')]);
    } finally {
      await pool.end();
    }
  });

  test('calls made before close() finish first, more at once than the pool has connections; calls after it fail saying so', async () => {
    const tableName = table();
    const repository = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
    // The first use: each call creates or checks the schema first, then waits its turn for one of the pool's 10 connections.
    const calls = Array.from({ length: 20 }, (_, i) => repository.append('c', [userText(`m${i}`)]));
    await settlesWithin(repository.close(), 6000, 'close()');
    const settled = await settlesWithin(Promise.allSettled(calls), 1000, 'the calls');
    assert.deepEqual(
      settled.filter((outcome) => outcome.status === 'rejected'),
      [],
    );
    await assertRefusedWhenClosed(repository);
    await using reader = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
    assert.equal((await reader.findByConversationId('c')).length, 20);
  });

  test('a table with a newer schema than this library knows is refused', async () => {
    const tableName = table();
    const pool = new pg.Pool({ connectionString });
    try {
      await pool.query(`CREATE TABLE ${tableName}_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz)`);
      await pool.query(`INSERT INTO ${tableName}_schema_migrations (version) VALUES (7)`);
      const repository = new PostgresChatMemoryRepository({ pool, tableName });
      await assert.rejects(repository.findConversationIds(), /schema is version 7, newer than/);
    } finally {
      await pool.end();
    }
  });

  test('a role with only SELECT, INSERT and DELETE on existing tables uses them without creating anything', async () => {
    const suffix = randomBytes(6).toString('hex');
    const schema = `chat_memory_test_schema_${suffix}`;
    const role = `chat_memory_test_dml_${suffix}`;
    const password = randomBytes(12).toString('hex');
    const tableName = `${schema}.chat`;
    const admin = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
    await admin.connect();
    const roleUrl = new URL(connectionString);
    roleUrl.username = role;
    roleUrl.password = password;
    const app = new PostgresChatMemoryRepository({ connectionString: roleUrl.toString(), tableName, connectTimeoutMs: 2000 });
    const missing = new PostgresChatMemoryRepository({ connectionString: roleUrl.toString(), tableName: `${schema}.missing`, connectTimeoutMs: 2000 });
    try {
      // A schema of the test's own: a new role has USAGE on it only when granted, and never CREATE.
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      const owner = new PostgresChatMemoryRepository({ connectionString, tableName, connectTimeoutMs: 2000 });
      await owner.append('c', [userText('written by the owner')]);
      await owner.close();
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, DELETE ON ${tableName}, ${tableName}_schema_migrations TO ${role}`);

      assert.deepStrictEqual(await app.findByConversationId('c'), [userText('written by the owner')]);
      await app.append('c', [userText('from the app')]);
      assert.deepStrictEqual(await app.findByConversationId('c'), [userText('written by the owner'), userText('from the app')]);
      await app.saveAll('d', [userText('saved')]);
      assert.deepStrictEqual(await app.findConversationIds(), ['c', 'd']);
      await app.deleteByConversationId('d');
      assert.deepStrictEqual(await app.findConversationIds(), ['c']);

      // The role really may not create: a table that does not exist yet is a store error.
      await assert.rejects(missing.findConversationIds(), (error: unknown) => {
        assert.ok(error instanceof ChatMemoryStoreError);
        assert.match(error.message, /failed to create or migrate its schema: .*permission denied/);
        return true;
      });
    } finally {
      await app.close();
      await missing.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  test('an unreachable server fails the call with a store error naming the server, without the password', async () => {
    const repository = new PostgresChatMemoryRepository({
      connectionString: 'postgres://governor:s3cret@127.0.0.1:1/nowhere',
      connectTimeoutMs: 2000,
    });
    try {
      await assert.rejects(repository.append('c', [userText('lost')]), (error: unknown) => {
        assert.ok(error instanceof ChatMemoryStoreError);
        assert.equal(error.code, 'GOVERNOR_CHAT_MEMORY_STORE');
        assert.match(error.message, /PostgreSQL at 127\.0\.0\.1:1\/nowhere/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      });
    } finally {
      await repository.close();
    }
  });

  for (const source of ['a connection string', 'a pool without an error listener'] as const) {
    test(`a connection terminated mid-transaction fails the call with a store error, and the next call works (${source})`, async () => {
      const tableName = table();
      // The name lets the test find the repository's backend among the server's.
      const applicationName = `governor_test_${randomBytes(6).toString('hex')}`;
      const target = new URL(connectionString);
      target.searchParams.set('application_name', applicationName);
      const pool = source === 'a connection string' ? undefined : new pg.Pool({ connectionString: target.toString(), connectionTimeoutMillis: 2000 });
      const repository = new PostgresChatMemoryRepository({
        tableName,
        ...(pool === undefined ? { connectionString: target.toString(), connectTimeoutMs: 2000 } : { pool }),
      });
      const admin = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
      const writer = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
      try {
        await repository.append('c', [userText('before')]);
        await admin.connect();
        await writer.connect();
        // Another writer holds the conversation's lock: the append waits for it inside its transaction.
        await writer.query('BEGIN');
        await writer.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [tableName, 'c']);
        const append = repository.append('c', [userText('lost')]);
        append.catch(() => {});

        let pid: number | undefined;
        for (const deadline = Date.now() + 10_000; pid === undefined && Date.now() < deadline; ) {
          const waiting = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [
            applicationName,
          ]);
          pid = waiting.rows[0]?.pid;
          if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.ok(pid !== undefined, 'the append never waited for the lock');
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);

        await assert.rejects(append, (error: unknown) => {
          assert.ok(ChatMemoryStoreError.isInstance(error), String(error));
          assert.equal(error.code, 'GOVERNOR_CHAT_MEMORY_STORE');
          assert.match(error.message, /failed to append to a conversation: .*terminat/);
          return true;
        });
        // Let a late 'error' event, which would crash the process, have its chance.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await writer.query('ROLLBACK');

        await repository.append('c', [userText('after')]);
        assert.deepStrictEqual(await repository.findByConversationId('c'), [userText('before'), userText('after')]);
      } finally {
        await repository.close();
        await pool?.end();
        await admin.end().catch(() => {});
        await writer.end().catch(() => {});
      }
    });
  }

  test('bad options are rejected at construction, naming the option', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => new PostgresChatMemoryRepository({}), 'connectionString'],
      [() => new PostgresChatMemoryRepository({ connectionString, pool: new pg.Pool() }), 'pool'],
      [() => new PostgresChatMemoryRepository({ connectionString, tableName: 'chat; DROP TABLE x' }), 'tableName'],
      [() => new PostgresChatMemoryRepository({ connectionString, tableName: 'Chat' }), 'tableName'],
      [() => new PostgresChatMemoryRepository({ connectionString, tableName: 'a.b.c' }), 'tableName'],
      [() => new PostgresChatMemoryRepository({ connectionString, connectTimeoutMs: 0 }), 'connectTimeoutMs'],
      [() => new PostgresChatMemoryRepository({ connectionString, timeoutMs: -1 }), 'timeoutMs'],
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option);
    }
  });
});

describe('PostgresChatMemoryRepository against a server that stalls', () => {
  const tables: string[] = [];
  const table = (): string => {
    const name = uniqueTable();
    tables.push(name);
    return name;
  };
  const cleanups: (() => Promise<unknown>)[] = [];

  before(() => requirePostgres(connectionString));
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    await dropTables(...tables);
  });

  /** A server that answers nothing (see stallingServer), closed after the tests. */
  async function stalling(upstream?: { host: string; port: number }): Promise<StallingServer> {
    const server = await stallingServer(upstream);
    cleanups.push(() => server.close());
    return server;
  }

  test('a server that stops answering fails reads and transactions after one timeoutMs, and close() with a call in flight returns within about it', async () => {
    const target = new URL(connectionString);
    const relay = await stalling({ host: target.hostname, port: Number(target.port) });
    const open = () => {
      const repository = new PostgresChatMemoryRepository({
        connectionString: relay.address(connectionString),
        tableName,
        connectTimeoutMs: 500,
        timeoutMs: 500,
      });
      cleanups.push(() => repository.close());
      return repository;
    };
    const tableName = table();
    const [reader, writer, closing] = [open(), open(), open()];
    // Each holds one idle connection when the server stalls.
    await writer.append('c', [userText('kept')]);
    await Promise.all([reader.findByConversationId('c'), closing.findByConversationId('c')]);
    relay.stall();

    const noReply = (error: unknown) => {
      assert.ok(ChatMemoryStoreError.isInstance(error), String(error));
      assert.equal(error.code, 'GOVERNOR_CHAT_MEMORY_STORE');
      assert.match(error.message, /no reply within 500 ms/);
      return true;
    };
    const started = performance.now();
    await Promise.all([
      assert.rejects(settlesWithin(reader.findByConversationId('c'), 3000, 'the read'), noReply),
      assert.rejects(settlesWithin(writer.append('c', [userText('maybe')]), 3000, 'the append'), noReply),
    ]);
    const took = performance.now() - started;
    assert.ok(took < 900, `took ${Math.round(took)} ms: one timeout (500 ms), not a second one for a ROLLBACK queued behind the statement`);
    // The connection a statement timed out on is dropped, not reused: the next call connects anew, which the stalled server never completes.
    await assert.rejects(settlesWithin(reader.findByConversationId('c'), 3000, 'the next read'), /connection timeout/);

    const inFlight = closing.findByConversationId('c');
    inFlight.catch(() => {});
    // Sent, waiting for its reply.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closeStarted = performance.now();
    await settlesWithin(closing.close(), 3000, 'close()');
    const closeTook = performance.now() - closeStarted;
    assert.ok(closeTook < 1500, `close() took ${Math.round(closeTook)} ms`);
    await assert.rejects(settlesWithin(inFlight, 1000, 'the read in flight'), noReply);
  });

  test('a call close() gave up on before the pool gave it a connection fails saying the repository has been closed; nothing was sent', async () => {
    const target = new URL(connectionString);
    const relay = await stalling({ host: target.hostname, port: Number(target.port) });
    const repository = new PostgresChatMemoryRepository({
      connectionString: relay.address(connectionString),
      tableName: table(),
      connectTimeoutMs: 1500,
      timeoutMs: 300,
    });
    cleanups.push(() => repository.close());
    await repository.append('c', [userText('kept')]);
    relay.stall();
    // The pool's 10 connections: the idle one (its read times out), 9 being made (never, while stalled). The appends
    // wait in the pool's queue: the first gets the connection the timed-out read gave up, the last none before close().
    const reads = Array.from({ length: 10 }, () => repository.findByConversationId('c'));
    const appends = [repository.append('c', [userText('maybe')]), repository.append('c', [userText('never sent')])];
    const calls = [...reads, ...appends];
    for (const call of calls) call.catch(() => {});
    await settlesWithin(repository.close(), 1000, 'close()');
    await assert.rejects(settlesWithin(appends[1]!, 3000, 'the queued append'), closedRefusal);
    await settlesWithin(Promise.allSettled(calls), 3000, 'the other calls');
  });

  test('close() lets go of connections the stalled server never closes: the process exits by itself', async () => {
    const worker = spawn(process.execPath, [path.join(import.meta.dirname, 'test-support', 'stalled-close-worker.ts')], {
      env: { ...process.env, WORKER_DATABASE_URL: connectionString, WORKER_TABLE: table() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));
    try {
      const code = await settlesWithin(exited, 5000, 'the worker process');
      assert.equal(code, 0, output);
      const closedIn = Number(/closed in (\d+)/.exec(output)?.[1]);
      assert.ok(closedIn < 1500, output);
    } finally {
      worker.kill();
    }
  });
});
