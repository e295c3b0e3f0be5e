import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import { chatMemoryRepositoryContract } from '../memory/test-support/chat-memory-repository-contract.ts';
import { sampleConversation, userText } from '../memory/test-support/sample-messages.ts';
import { SqliteChatMemoryRepository } from './sqlite-chat-memory-repository.ts';

const run = promisify(execFile);
const nodeBinary = join(import.meta.dirname, '../../node_modules/.bin/node');
const writerScript = join(import.meta.dirname, 'test-support/write-conversation.ts');

const scratch = await mkdtemp(join(tmpdir(), 'governor-sqlite-memory-'));
after(() => rm(scratch, { recursive: true, force: true }));
let files = 0;
const databaseFile = (): string => join(scratch, `memory-${++files}.db`);

async function writeInChildProcess(...args: string[]): Promise<void> {
  await run(nodeBinary, ['--disable-warning=ExperimentalWarning', writerScript, ...args]);
}

chatMemoryRepositoryContract('SqliteChatMemoryRepository', async () => {
  // A file, so that every handle is its own connection to one database.
  const path = databaseFile();
  const handles: SqliteChatMemoryRepository[] = [];
  return {
    open: async () => {
      const repository = new SqliteChatMemoryRepository({ path });
      handles.push(repository);
      return repository;
    },
    cleanup: async () => {
      for (const handle of handles) handle.close();
    },
  };
});

test('a conversation written by another process survives into this one (restart)', async () => {
  const path = databaseFile();
  await writeInChildProcess(path, 'restarted', 'sample');

  using repository = new SqliteChatMemoryRepository({ path });
  assert.deepStrictEqual(await repository.findByConversationId('restarted'), sampleConversation());
  assert.deepStrictEqual(await repository.findConversationIds(), ['restarted']);
});

test('writers in several processes at once lose nothing and keep each batch contiguous', async () => {
  const path = databaseFile();
  const processes = 4;
  const batches = 10;
  const size = 3;
  await Promise.all(
    Array.from({ length: processes }, (_, writer) => writeInChildProcess(path, 'shared', 'batches', String(writer), String(batches), String(size))),
  );

  using repository = new SqliteChatMemoryRepository({ path });
  const stored = (await repository.findByConversationId('shared')).map((message) => String(message.content));
  assert.equal(stored.length, processes * batches * size);
  for (let writer = 0; writer < processes; writer++) {
    let previous = -1;
    for (let batch = 0; batch < batches; batch++) {
      const start = stored.indexOf(`w${writer} b${batch} m0`);
      assert.ok(start > previous, `writer ${writer} batch ${batch} comes after the previous one`);
      assert.deepStrictEqual(
        stored.slice(start, start + size),
        Array.from({ length: size }, (_, k) => `w${writer} b${batch} m${k}`),
      );
      previous = start;
    }
  }
});

test('four processes opening the same new database files at once: no first append fails or is lost', async () => {
  const dir = await mkdtemp(join(scratch, 'first-appends-'));
  const processes = 4;
  const files = 60;
  // Every process starts at the same moment and walks the same new files in order, so
  // each file's creation, WAL switch, migration and first append race across processes.
  const startAt = String(Date.now() + 1500);
  await Promise.all(
    Array.from({ length: processes }, (_, writer) => writeInChildProcess(dir, 'first', 'first-appends', String(writer), String(files), startAt)),
  );
  for (let file = 0; file < files; file++) {
    using repository = new SqliteChatMemoryRepository({ path: join(dir, `first-${file}.db`) });
    const stored = (await repository.findByConversationId('first')).map((m) => String(m.content)).sort();
    assert.deepStrictEqual(
      stored,
      Array.from({ length: processes }, (_, w) => `w${w} f${file}`),
    );
  }
});

test("':memory:' gives a private, working database", async () => {
  using first = new SqliteChatMemoryRepository({ path: ':memory:' });
  using second = new SqliteChatMemoryRepository({ path: ':memory:' });
  await first.append('c', [userText('only in the first')]);
  assert.deepStrictEqual(await first.findByConversationId('c'), [userText('only in the first')]);
  assert.deepStrictEqual(await second.findByConversationId('c'), []);
});

test('the schema is created on first use, in WAL mode, with its version recorded', async () => {
  const path = databaseFile();
  const repository = new SqliteChatMemoryRepository({ path });
  await repository.findConversationIds();
  repository.close();

  const database = new DatabaseSync(path);
  try {
    assert.equal(database.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
    const versions = database.prepare('SELECT version FROM chat_memory_schema_migrations').all();
    assert.deepStrictEqual(
      versions.map((row) => row.version),
      [1],
    );
  } finally {
    database.close();
  }
});

test('a database with a newer schema than this library knows is refused, not altered', async () => {
  const path = databaseFile();
  const database = new DatabaseSync(path);
  database.exec('CREATE TABLE chat_memory_schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  database.exec("INSERT INTO chat_memory_schema_migrations VALUES (99, 'later')");
  database.close();

  using repository = new SqliteChatMemoryRepository({ path });
  await assert.rejects(repository.findConversationIds(), (error: unknown) => {
    assert.ok(error instanceof ChatMemoryStoreError);
    assert.match(error.message, /schema is version 99, newer than/);
    return true;
  });
  repository.close();
  const reopened = new DatabaseSync(path);
  const tables = reopened.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
  reopened.close();
  assert.deepStrictEqual(
    tables.map((row) => row.name),
    ['chat_memory_schema_migrations'],
  );
});

test('a closed repository refuses work with a store error', async () => {
  const repository = new SqliteChatMemoryRepository({ path: ':memory:' });
  repository.close();
  await assert.rejects(repository.append('c', [userText('late')]), ChatMemoryStoreError);
});

test('bad options are rejected at construction, naming the option', () => {
  assert.throws(
    () => new SqliteChatMemoryRepository({ path: '' }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError);
      assert.equal(error.option, 'path');
      return true;
    },
  );
  assert.throws(
    () => new SqliteChatMemoryRepository({ path: ':memory:', busyTimeoutMs: -1 }),
    (error: unknown) => error instanceof InvalidOptionError && error.option === 'busyTimeoutMs',
  );
});
