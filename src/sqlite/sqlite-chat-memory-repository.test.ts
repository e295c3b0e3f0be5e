import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError, MessageDecodingError } from '../memory/chat-memory-errors.ts';
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

test('a stored row that does not decode is reported with the database, the conversation and its position', async () => {
  const path = databaseFile();
  {
    using repository = new SqliteChatMemoryRepository({ path });
    await repository.append('c1', [userText('one'), userText('two'), userText('three')]);
  }
  const database = new DatabaseSync(path);
  try {
    database
      .prepare("UPDATE chat_memory_messages SET message = '{not json' WHERE conversation_id = 'c1' AND seq = (SELECT MIN(seq) + 1 FROM chat_memory_messages)")
      .run();
  } finally {
    database.close();
  }
  using repository = new SqliteChatMemoryRepository({ path });
  await assert.rejects(
    repository.findByConversationId('c1'),
    (error: unknown) =>
      MessageDecodingError.isInstance(error) &&
      error.problem === 'not JSON' &&
      error.message.includes(`SQLite database ${path}, conversation "c1", message 2 of 3`),
  );
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

/** A second connection to `path` that takes the write lock now and gives it up after `ms`. */
function holdWriteLock(path: string, ms: number): { released: Promise<void> } {
  const holder = new DatabaseSync(path);
  holder.exec('BEGIN IMMEDIATE');
  return {
    released: new Promise((resolve) =>
      setTimeout(() => {
        holder.exec('COMMIT');
        holder.close();
        resolve();
      }, ms),
    ),
  };
}

/** How late a timer set now for `ms` fires: how long the event loop stalls meanwhile. */
function timerLateness(ms: number): Promise<number> {
  const start = performance.now();
  return new Promise((resolve) => setTimeout(() => resolve(performance.now() - start - ms), ms));
}

test('waiting for another writer does not block the event loop, and the append then succeeds', async () => {
  const path = databaseFile();
  using repository = new SqliteChatMemoryRepository({ path });
  await repository.append('c', [userText('first')]);

  const lock = holdWriteLock(path, 1000);
  const started = performance.now();
  // Set before the append starts: a synchronous wait may begin inside the call itself.
  const late = timerLateness(50);
  // A synchronous busy wait would freeze this process, the holder's release timer included.
  await repository.append('c', [userText('second')]);
  const lateness = await late;
  await lock.released;
  assert.ok(lateness < 300, `a 50 ms timer fired ${Math.round(lateness)} ms late while the append waited`);
  assert.ok(performance.now() - started >= 900, 'the append waited for the lock');
  assert.deepStrictEqual(await repository.findByConversationId('c'), [userText('first'), userText('second')]);
});

test('a lock held past busyTimeoutMs fails the call with a store error, without blocking meanwhile', async () => {
  const path = databaseFile();
  using repository = new SqliteChatMemoryRepository({ path, busyTimeoutMs: 600 });
  await repository.append('c', [userText('first')]);

  const lock = holdWriteLock(path, 1200);
  const started = performance.now();
  const late = timerLateness(50);
  await assert.rejects(repository.append('c', [userText('too late')]), (error: unknown) => {
    assert.ok(error instanceof ChatMemoryStoreError);
    assert.match(error.message, /failed to append to a conversation: .*locked/);
    return true;
  });
  const waited = performance.now() - started;
  const lateness = await late;
  await lock.released;
  assert.ok(lateness < 300, `a 50 ms timer fired ${Math.round(lateness)} ms late while the append waited`);
  assert.ok(waited >= 580 && waited < 1150, `gave up after ${Math.round(waited)} ms`);
  assert.deepStrictEqual(await repository.findByConversationId('c'), [userText('first')]);
});

test('a database whose schema is current is read without taking the write lock', async () => {
  const path = databaseFile();
  const writer = new SqliteChatMemoryRepository({ path });
  await writer.append('c', [userText('stored')]);
  writer.close();

  const lock = holdWriteLock(path, 300);
  try {
    // busyTimeoutMs 0: the read succeeds only if opening does not wait for the writer.
    using reader = new SqliteChatMemoryRepository({ path, busyTimeoutMs: 0 });
    assert.deepStrictEqual(await reader.findByConversationId('c'), [userText('stored')]);
  } finally {
    await lock.released;
  }
});

test('a read-only database whose schema is current can be read; writes fail with a store error', async () => {
  const path = databaseFile();
  const writer = new SqliteChatMemoryRepository({ path });
  await writer.append('c', [userText('stored')]);
  writer.close();
  // Not in WAL mode, as a copy made by another tool may be: switching it would need a write.
  const database = new DatabaseSync(path);
  database.exec('PRAGMA journal_mode = DELETE');
  database.close();

  // Read-only through the URI rather than file modes, which do not stop root (tests may run
  // as root); SQLite treats a file it may not write the same way.
  using reader = new SqliteChatMemoryRepository({ path: `file:${path}?mode=ro` });
  assert.deepStrictEqual(await reader.findByConversationId('c'), [userText('stored')]);
  assert.deepStrictEqual(await reader.findConversationIds(), ['c']);
  await assert.rejects(reader.append('c', [userText('refused')]), (error: unknown) => {
    assert.ok(error instanceof ChatMemoryStoreError);
    assert.match(error.message, /failed to append to a conversation: .*readonly/);
    return true;
  });
  // The failed write left no transaction open: reading still works.
  assert.deepStrictEqual(await reader.findByConversationId('c'), [userText('stored')]);
});

const SETPRIV = '/usr/bin/setpriv';

test('a WAL database in a directory this process may not write cannot be read: the error says why and what to do', {
  skip: (process.getuid?.() !== 0 || !existsSync(SETPRIV)) && 'needs root and setpriv, to read as another user',
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'governor-sqlite-readonly-'));
  try {
    const path = join(dir, 'chat.db');
    const writer = new SqliteChatMemoryRepository({ path });
    await writer.append('c', [userText('stored')]);
    writer.close();
    // The directory and the file are root's: another user may read them, not create the -wal and -shm files.
    await chmod(dir, 0o755);
    await chmod(path, 0o644);
    const entry = pathToFileURL(join(import.meta.dirname, 'index.ts')).href;
    const script = `const { SqliteChatMemoryRepository } = await import(${JSON.stringify(entry)});
        const reader = new SqliteChatMemoryRepository({ path: ${JSON.stringify(path)} });
        await reader.findByConversationId('c').then(() => console.log('read'), (e) => console.log(e.name, e.message));`;
    const { stdout } = await run(SETPRIV, ['--reuid=65534', '--regid=65534', '--clear-groups', nodeBinary, '--input-type=module', '-e', script]);
    assert.match(
      stdout,
      /^ChatMemoryStoreError .*failed to read a conversation: .*readonly database.*the database is in WAL mode, and SQLite cannot create its -wal and -shm files/,
    );
    assert.match(stdout, /PRAGMA journal_mode = DELETE/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Paths this process has open that start with `prefix`; undefined where /proc is missing. */
function openFiles(prefix: string): string[] | undefined {
  if (!existsSync('/proc/self/fd')) return undefined;
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((file) => file.startsWith(prefix));
}

test('close() releases the database: its files are closed and the WAL is checkpointed and removed', async () => {
  const path = databaseFile();
  const repository = new SqliteChatMemoryRepository({ path });
  await repository.append('c', [userText('stored')]);
  assert.ok(existsSync(`${path}-wal`), 'the database runs in WAL mode');
  assert.notDeepStrictEqual(openFiles(path), []);

  repository.close();
  assert.equal(existsSync(`${path}-wal`), false);
  assert.equal(existsSync(`${path}-shm`), false);
  const open = openFiles(path);
  if (open !== undefined) assert.deepStrictEqual(open, []);
});

test('a write that fails inside its transaction rolls it back: the next write works', async () => {
  const path = databaseFile();
  using repository = new SqliteChatMemoryRepository({ path });
  await repository.append('c', [userText('first')]);
  // Aborts the INSERT but not the transaction around it, which the repository must end itself.
  const database = new DatabaseSync(path);
  database.exec(`CREATE TRIGGER refuse BEFORE INSERT ON chat_memory_messages WHEN NEW.conversation_id = 'refused'
    BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END`);
  database.close();

  await assert.rejects(repository.append('refused', [userText('no')]), /refused by trigger/);
  await repository.append('c', [userText('second')]);
  assert.deepStrictEqual(await repository.findByConversationId('c'), [userText('first'), userText('second')]);
});

test('close() lets the calls already made finish, waiting for another writer, and refuses later ones', async () => {
  const path = databaseFile();
  const repository = new SqliteChatMemoryRepository({ path });
  await repository.append('c', [userText('first')]);
  const lock = holdWriteLock(path, 300);
  const waiting = repository.append('c', [userText('second')]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  repository.close();
  await assert.rejects(repository.append('c', [userText('after close')]), /the repository has been closed/);
  await waiting;
  await lock.released;

  // A first call, still opening the database when close() comes, finishes too.
  const fresh = databaseFile();
  const opening = new SqliteChatMemoryRepository({ path: fresh });
  const first = opening.append('c', [userText('at once')]);
  opening.close();
  await first;

  using reader = new SqliteChatMemoryRepository({ path });
  assert.deepStrictEqual(await reader.findByConversationId('c'), [userText('first'), userText('second')]);
  using freshReader = new SqliteChatMemoryRepository({ path: fresh });
  assert.deepStrictEqual(await freshReader.findByConversationId('c'), [userText('at once')]);
});

test('with node:sqlite turned off (--no-experimental-sqlite), importing the entry point says so, typed', async () => {
  const entry = pathToFileURL(join(import.meta.dirname, 'index.ts')).href;
  const script = `import(${JSON.stringify(entry)}).then(() => console.log('loaded'), (e) => console.log(e.name, e.code, e.message))`;
  const { stdout } = await run(nodeBinary, ['--no-experimental-sqlite', '--input-type=module', '-e', script]);
  assert.match(
    stdout,
    /^UnsupportedRuntimeError GOVERNOR_UNSUPPORTED_RUNTIME agent-governor\/sqlite needs node:sqlite, which this Node\.js has turned off \(--no-experimental-sqlite/,
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
