/**
 * RedisBreakerStore against Redis servers of the tests' own that misbehave:
 * one that is full and refuses writes, one that restarts without
 * persistence, one that stalls and resumes, one that refuses the
 * handshake, one that never answers.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient } from 'redis';
import { AgentBreaker, type BreakerHealth } from '../breaker/agent-breaker.ts';
import type { BreakerEventRecord } from '../breaker/breaker-events.ts';
import { BreakerDriver } from '../breaker/test-support/breaker-driver.ts';
import { health, healthHandler } from '../telemetry/index.ts';
import { killProcess, requireRedis, startDedicatedRedis, testRedisUrl, unusedPort } from '../test-support/services.ts';
import { RedisBreakerStore } from './redis-breaker-store.ts';
import { settlesWithin } from '../test-support/settles-within.ts';

const servers = new Set<ChildProcess>();
const closers: (() => Promise<unknown>)[] = [];

async function dedicated(config: readonly string[] = []) {
  const port = await unusedPort();
  const server = await startDedicatedRedis(port, config);
  servers.add(server);
  const url = `redis://127.0.0.1:${port}`;
  const admin = createClient({ url, socket: { reconnectStrategy: () => 100 } });
  admin.on('error', () => {});
  await admin.connect();
  closers.push(() => admin.close().catch(() => admin.destroy()));
  return { port, url, server, admin };
}

/** Kills the server and starts a new one, without persistence, on the same port. */
async function restart(server: ChildProcess, port: number): Promise<ChildProcess> {
  servers.delete(server);
  await killProcess(server);
  const next = await startDedicatedRedis(port);
  servers.add(next);
  return next;
}

function storeOn(url: string, keyPrefix = 'governor:faults:'): RedisBreakerStore {
  const store = new RedisBreakerStore({ url, keyPrefix, timeoutMs: 1000 });
  closers.push(() => store.close());
  return store;
}

function breakerOn(store: RedisBreakerStore): AgentBreaker {
  return new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store });
}

const repeatedCall = { kind: 'tool_call' as const, tool: 'get_status', args: { job: 'build' }, result: 'queued' };

/** Trips the session: the same status call until the breaker stops it. */
async function trip(breaker: AgentBreaker, sessionId: string): Promise<void> {
  for (let i = 0; i < 6; i++) await breaker.observe(sessionId, repeatedCall);
  assert.equal((await breaker.snapshot(sessionId)).state, 'OPEN');
}

/** Waits until `probe` resolves (the store's client reconnects in the background). */
async function eventually<T>(probe: () => Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await probe();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Health once the store answers again. */
async function healthWhenUp(breaker: AgentBreaker): Promise<BreakerHealth> {
  return eventually(async () => {
    const h = await breaker.health();
    if (h.status !== 'ok') throw new Error(h.storeError);
    return h;
  }, 'the store never answered again');
}

before(async () => {
  await requireRedis(testRedisUrl());
});

after(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  for (const server of servers) {
    try {
      // A server left stopped by a failed test.
      if (server.pid !== undefined && server.exitCode === null) process.kill(server.pid, 'SIGCONT');
    } catch {
      // gone already
    }
    await killProcess(server);
  }
});

describe('a Redis that refuses writes', () => {
  test('a full Redis (noeviction) is DOWN in health while it refuses writes, and UP once it takes them again', async () => {
    const { url, admin } = await dedicated();
    const breaker = breakerOn(storeOn(url));
    const handler = healthHandler({ breakers: { shared: breaker } });
    await breaker.observe('s', { kind: 'user', text: 'hello' });
    assert.equal((await breaker.health()).status, 'ok');

    await admin.configSet({ maxmemory: '1', 'maxmemory-policy': 'noeviction' });
    for (let i = 0; i < 20; i++) assert.equal((await breaker.observe('s', repeatedCall)).action, 'allow', 'fail-open');
    const full = await breaker.health();
    assert.equal(full.status, 'degraded');
    assert.equal(full.storeReachable, false);
    assert.equal(full.unjudged, 20);
    assert.match(full.storeError ?? '', /OOM command not allowed/);
    // Asking twice changes nothing: the listing health makes does not clear the refusal.
    assert.equal((await breaker.health()).status, 'degraded');
    const response = await handler(new Request('http://localhost/health'));
    assert.equal(response.status, 503);
    const report = (await response.json()) as { components: Record<string, { status: string; details: Record<string, unknown> }> };
    assert.equal(report.components['shared']?.status, 'DOWN');
    assert.match(String(report.components['shared']?.details['error']), /OOM/);

    await admin.configSet('maxmemory', '0');
    const back = await breaker.health();
    assert.equal(back.status, 'ok');
    assert.equal(back.storeReachable, true);
    assert.match(back.lastStoreError ?? '', /OOM/, 'why the 20 were not judged');
    assert.equal((await handler(new Request('http://localhost/health'))).status, 200);
    assert.equal((await breaker.observe('s', { kind: 'user', text: 'again' })).action, 'allow');
    const after = await breaker.health();
    assert.deepEqual([after.status, after.unjudged], ['ok', 20]);
    assert.equal((await breaker.snapshot('s')).counters.events, 2, 'the refused events were not recorded');
    assert.deepEqual(await admin.keys('*write-probe*'), [], "health's write keeps nothing");
  });

  test("a full Redis (noeviction) refuses a new session's first event too: nothing is written past maxmemory", async () => {
    const { url, admin } = await dedicated();
    const breaker = breakerOn(storeOn(url));
    await breaker.observe('warm-up', { kind: 'user', text: 'hello' });
    await admin.configSet({ maxmemory: '1', 'maxmemory-policy': 'noeviction' });
    const keys = (await admin.keys('*')).length;
    for (let i = 0; i < 5; i++) assert.equal((await breaker.observe(`new-${i}`, repeatedCall)).action, 'allow', 'fail-open');
    assert.equal((await breaker.health()).unjudged, 5);
    assert.equal((await admin.keys('*')).length, keys, 'no key of a new session was written');
    await admin.configSet('maxmemory', '0');
  });

  test('a read-only replica is DOWN in health: every breaker write would be refused', async () => {
    const primary = await dedicated();
    // A replica keeps what it receives from the primary in a file of its own: not in the checkout.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'governor-replica-'));
    closers.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const replica = await dedicated(['--replicaof', '127.0.0.1', String(primary.port), '--dir', dir]);
    const breaker = breakerOn(storeOn(replica.url));
    const h = await breaker.health();
    assert.equal(h.status, 'degraded');
    assert.match(h.storeError ?? '', /READONLY/);
    assert.equal((await health({ breakers: { replica: breaker } })).status, 'DOWN');
  });
});

describe('a Redis restart without persistence', () => {
  test('the sessions that may not be forgotten are written back at once: every replica refuses the open one, listed as open', async () => {
    const { port, url } = await dedicated();
    let server = [...servers].at(-1)!;
    const prefix = `governor:faults:${randomUUID()}:`;
    const a = breakerOn(storeOn(url, prefix));
    const warnings: BreakerEventRecord[] = [];
    a.on((e) => e.type === 'warning' && warnings.push(e));
    await trip(a, 'tripped');
    await a.observe('calm', { kind: 'user', text: 'hello' });
    // No health check before the restart.
    server = await restart(server, port);

    // The store's client reconnects by itself, finds the server restarted, and writes the trip back.
    const observer = storeOn(url, prefix);
    const open = await eventually(async () => {
      const listed = await observer.listOpen();
      if (listed.length === 0) throw new Error('not written back yet');
      return listed;
    }, 'the open session was not written back');
    assert.deepEqual(open, ['tripped']);
    assert.deepEqual(await a.openSessions(), ['tripped']);
    const h = await healthWhenUp(a);
    assert.deepEqual([h.open, h.storeRestarted, h.sessionsLost], [['tripped'], true, 1]);

    // A replica that never saw the session refuses it.
    const b = breakerOn(storeOn(url, prefix));
    const gate = await b.checkModelCall('tripped');
    assert.equal(gate.action, 'stop');
    assert.equal(gate.category, 'tool_spiral');
    assert.deepEqual(await b.openSessions(), ['tripped']);

    // A session that may be forgotten is written back with its next write, and only then counted.
    const admin = createClient({ url });
    admin.on('error', () => {});
    await admin.connect();
    closers.push(() => admin.close());
    assert.equal(await admin.exists(`${prefix}session:calm`), 0);
    await a.observe('calm', { kind: 'user', text: 'still there?' });
    assert.equal((await b.snapshot('calm')).counters.userEvents, 2);
    assert.equal((await a.health()).sessionsLost, 2);
    // Each under its own session: the trip written back at the reconnect too, before any call of its own.
    const forgotten = warnings.filter((w) => w.code === 'session_restored');
    assert.deepEqual(forgotten.map((w) => w.sessionId).sort(), ['calm', 'tripped']);
    assert.match(forgotten[0]?.message ?? '', /forgotten this session.*restored from this process/);
  });

  test("on a client of the user's (no reconnect hook), openSessions notices the restart and writes the trip back", async () => {
    const { port, url } = await dedicated();
    let server = [...servers].at(-1)!;
    const prefix = `governor:faults:${randomUUID()}:`;
    const client = createClient({ url, socket: { reconnectStrategy: () => 100 } });
    client.on('error', () => {});
    await client.connect();
    closers.push(() => client.close().catch(() => client.destroy()));
    const store = new RedisBreakerStore({ client, keyPrefix: prefix, timeoutMs: 1000 });
    const a = breakerOn(store);
    await trip(a, 'tripped');
    await a.snapshot('tripped');
    server = await restart(server, port);
    await eventually(() => client.ping(), 'the client never reconnected');

    assert.deepEqual(await a.openSessions(), ['tripped']);
    assert.equal(store.status().restarted, true);
    assert.equal((await a.health()).storeRestarted, true);
    const b = breakerOn(storeOn(url, prefix));
    assert.equal((await b.checkModelCall('tripped')).action, 'stop');
  });

  test('a restart is reported without a health check before it, also where no session was ever open, also right after the first contact', async () => {
    const { port, url } = await dedicated();
    let server = [...servers].at(-1)!;
    const a = breakerOn(storeOn(url, `governor:faults:${randomUUID()}:`));
    await a.observe('s', { kind: 'user', text: 'hello' });
    // At once: the server's uptime, read in whole seconds, could not tell it; the run id read at the first reply does.
    server = await restart(server, port);
    const h = await healthWhenUp(a);
    assert.equal(h.storeRestarted, true);
    assert.equal(h.sessionsLost, undefined, 'nothing open was lost');
  });

  test('a replica that saw only the start of a session refuses it after the restart, as the replicas that tripped it do', async () => {
    const { port, url } = await dedicated();
    let server = [...servers].at(-1)!;
    const prefix = `governor:faults:${randomUUID()}:`;
    const [one, two, three] = [breakerOn(storeOn(url, prefix)), breakerOn(storeOn(url, prefix)), breakerOn(storeOn(url, prefix))];
    // Replica one serves only the first call; two and three take turns until the breaker stops the session.
    await one.observe('s', repeatedCall);
    for (let i = 0; (await two.snapshot('s')).state !== 'OPEN'; i++) {
      assert.ok(i < 10, 'the session never tripped');
      await (i % 2 === 0 ? two : three).observe('s', repeatedCall);
    }
    server = await restart(server, port);

    // Two and three reconnect, find the server restarted and write the trip back.
    const observer = storeOn(url, prefix);
    await eventually(async () => {
      if ((await observer.listOpen()).length === 0) throw new Error('not written back yet');
    }, 'the open session was not written back');
    for (const replica of [one, two, three, one]) {
      const gate = await replica.checkModelCall('s');
      assert.equal(gate.action, 'stop', 'every replica refuses the stopped session');
    }
    // Replica one's own write is judged against the trip, not against the first call it saw.
    assert.equal((await one.observe('s', { kind: 'user', text: 'try again' })).reason, 'breaker_open');
    const after = await breakerOn(storeOn(url, prefix)).snapshot('s');
    assert.equal(after.state, 'OPEN');
    assert.equal(after.counters.toolCalls, (await two.snapshot('s')).counters.toolCalls);
  });

  test('a stale copy written back first gives way to the trip once a replica that knew it notices the restart, also after it was written to', async () => {
    const { port, url } = await dedicated();
    let server = [...servers].at(-1)!;
    const prefix = `governor:faults:${randomUUID()}:`;
    /** A replica on a client of the user's: it notices the restart only when asked (health), so the order is the test's. */
    const replica = async () => {
      const client = createClient({ url, socket: { reconnectStrategy: () => 100 } });
      client.on('error', () => {});
      await client.connect();
      closers.push(() => client.close().catch(() => client.destroy()));
      return { client, breaker: breakerOn(new RedisBreakerStore({ client, keyPrefix: prefix, timeoutMs: 1000 })) };
    };
    const stale = await replica();
    const knowing = await replica();
    // 'read' the stale replica only reads after the restart; 'written' it writes to as well.
    for (const session of ['read', 'written']) {
      await stale.breaker.observe(session, repeatedCall);
      await trip(knowing.breaker, session);
    }
    server = await restart(server, port);
    await eventually(() => Promise.all([stale.client.ping(), knowing.client.ping()]), 'the clients never reconnected');

    // The stale replica comes first: it writes back the little it knew (and lets the calls through: it knows no better).
    assert.equal((await stale.breaker.checkModelCall('read')).action, 'allow');
    assert.equal((await stale.breaker.checkModelCall('written')).action, 'allow');
    await stale.breaker.observe('written', { kind: 'user', text: 'one more try' });
    const h = await healthWhenUp(knowing.breaker);
    assert.equal(h.storeRestarted, true);

    for (const session of ['read', 'written']) {
      for (const b of [stale.breaker, knowing.breaker, breakerOn(storeOn(url, prefix))]) {
        assert.equal((await b.checkModelCall(session)).action, 'stop', `${session}: every replica refuses the session again`);
      }
      const stored = await breakerOn(storeOn(url, prefix)).snapshot(session);
      assert.equal(stored.state, 'OPEN', session);
    }
    // The user turn the stale replica logged after the restart is kept in the trip written back.
    assert.equal((await breakerOn(storeOn(url, prefix)).snapshot('written')).counters.userEvents, 1);
    assert.deepEqual(await knowing.breaker.openSessions(), ['read', 'written']);
  });

  test('an open session the server forgot (evicted, say) is written back by the read that finds it', async () => {
    const url = testRedisUrl();
    const prefix = `governor:faults:${randomUUID()}:`;
    const admin = createClient({ url });
    admin.on('error', () => {});
    await admin.connect();
    closers.push(async () => {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(keys);
      await admin.close();
    });
    const a = breakerOn(storeOn(url, prefix));
    await trip(a, 'tripped');
    // The first gate gives the trip's own stop (a write); later ones refuse as the open breaker, reading only.
    assert.equal((await a.checkModelCall('tripped')).reason, 'detection');
    await admin.del([`${prefix}session:tripped`, `${prefix}log:tripped`, `${prefix}open-until`]);
    assert.equal((await a.checkModelCall('tripped')).reason, 'breaker_open');
    const b = breakerOn(storeOn(url, prefix));
    assert.equal((await b.checkModelCall('tripped')).action, 'stop');
    assert.deepEqual(await b.openSessions(), ['tripped']);
    assert.equal((await a.health()).sessionsLost, 1);
  });
});

describe('a Redis that stalls and resumes', () => {
  test('a stalled Redis costs one timeout, not one per operation: while it is known not to answer every operation fails at once, and it recovers by itself', async () => {
    const { url, server } = await dedicated();
    const store = storeOn(url, `governor:faults:${randomUUID()}:`);
    const breaker = breakerOn(store);
    await breaker.observe('s', { kind: 'user', text: 'hello' });
    const warnings: string[] = [];
    breaker.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
    /** What a proxied request asks of the store, one operation after another (see the model proxy). */
    const request = async () => {
      const started = performance.now();
      const decisions = [
        (await breaker.checkModelCall('s')).action,
        (await breaker.observe('s', { kind: 'model', text: 'calling a tool', promptTokens: 10, completionTokens: 5 })).action,
        (await breaker.checkToolCall('s', { tool: 'read_file', args: { path: 'a.ts' } })).action,
        (await breaker.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: 'a.ts' }, result: 'x' })).action,
        await store.takeSteers('s').then(
          () => 'answered',
          (e: unknown) => String(e),
        ),
        await store.claimFirst('s', ['k']).then(
          () => 'answered',
          (e: unknown) => String(e),
        ),
      ];
      return { decisions, ms: performance.now() - started };
    };

    process.kill(server.pid!, 'SIGSTOP');
    try {
      const first = await request();
      assert.deepEqual(first.decisions.slice(0, 4), ['allow', 'allow', 'allow', 'allow'], 'fail-open, unchanged');
      assert.ok(first.ms < 2000, `six operations took ${Math.round(first.ms)} ms: one timeout (1000 ms), not one each`);
      assert.match(first.decisions[5] ?? '', /BreakerStoreError: Breaker store claimFirst failed: not sent: the server is not answering/);
      assert.match(warnings[0] ?? '', /no reply within 1000 ms/);
      assert.match(warnings[1] ?? '', /not sent/);
      const h = await breaker.health();
      assert.deepEqual([h.status, h.storeReachable], ['degraded', false]);
      assert.match(h.storeError ?? '', /GOVERNOR_BREAKER_STORE: Breaker store ping failed: not sent/);

      // Once the window has passed, one operation is sent to try again; the others still fail at once until it settles.
      for (;;) {
        const tried = store.listOpen().then(
          () => 'answered',
          (e: unknown) => String(e),
        );
        const meanwhile = await store.listOpen().then(
          () => 'answered',
          (e: unknown) => String(e),
        );
        assert.match(meanwhile, /not sent/);
        const outcome = await tried;
        if (/not sent/.test(outcome)) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        assert.match(outcome, /listOpen failed: no reply within 1000 ms/);
        assert.match(meanwhile, /an operation sent since to try again has no reply yet/);
        break;
      }
    } finally {
      process.kill(server.pid!, 'SIGCONT');
    }
    // The server answers again: the store notices by itself, and judges again.
    const back = await healthWhenUp(breaker);
    assert.equal(back.storeReachable, true);
    const unjudged = back.unjudged;
    assert.deepEqual((await request()).decisions, ['allow', 'allow', 'allow', 'allow', 'answered', 'answered']);
    assert.equal((await breaker.health()).unjudged, unjudged);
  });

  test('an append the store stopped waiting for is not applied when the server resumes: unjudged counts it, and the ladder goes on from what was judged', async () => {
    const { url, server } = await dedicated();
    const breaker = breakerOn(storeOn(url));
    const driver = new BreakerDriver(breaker, 'stalled');
    const call = () => driver.tool('search', { q: 'the same thing' }, 'no results');
    const decisions: string[] = [];
    decisions.push((await call()).decision.action);

    process.kill(server.pid!, 'SIGSTOP');
    try {
      for (let i = 0; i < 3; i++) decisions.push((await call()).decision.action);
    } finally {
      process.kill(server.pid!, 'SIGCONT');
    }
    assert.deepEqual(decisions, ['allow', 'allow', 'allow', 'allow'], 'fail-open while the server does not answer');
    assert.equal((await breaker.health()).unjudged, 6, 'three checks and three observations');
    // Known not to answer, the store fails at once until the server answers again: health shows when it does.
    await healthWhenUp(breaker);

    // The calls go over the same connection as the appends the server held: it runs those first.
    for (let i = 0; i < 5 && decisions.at(-1) !== 'stop'; i++) decisions.push((await call()).decision.action);
    const after = decisions.slice(4);
    assert.deepEqual(after, ['allow', 'steer', 'block', 'stop'], `the ladder after the stall: ${after.join(' ')}`);
    const snapshot = await breaker.snapshot('stalled');
    // Recorded: the call before the stall and the two observed after it; none of the three let through unjudged.
    assert.equal(snapshot.counters.toolCalls, 3);
    const h = await breaker.health();
    assert.equal(h.unjudged, 6);
    assert.equal(h.status, 'ok');
  });
});

test("an append given up on is not applied when the server resumes, also when it is the process's first: the server's clock is read before it", async () => {
  const { url, server } = await dedicated();
  // Another replica has written, so the server holds the append script: held appends would run as they are.
  await breakerOn(storeOn(url)).observe('warm-up', { kind: 'user', text: 'hello' });
  const breaker = breakerOn(storeOn(url));
  // This replica's first operation is a read (the gate of a model round): it learns nothing of the server's clock.
  assert.equal((await breaker.checkModelCall('first')).action, 'allow');
  process.kill(server.pid!, 'SIGSTOP');
  try {
    for (let i = 0; i < 2; i++) assert.equal((await breaker.observe('first', repeatedCall)).action, 'allow');
  } finally {
    process.kill(server.pid!, 'SIGCONT');
  }
  assert.equal((await breaker.health()).unjudged, 2);
  await healthWhenUp(breaker);
  assert.equal((await breakerOn(storeOn(url)).snapshot('first')).counters.toolCalls, 0, 'nothing counted as unjudged was recorded');
});

test('a Redis that is not up when the store first connects fails each call at once, starts no stall window, and is used once it is up', async () => {
  const port = await unusedPort();
  const breaker = breakerOn(storeOn(`redis://127.0.0.1:${port}`));
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    assert.equal((await breaker.observe('down', repeatedCall)).action, 'allow');
    assert.ok(performance.now() - started < 500, `call ${i + 1} waited ${Math.round(performance.now() - started)} ms for a refused connection`);
  }
  const down = await breaker.health();
  assert.match(down.storeError ?? '', /ECONNREFUSED/);
  assert.doesNotMatch(down.storeError ?? '', /not answering|no reply within/);
  servers.add(await startDedicatedRedis(port, []));
  await healthWhenUp(breaker);
  await breaker.observe('up', repeatedCall);
  assert.equal((await breaker.snapshot('up')).counters.toolCalls, 1);
});

describe('a Redis that refuses the handshake', () => {
  /** A server that requires a password, with a user that may not SELECT; its admin client is in already. */
  async function guarded() {
    const server = await dedicated();
    await server.admin.sendCommand(['ACL', 'SETUSER', 'limited', 'on', '>limited-pw', '~*', '&*', '+@all', '-select']);
    await server.admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'the-real-one']);
    return server;
  }
  const secrets = /Wr0ngPassw0rd|the-real-one|limited-pw/;
  /** What a timeout says: the server answered, so none of it may appear. */
  const silence = /no reply within|not answering|not sent/;

  test('a wrong or missing password, a database the server lacks, a user who may not SELECT: each call fails at once with the reason, and starts no stall window', async () => {
    const { port, admin } = await guarded();
    const refusals = [
      { url: `redis://default:Wr0ngPassw0rd@127.0.0.1:${port}`, reason: /WRONGPASS/ },
      { url: `redis://127.0.0.1:${port}`, reason: /NOAUTH/ },
      { url: `redis://:the-real-one@127.0.0.1:${port}/999`, reason: /DB index is out of range/ },
      { url: `redis://limited:limited-pw@127.0.0.1:${port}/1`, reason: /NOPERM.*select/ },
    ];
    const breakers: AgentBreaker[] = [];
    for (const { url, reason } of refusals) {
      const store = new RedisBreakerStore({ url, timeoutMs: 5000 });
      closers.push(() => store.close());
      const breaker = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store, onStoreError: 'fail-closed' });
      breakers.push(breaker);
      const said: string[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const gate = await breaker.checkModelCall('s');
        const took = performance.now() - started;
        assert.ok(took < 1000, `${reason.source}, gate ${i + 1}: took ${Math.round(took)} ms, as if the server had not answered`);
        assert.equal(gate.action, 'stop', 'fail-closed');
        assert.match(gate.message ?? '', reason);
        assert.doesNotMatch(gate.message ?? '', silence);
        said.push(gate.message ?? '');
      }
      const h = await breaker.health();
      assert.equal(h.storeReachable, false);
      assert.match(h.storeError ?? '', reason);
      assert.doesNotMatch(h.storeError ?? '', silence);
      assert.doesNotMatch(`${said.join(' ')} ${JSON.stringify(h)}`, secrets);
    }
    // Refused, not given up on: the next call connects anew, and works once the server takes the password.
    await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'Wr0ngPassw0rd']);
    assert.equal((await breakers[0]!.checkModelCall('s')).action, 'allow');
  });

  test('a password changed while connected: calls fail at once naming the reason, and work again once it is right', async () => {
    const { port, admin } = await guarded();
    const store = new RedisBreakerStore({ url: `redis://:the-real-one@127.0.0.1:${port}`, timeoutMs: 5000 });
    closers.push(() => store.close());
    const breaker = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store, onStoreError: 'fail-closed' });
    assert.equal((await breaker.checkModelCall('s')).action, 'allow');
    await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'another-one']);
    await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
    const said: string[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const gate = await breaker.checkModelCall('s');
      assert.ok(performance.now() - started < 1000, `gate ${i + 1} waited`);
      assert.equal(gate.action, 'stop');
      assert.doesNotMatch(gate.message ?? '', silence);
      said.push(gate.message ?? '');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The first may only see the connection drop; the reconnect's refusal is named from then on.
    assert.match(said.at(-1) ?? '', /WRONGPASS/);
    assert.doesNotMatch(said.join(' '), /the-real-one|another-one/);
    await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'the-real-one']);
    assert.equal((await breaker.checkModelCall('s')).action, 'allow');
  });
});

describe('a server that accepts connections but never answers', () => {
  test('close() returns within about timeoutMs, also with an operation in flight, instead of waiting for replies that never come', async () => {
    // Holds every connection open and reads nothing, as a stopped process would; a FIN is not answered either.
    const held = new Set<net.Socket>();
    const silent = net.createServer({ allowHalfOpen: true }, (socket) => {
      held.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const store = new RedisBreakerStore({ url: `redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, timeoutMs: 300 });
    await assert.rejects(store.takeSteers('s'), /no reply within 300 ms/);
    const inFlight = store.takeSteers('s');
    inFlight.catch(() => {});

    const started = performance.now();
    await settlesWithin(store.close(), 2000, 'close()');
    const took = performance.now() - started;
    assert.ok(took < 1000, `close() took ${Math.round(took)} ms`);
    await assert.rejects(settlesWithin(inFlight, 1000, 'the read in flight'), /Breaker store takeSteers failed/);
    await assert.rejects(store.takeSteers('s'), /closed/);
  });
});
