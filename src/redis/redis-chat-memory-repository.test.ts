import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES } from 'redis';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ChatMemoryStoreError } from '../memory/chat-memory-errors.ts';
import { chatMemoryRepositoryContract } from '../memory/test-support/chat-memory-repository-contract.ts';
import { userText } from '../memory/test-support/sample-messages.ts';
import { killProcess, requireRedis, startDedicatedRedis, testRedisUrl, unusedPort } from '../test-support/services.ts';
import { RedisChatMemoryRepository } from './redis-chat-memory-repository.ts';
import { stallingServer, type StallingServer } from '../test-support/stalling-server.ts';
import { settlesWithin } from '../test-support/settles-within.ts';
import { assertRefusedWhenClosed, closedRefusal } from '../memory/test-support/closed-repository.ts';

const url = testRedisUrl();

/** A key prefix no other test run uses. */
function uniquePrefix(): string {
  return `governor-test:${randomBytes(6).toString('hex')}:`;
}

async function deleteKeys(...prefixes: string[]): Promise<void> {
  if (prefixes.length === 0) return;
  const client = createClient({ url, socket: { connectTimeout: 2000, reconnectStrategy: false } });
  await client.connect();
  try {
    for (const prefix of prefixes) {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
}

chatMemoryRepositoryContract('RedisChatMemoryRepository', async () => {
  await requireRedis(url);
  const keyPrefix = uniquePrefix();
  const handles: RedisChatMemoryRepository[] = [];
  return {
    // Each handle has its own connection: the concurrent writers are separate clients, as replicas would be.
    open: async () => {
      const repository = new RedisChatMemoryRepository({ url, keyPrefix, connectTimeoutMs: 2000 });
      handles.push(repository);
      return repository;
    },
    cleanup: async () => {
      await Promise.all(handles.map((handle) => handle.close()));
      await deleteKeys(keyPrefix);
    },
  };
});

describe('RedisChatMemoryRepository', () => {
  const prefixes: string[] = [];
  const prefix = (): string => {
    const value = uniquePrefix();
    prefixes.push(value);
    return value;
  };

  before(() => requireRedis(url));
  after(() => deleteKeys(...prefixes));

  test('stores one list per conversation and a set of conversation ids under the prefix', async () => {
    const keyPrefix = prefix();
    await using repository = new RedisChatMemoryRepository({ url, keyPrefix });
    await repository.append('c1', [userText('a'), userText('b')]);

    const client = createClient({ url });
    await client.connect();
    try {
      assert.equal(await client.lLen(`${keyPrefix}messages:c1`), 2);
      assert.deepStrictEqual(await client.sMembers(`${keyPrefix}conversations`), ['c1']);
      await repository.deleteByConversationId('c1');
      assert.equal(await client.exists([`${keyPrefix}messages:c1`, `${keyPrefix}conversations`]), 0);
    } finally {
      await client.close();
    }
  });

  test('works on a client it is given (RESP 2 too), connects it if needed, and leaves it open on close', async () => {
    const client = createClient({ url, RESP: 2 });
    client.on('error', () => {});
    try {
      const keyPrefix = prefix();
      const repository = new RedisChatMemoryRepository({ client, keyPrefix });
      await Promise.all([repository.saveAll('c', [userText('hello')]), repository.findConversationIds()]);
      await repository.close();
      assert.equal(client.isOpen, true);
      assert.equal(await client.lLen(`${keyPrefix}messages:c`), 1);
      // Closed is closed, whoever owns the client: another repository on it reads what this one wrote.
      await assert.rejects(repository.findByConversationId('c'), closedRefusal);
      assert.deepStrictEqual(await new RedisChatMemoryRepository({ client, keyPrefix }).findByConversationId('c'), [userText('hello')]);
    } finally {
      await client.close();
    }
  });

  test('a RESP3 client whose type mapping reads sets as Set lists the conversations too', async () => {
    const client = createClient({ url, RESP: 3 }).withTypeMapping({ [RESP_TYPES.SET]: Set });
    client.on('error', () => {});
    try {
      const repository = new RedisChatMemoryRepository({ client, keyPrefix: prefix() });
      await repository.append('b', [userText('hello')]);
      await repository.append('a', [userText('hi')]);
      assert.deepEqual(await repository.findConversationIds(), ['a', 'b']);
      assert.deepStrictEqual(await repository.findByConversationId('a'), [userText('hi')]);
    } finally {
      await client.close();
    }
  });

  test('once closed, every call fails saying so, and no connection is made again', async () => {
    const port = await unusedPort();
    const server = await startDedicatedRedis(port);
    const admin = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
    admin.on('error', () => {});
    try {
      await admin.connect();
      const repository = new RedisChatMemoryRepository({ url: `redis://127.0.0.1:${port}` });
      await repository.append('c', [userText('kept')]);
      await repository.close();
      await assertRefusedWhenClosed(repository);
      // The admin's connection alone: an open socket of the repository's would keep the process from exiting.
      assert.match(await admin.info('clients'), /^connected_clients:1\r?$/m);
      // Nothing refused was written: the append before close() is all there is.
      assert.equal(await admin.lLen('governor:chat-memory:messages:c'), 1);
    } finally {
      admin.destroy();
      await killProcess(server);
    }
  });

  test('calls made before close() finish first, also one still waiting for the connection; close() then closes the client', async () => {
    const keyPrefix = prefix();
    const connected = new RedisChatMemoryRepository({ url, keyPrefix });
    await connected.findConversationIds();
    const calls = [connected.append('c', [userText('one')]), connected.findConversationIds(), connected.append('c', [userText('two')])];
    await settlesWithin(connected.close(), 2000, 'close()');
    await settlesWithin(Promise.all(calls), 1000, 'the calls');
    await assert.rejects(connected.findByConversationId('c'), closedRefusal);

    // A repository that has not connected yet: its first call is making the connection when close() is called.
    const fresh = new RedisChatMemoryRepository({ url, keyPrefix });
    const first = fresh.append('c', [userText('three')]);
    await settlesWithin(fresh.close(), 2000, 'close()');
    await settlesWithin(first, 1000, 'the first call');

    await using reader = new RedisChatMemoryRepository({ url, keyPrefix });
    assert.deepStrictEqual(await reader.findByConversationId('c'), [userText('one'), userText('two'), userText('three')]);
  });

  test('a call its client refused as closed was never sent: its error does not say it may have been applied', async () => {
    const client = createClient({ url });
    client.on('error', () => {});
    await client.connect();
    const repository = new RedisChatMemoryRepository({ client, keyPrefix: prefix() });
    await repository.findConversationIds();
    const write = repository.append('c', [userText('never sent')]);
    // The owner closes its client while the call is on its way to it.
    await client.close();
    await assert.rejects(settlesWithin(write, 2000, 'the write'), (error: unknown) => {
      assert.ok(ChatMemoryStoreError.isInstance(error), String(error));
      assert.match(error.message, /The client is closed/);
      assert.equal(error.mayBeApplied, false, error.message);
      assert.doesNotMatch(error.message, /may still have been applied/);
      return true;
    });
  });

  test('an unreachable server fails the call with a store error naming the server, without the password', async () => {
    const repository = new RedisChatMemoryRepository({ url: 'redis://:s3cret@127.0.0.1:1', connectTimeoutMs: 2000 });
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(repository.append('c', [userText('lost')]), (error: unknown) => {
        assert.ok(error instanceof ChatMemoryStoreError);
        assert.match(error.message, /Redis at 127\.0\.0\.1:1/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      });
    }
    await repository.close();
  });

  test('bad options are rejected at construction, naming the option', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => new RedisChatMemoryRepository({}), 'url'],
      [() => new RedisChatMemoryRepository({ url, client: createClient() }), 'client'],
      [() => new RedisChatMemoryRepository({ url, keyPrefix: '' }), 'keyPrefix'],
      [() => new RedisChatMemoryRepository({ url, connectTimeoutMs: -5 }), 'connectTimeoutMs'],
      [() => new RedisChatMemoryRepository({ url, timeoutMs: 0 }), 'timeoutMs'],
      [() => new RedisChatMemoryRepository({ url, timeoutMs: Number.NaN }), 'timeoutMs'],
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option);
    }
  });
});

describe('RedisChatMemoryRepository against a server that stalls', () => {
  const prefixes: string[] = [];
  const prefix = (): string => {
    const value = uniquePrefix();
    prefixes.push(value);
    return value;
  };
  const cleanups: (() => Promise<unknown>)[] = [];

  before(() => requireRedis(url));
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    await deleteKeys(...prefixes);
  });

  /** A server that answers nothing (see stallingServer), closed after the tests. */
  async function stalling(upstream?: { host: string; port: number }): Promise<StallingServer> {
    const server = await stallingServer(upstream);
    cleanups.push(() => server.close());
    return server;
  }

  /** The call failed for want of a reply; `mayBeApplied`: whether its error says the write may have been applied. */
  const noReply =
    (ms: number, mayBeApplied = false) =>
    (error: unknown) => {
      assert.ok(error instanceof ChatMemoryStoreError, String(error));
      assert.equal(error.code, 'GOVERNOR_CHAT_MEMORY_STORE');
      assert.match(error.message, new RegExp(`no reply within ${ms} ms`));
      assert.equal(error.mayBeApplied, mayBeApplied, error.message);
      assert.equal(/may still have been applied/.test(error.message), mayBeApplied, error.message);
      return true;
    };

  test('a server that never answers fails each call after connectTimeoutMs, and close() returns', async () => {
    const silent = (await stalling()).address('redis://127.0.0.1');
    const repository = new RedisChatMemoryRepository({ url: silent, connectTimeoutMs: 300 });
    const calls: (() => Promise<unknown>)[] = [() => repository.findByConversationId('c'), () => repository.append('c', [userText('lost')])];
    for (const call of calls) {
      const started = performance.now();
      await assert.rejects(settlesWithin(call(), 2000, 'the call'), noReply(300));
      assert.ok(performance.now() - started < 1000, 'bounded by connectTimeoutMs');
    }
    await settlesWithin(repository.close(), 2000, 'close()');
  });

  test('a write that timed out while connecting sent nothing: its error does not say it may have been applied', async () => {
    const silent = (await stalling()).address('redis://127.0.0.1');
    const repository = new RedisChatMemoryRepository({ url: silent, connectTimeoutMs: 2000, timeoutMs: 300 });
    await assert.rejects(settlesWithin(repository.append('c', [userText('lost')]), 2000, 'the append'), noReply(300, false));
    await settlesWithin(repository.close(), 2000, 'close()');
  });

  test('a server that stops answering fails reads and writes after timeoutMs, and close() returns within about timeoutMs', async () => {
    const target = new URL(url);
    const proxy = await stalling({ host: target.hostname, port: Number(target.port) });
    const repository = new RedisChatMemoryRepository({ url: proxy.address(url), keyPrefix: prefix(), timeoutMs: 300 });
    await repository.append('c', [userText('kept')]);
    proxy.stall();
    // The writes went to the server, which would apply them should it resume: their errors say so.
    const calls: [() => Promise<unknown>, boolean][] = [
      [() => repository.findByConversationId('c'), false],
      [() => repository.findConversationIds(), false],
      [() => repository.append('c', [userText('maybe')]), true],
      [() => repository.saveAll('c', [userText('maybe')]), true],
      [() => repository.deleteByConversationId('c'), true],
    ];
    for (const [call, mayBeApplied] of calls) {
      const started = performance.now();
      await assert.rejects(settlesWithin(call(), 2000, 'the call'), noReply(300, mayBeApplied));
      assert.ok(performance.now() - started < 1000, 'bounded by timeoutMs');
    }
    const started = performance.now();
    await settlesWithin(repository.close(), 2000, 'close()');
    assert.ok(performance.now() - started < 1000, 'bounded by timeoutMs');
  });

  test('a write whose connection dropped after it was sent may have been applied: its error says so; a read does not', async () => {
    const target = new URL(url);
    const proxy = await stallingServer({ host: target.hostname, port: Number(target.port) });
    const repository = new RedisChatMemoryRepository({ url: proxy.address(url), keyPrefix: prefix(), timeoutMs: 5000 });
    cleanups.push(() => repository.close());
    await repository.append('c', [userText('kept')]);
    proxy.stall();
    const write = repository.append('c', [userText('maybe')]).then(
      () => assert.fail('the write must fail'),
      (e: unknown) => e,
    );
    const read = repository.findByConversationId('c').then(
      () => assert.fail('the read must fail'),
      (e: unknown) => e,
    );
    // Both are with the server (held in the relay) when the connection drops.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await proxy.close();
    const [written, readError] = await Promise.all([settlesWithin(write, 3000, 'the write'), settlesWithin(read, 3000, 'the read')]);
    assert.ok(ChatMemoryStoreError.isInstance(written), String(written));
    assert.doesNotMatch(written.message, /no reply within/);
    assert.equal(written.mayBeApplied, true, written.message);
    assert.ok(ChatMemoryStoreError.isInstance(readError), String(readError));
    assert.equal(readError.mayBeApplied, false);
  });

  test('a client passed in is bounded by timeoutMs too, and left open on close', async () => {
    const silent = (await stalling()).address('redis://127.0.0.1');
    const client = createClient({ url: silent, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    cleanups.push(async () => client.destroy());
    const repository = new RedisChatMemoryRepository({ client, timeoutMs: 300 });
    await assert.rejects(settlesWithin(repository.findByConversationId('c'), 2000, 'the call'), noReply(300));
    await settlesWithin(repository.close(), 2000, 'close()');
    assert.equal(client.isOpen, true);
  });
});

describe('RedisChatMemoryRepository against a server that refuses the handshake', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  /** A server of the test's own that requires a password, and its admin client (in already). */
  async function guarded() {
    const port = await unusedPort();
    const server = await startDedicatedRedis(port);
    cleanups.push(() => killProcess(server));
    const admin = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
    admin.on('error', () => {});
    await admin.connect();
    cleanups.push(async () => admin.destroy());
    await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'the-real-one']);
    return { port, server, admin };
  }

  /** Fails the test unless the call fails within a second, and says what it failed with. */
  async function failsAtOnce(call: () => Promise<unknown>): Promise<string> {
    const started = performance.now();
    const error = await settlesWithin(call(), 10_000, 'the call').then(
      () => assert.fail('the call should fail'),
      (e: unknown) => e,
    );
    const took = performance.now() - started;
    assert.ok(ChatMemoryStoreError.isInstance(error), String(error));
    assert.ok(took < 1000, `took ${Math.round(took)} ms: ${error.message}`);
    assert.doesNotMatch(error.message, /no reply within|the-real-one|another-one|Wr0ngPassw0rd/);
    return error.message;
  }

  test('a wrong password fails each call at once, naming the reason', async () => {
    const { port } = await guarded();
    const repository = new RedisChatMemoryRepository({ url: `redis://:Wr0ngPassw0rd@127.0.0.1:${port}` });
    cleanups.push(() => repository.close());
    for (let i = 0; i < 2; i++) assert.match(await failsAtOnce(() => repository.findConversationIds()), /WRONGPASS/);
  });

  test('a password changed while connected is named in the calls that follow, not only "offline"; the calls work again once it is right', async () => {
    const { port, server, admin } = await guarded();
    const repository = new RedisChatMemoryRepository({ url: `redis://:the-real-one@127.0.0.1:${port}`, keyPrefix: uniquePrefix() });
    cleanups.push(() => repository.close());
    const changePassword = async () => {
      await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'another-one']);
      await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
    };
    assert.deepEqual(await repository.findConversationIds(), []);
    await changePassword();
    const said: string[] = [];
    for (let i = 0; i < 4; i++) {
      said.push(await failsAtOnce(() => repository.findConversationIds()));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The first may only see the connection drop; the reconnect's refusal is named from then on.
    assert.match(said.at(-1) ?? '', /WRONGPASS/, said.join('\n'));
    await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'the-real-one']);
    assert.deepEqual(await repository.findConversationIds(), []);

    // Refused again, then the server goes away: connecting anew is a first connection, which reports a refused one at once.
    await changePassword();
    for (let i = 0; i < 4; i++) {
      await failsAtOnce(() => repository.findConversationIds());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await killProcess(server);
    assert.match(await failsAtOnce(() => repository.findConversationIds()), /ECONNREFUSED/);
  });
});
