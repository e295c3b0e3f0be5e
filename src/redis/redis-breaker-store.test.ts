import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient, RESP_TYPES } from 'redis';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { BreakerUnavailableError } from '../breaker/breaker-errors.ts';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import type { ModelEvent } from '../breaker/breaker-event.ts';
import type { BreakerEventRecord } from '../breaker/breaker-events.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { health } from '../telemetry/health.ts';
import { killProcess, requireRedis, startDedicatedRedis, testRedisUrl, unusedPort } from '../test-support/services.ts';
import { decodeOp } from '../breaker/op-codec.ts';
import { encodeState } from '../breaker/state-codec.ts';
import { decompressState } from '../breaker/state-compression.ts';
import { BreakerStoreError } from './breaker-store-error.ts';
import { RedisBreakerStore, type RedisCommandClient } from './redis-breaker-store.ts';
import { SCRIPTS } from './session-scripts.ts';

const url = testRedisUrl();
const prefix = `governor:test:${randomUUID()}:`;
let raw: ReturnType<typeof createClient>;

before(async () => {
  await requireRedis(url);
  raw = createClient({ url });
  raw.on('error', () => {});
  await raw.connect();
});

after(async () => {
  if (!raw?.isOpen) return;
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length > 0) await raw.del(keys);
  await raw.close();
});

/** A client that counts the round trips the store makes, and keeps each one's arguments. */
function counting(client: RedisCommandClient): RedisCommandClient & { commands: string[]; args: (readonly unknown[])[] } {
  const commands: string[] = [];
  const sent: (readonly unknown[])[] = [];
  return {
    commands,
    args: sent,
    sendCommand(args, options) {
      commands.push(String(args[0]).toUpperCase());
      sent.push(args);
      return client.sendCommand(args, options);
    },
    // As the client it wraps, so the store sends as it does to that client.
    get isReady() {
      return client.isReady;
    },
  };
}

function store(options: { ttlMs?: number; keyPrefix?: string; client?: RedisCommandClient } = {}): RedisBreakerStore {
  return new RedisBreakerStore({ client: options.client ?? raw, keyPrefix: options.keyPrefix ?? prefix, ...(options.ttlMs ? { ttlMs: options.ttlMs } : {}) });
}

function breakerOn(s: RedisBreakerStore, checkFreshnessMs = 0): AgentBreaker {
  return new AgentBreaker({ telemetry: false, checkFreshnessMs, store: s });
}

/** A session's stored snapshot as the bytes Redis holds. */
async function storedSnapshot(sessionKey: string): Promise<Buffer | undefined> {
  return (await raw.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).hGet(sessionKey, 'snap')) ?? undefined;
}

const modelRound = (i: number) => ({ kind: 'model' as const, promptTokens: 1000 + i, completionTokens: 10, text: `step ${i}` });

describe('RedisBreakerStore', () => {
  test('a replica that never saw the session reads the same state as the one that wrote it', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const writer = breakerOn(store({ keyPrefix }));
    assert.equal((await writer.snapshot('s')).version, undefined);
    for (let i = 0; i < 40; i++) await writer.observe('s', modelRound(i));
    const mine = await writer.snapshot('s');
    const theirs = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(mine.version, 40);
    assert.deepEqual(theirs, mine);
    assert.equal(theirs.counters.modelCalls, 40);
    // The log is folded into a snapshot as it goes: it never holds more than a few operations.
    assert.ok((await raw.lLen(`${keyPrefix}log:s`)) < 16);
  });

  test('operations are folded into the snapshot by size, not only every 16: the log never piles up replies', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const logKey = `${keyPrefix}log:s`;
    const round = (i: number, words: number) => ({ ...modelRound(i), text: Array.from({ length: words }, (_, j) => `w${i}x${j}`).join(' ') });
    const alone = breakerOn(store({ keyPrefix }));
    // ~2.4 KB of new words per reply: more than the log is let hold, so its writer folds it before the event returns.
    for (let i = 0; i < 20; i++) {
      await alone.observe('s', round(i, 300));
      assert.equal(await raw.lLen(logKey), 0, `the log kept reply ${i}`);
    }
    // ~0.4 KB replies: the writer that takes the log past 1 KB folds it, and its snapshot goes with its next append.
    let longest = 0;
    for (let i = 20; i < 60; i++) {
      await alone.observe('s', round(i, 50));
      longest = Math.max(longest, await raw.lLen(logKey));
    }
    assert.ok(longest >= 2 && longest <= 4, `a lone writer's log held ${longest} replies`);
    assert.deepEqual(await breakerOn(store({ keyPrefix })).snapshot('s'), await alone.snapshot('s'));

    // Two writers taking turns: each folds at its own operations (met by the other's, it sends the snapshot with its
    // append after next), and a replica that never wrote reads what they know.
    const other = breakerOn(store({ keyPrefix }));
    longest = 0;
    for (let i = 60; i < 100; i++) {
      await (i % 2 === 0 ? alone : other).observe('s', round(i, i % 4 < 2 ? 50 : 300));
      longest = Math.max(longest, await raw.lLen(logKey));
    }
    assert.ok(longest <= 6, `two writers' log held ${longest} replies`);
    const replica = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(replica.version, 100);
    assert.deepEqual(replica, await other.snapshot('s'));
  });

  test('a snapshot goes with the next append whether the caller waits between events or not', async () => {
    // Waiting, the snapshot is serialised between events; back to back, during the next append's round trip.
    const snapshotsAt: Record<string, string[]> = {};
    for (const pace of ['back to back', 'waiting between events'] as const) {
      const keyPrefix = `${prefix}${randomUUID()}:`;
      const client = counting(raw);
      const writer = breakerOn(store({ keyPrefix, client }));
      let longest = 0;
      for (let i = 0; i < 60; i++) {
        await writer.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: `src/file-${i}.ts` }, result: `line ${i}` });
        longest = Math.max(longest, await raw.lLen(`${keyPrefix}log:s`));
        if (pace === 'waiting between events') await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // An append that carries a snapshot has two arguments more: the snapshot's position and its bytes.
      const appends = client.args.filter((args) => args[1] === SCRIPTS.append.sha1);
      snapshotsAt[pace] = appends.filter((args) => args.length === 14).map((args) => String(args[12]));
      assert.equal(appends.length, 60, pace);
      assert.ok(longest <= 16, `${pace}: the log held ${longest} operations`);
      assert.deepEqual(await breakerOn(store({ keyPrefix })).snapshot('s'), await writer.snapshot('s'), pace);
    }
    // Small operations: the log is folded every 16.
    assert.deepEqual(snapshotsAt['back to back'], ['16', '32', '48']);
    assert.deepEqual(snapshotsAt['waiting between events'], snapshotsAt['back to back']);
  });

  test('a long operation whose fold fails is still applied once, and its snapshot goes with the next append', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const logKey = `${keyPrefix}log:s`;
    let refuse = true;
    const client: RedisCommandClient = {
      sendCommand(args, options) {
        if (refuse && args[0] === 'EVALSHA' && args[1] === SCRIPTS.compact.sha1)
          return Promise.reject(new Error('READONLY You can not write against a read only replica.'));
        return raw.sendCommand(args, options);
      },
    };
    const writer = breakerOn(store({ keyPrefix, client }));
    const long = { ...modelRound(0), text: Array.from({ length: 300 }, (_, j) => `w${j}`).join(' ') };
    const decision = await writer.observe('s', long);
    assert.equal(decision.action, 'allow');
    assert.equal(await raw.lLen(logKey), 1, 'the operation is logged though its fold failed');
    refuse = false;
    await writer.observe('s', modelRound(1));
    assert.equal(await raw.lLen(logKey), 1, 'the next append carried the snapshot: only its own operation is left');
    const replica = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(replica.counters.modelCalls, 2);
    assert.deepEqual(replica, await writer.snapshot('s'));
  });

  test('tool calls are logged in the compact form; a log of plain JSON operations, as older versions wrote, is read the same', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const writer = breakerOn(store({ keyPrefix }));
    for (let i = 0; i < 5; i++) {
      await writer.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: `src/${i % 2}.ts` }, result: `contents ${i % 2}` });
      await writer.observe('s', modelRound(i));
    }
    const logKey = `${keyPrefix}log:s`;
    const log = await raw.lRange(logKey, 0, -1);
    assert.equal(log.length, 10);
    assert.equal(log.filter((op) => op.startsWith('O1')).length, 5, 'the tool calls');
    const mine = await writer.snapshot('s');
    for (const [i, op] of log.entries()) await raw.lSet(logKey, i, JSON.stringify(decodeOp(op)));
    assert.ok((await raw.lRange(logKey, 0, -1)).every((op) => op.startsWith('{')));
    assert.deepEqual(await breakerOn(store({ keyPrefix })).snapshot('s'), mine);
    // An operation no version wrote fails the read with a store error, not a wrong state.
    await raw.lSet(logKey, 0, 'O1["9"]');
    const reader = breakerOn(store({ keyPrefix }));
    await assert.rejects(reader.snapshot('s'), (e: unknown) => BreakerUnavailableError.isInstance(e) && /a logged operation is unreadable/.test(e.message));
    const health = await reader.health();
    assert.equal(health.storeErrors, 1);
    assert.match(health.lastStoreError ?? '', /a logged operation is unreadable/, 'health says why');
  });

  test('snapshots are stored compressed; the text forms older versions stored are read the same', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const writer = breakerOn(store({ keyPrefix }));
    for (let i = 0; i < 20; i++) {
      await writer.observe('s', { kind: 'tool_call', tool: 'läs_fil', args: { path: `src/${i}.ts` }, result: `innehåll ${i}` });
      await writer.observe('s', modelRound(i));
    }
    const sessionKey = `${keyPrefix}session:s`;
    const stored = await storedSnapshot(sessionKey);
    assert.ok(stored !== undefined, 'the log was folded into a snapshot');
    const state = decompressState(stored);
    assert.ok(stored.length < encodeState(state).length, `${stored.length} bytes against ${encodeState(state).length} as text`);
    const expected = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(expected.counters.toolCalls, 20);
    for (const older of [encodeState(state), JSON.stringify(state)]) {
      await raw.hSet(sessionKey, 'snap', older);
      assert.deepEqual(await breakerOn(store({ keyPrefix })).snapshot('s'), expected);
    }
  });

  test('a session this version cannot read (a newer schema) is not judged, and every report says why', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const writer = breakerOn(store({ keyPrefix }));
    for (let i = 0; i < 20; i++) await writer.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: `src/${i}.ts` }, result: `contents ${i}` });
    const sessionKey = `${keyPrefix}session:s`;
    assert.ok((await storedSnapshot(sessionKey))?.subarray(0, 2).equals(Buffer.from('Z1')), 'the log was folded into a snapshot');
    const newer = JSON.stringify({ ...(await writer.snapshot('s')), v: 2 });
    await raw.hSet(sessionKey, 'snap', newer);

    const reader = breakerOn(store({ keyPrefix }));
    const warnings: string[] = [];
    reader.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
    const decision = await reader.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: 'src/x.ts' }, result: 'x' });
    assert.equal(decision.action, 'allow', 'fail-open by default');
    assert.equal(warnings.length, 1);
    const why =
      /GOVERNOR_BREAKER_STORE: Breaker store \w+ failed: stored snapshot is not a session state; caused by GOVERNOR_INVALID_STATE: Not a stored breaker session state: unknown schema version 2/;
    assert.match(warnings[0]!, why);
    const health = await reader.health();
    assert.deepEqual([health.status, health.storeReachable, health.storeError, health.unjudged], ['ok', true, undefined, 1], 'the server is up');
    assert.match(health.lastStoreError ?? '', why, 'what was not judged, and why');
    assert.equal(await raw.hGet(sessionKey, 'snap'), newer, 'what this version cannot read is left as it is');

    const closed = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: store({ keyPrefix }), onStoreError: 'fail-closed' });
    const refused = await closed.checkModelCall('s');
    assert.deepEqual([refused.action, refused.reason], ['stop', 'store_unavailable']);
    assert.match(refused.message ?? '', why);

    // Every event still tried is appended for a writer that can fold it, but the log stops at 1,024: it does not grow for as long as the session is used.
    for (let i = 0; i < 1100; i++) await reader.observe('s', { kind: 'tool_call', tool: 'read_file', args: { path: `src/${i}.ts` }, result: String(i) });
    assert.equal(await raw.lLen(`${keyPrefix}log:s`), 1024);
    assert.equal(warnings.length, 1101);
    assert.match(warnings.at(-1)!, /the session's log is full: 1024 operations no writer could fold into a snapshot; caused by .*unknown schema version 2/);
    assert.equal((await reader.health()).unjudged, 1101);

    // Deleting the session is how an operator starts it afresh.
    await store({ keyPrefix }).delete('s');
    assert.equal((await closed.checkModelCall('s')).action, 'allow');
    assert.equal((await reader.observe('s', modelRound(0))).action, 'allow');
    assert.equal((await reader.snapshot('s')).counters.events, 1);
  });

  test('a log full of operations nobody folded is folded by the next writer that can read it, and nothing is lost', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const logKey = `${keyPrefix}log:s`;
    await breakerOn(store({ keyPrefix })).observe('s', modelRound(0));
    // As writers whose folds never landed would leave it (operations in the plain JSON that older versions logged).
    const at = Date.now();
    const ops = Array.from({ length: 1023 }, (_, i) =>
      JSON.stringify({ k: 'observe', at, event: { kind: 'model', promptTokens: 100, completionTokens: i % 2, text: '' } }),
    );
    await raw.rPush(logKey, ops);
    assert.equal(await raw.lLen(logKey), 1024);

    const writer = breakerOn(store({ keyPrefix }));
    const warnings: string[] = [];
    writer.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
    assert.equal((await writer.observe('s', modelRound(1))).action, 'allow');
    assert.deepEqual(warnings, []);
    assert.equal((await writer.health()).unjudged, 0);
    assert.ok((await raw.lLen(logKey)) < 16, 'folded into a snapshot');
    const snap = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(snap.counters.modelCalls, 1025);
    // Two rounds of 1,000 + 1,001 prompt and 10 completion tokens each, and 1,023 of 100 + 0 or 1.
    assert.equal(snap.budget.tokens, 1010 + 1011 + 1023 * 100 + 511);
  });

  test('eight breakers writing one session at once lose no event', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const breakers = Array.from({ length: 8 }, () => breakerOn(store({ keyPrefix })));
    const warnings: BreakerEventRecord[] = [];
    for (const b of breakers) b.on((e) => e.type === 'warning' && warnings.push(e));
    await Promise.all(
      breakers.map(async (b, k) => {
        for (let i = 0; i < 25; i++) await b.observe('shared', { kind: 'model', promptTokens: 100, completionTokens: k, text: '' });
      }),
    );
    const snap = await breakerOn(store({ keyPrefix })).snapshot('shared');
    assert.deepEqual(warnings, []);
    assert.equal(snap.version, 200);
    assert.equal(snap.counters.modelCalls, 200);
    // 200 × 100 prompt tokens + 25 × (0 + 1 + … + 7) completion tokens.
    assert.equal(snap.budget.tokens, 20_000 + 25 * 28);
    for (const b of breakers) assert.equal((await b.health()).unjudged, 0);
  });

  test('a session the server forgot and another writer re-created: the process that knew it restores its trip', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = breakerOn(store({ keyPrefix }));
    for (let i = 0; i < 6; i++) await a.observe('s', { kind: 'tool_call', tool: 'get_status', args: { job: 'build' }, result: 'queued' });
    assert.equal((await a.snapshot('s')).state, 'OPEN');
    await raw.del([`${keyPrefix}session:s`, `${keyPrefix}log:s`]); // as after a restart without persistence
    const b = breakerOn(store({ keyPrefix }));
    for (let i = 0; i < 10; i++) await b.observe('s', modelRound(i));
    assert.equal((await b.snapshot('s')).state, 'CLOSED', 'b never saw the trip');
    // a's next write finds a session it does not know (another id) and writes back what it knew.
    // The trip was decided on an observed event: the next gate throws it as its category's stop.
    assert.equal((await a.observe('s', { kind: 'user', text: 'anyone?' })).action, 'stop');
    const gate = await b.checkModelCall('s');
    assert.equal(gate.action, 'stop');
    assert.equal(gate.category, 'tool_spiral');
    assert.equal((await b.checkModelCall('s')).reason, 'breaker_open');
    assert.equal((await a.health()).sessionsLost, 1);
  });

  test('steer messages wait for any replica and are taken once, redacted, at most eight', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = store({ keyPrefix });
    const b = store({ keyPrefix });
    const messages = Array.from({ length: 10 }, (_, i) => `steer ${i}`);
    await a.addSteers('s', [...messages.slice(0, 9), 'stop using password=hunter2-very-secret']);
    const taken = await b.takeSteers('s');
    assert.deepEqual(taken.slice(0, 7), messages.slice(2, 9));
    assert.equal(taken.length, 8);
    assert.doesNotMatch(taken[7] ?? '', /hunter2/);
    assert.deepEqual(await a.takeSteers('s'), [], 'taken once');
    await a.addSteers('s', ['later']);
    await a.delete('s');
    assert.deepEqual(await b.takeSteers('s'), [], 'delete drops them');
  });

  test('claimFirst: a key is first once for every replica, the newest are kept, and delete forgets them', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = store({ keyPrefix });
    const b = store({ keyPrefix });
    assert.deepEqual(await a.claimFirst('s', ['k1', 'k2', 'k1']), [true, true, false], 'a repeat within one call is not first');
    assert.deepEqual(await b.claimFirst('s', ['k2', 'k3']), [false, true], 'the other replica knows k2');
    assert.deepEqual(await b.claimFirst('other', ['k1']), [true], 'keys are per session');
    assert.deepEqual(await a.claimFirst('s', []), []);
    // Stored as hashes, never as the keys themselves; the newest 32 are kept, and all of one call's.
    const many = Array.from({ length: 40 }, (_, i) => `tool result ${i} password=hunter2-very-secret`);
    assert.ok((await a.claimFirst('s', many)).every(Boolean));
    const stored = await raw.lRange(`${keyPrefix}seen:s`, 0, -1);
    assert.equal(stored.length, 40);
    assert.doesNotMatch(stored.join(' '), /hunter2|tool result/);
    assert.deepEqual(await b.claimFirst('s', ['k3', many[0]!, many[39]!]), [true, false, false], 'k3 was dropped as older than the 40 newest');
    assert.equal(await raw.lLen(`${keyPrefix}seen:s`), 32);
    const ttl = await raw.pTTL(`${keyPrefix}seen:s`);
    assert.ok(ttl > 86_000_000, `expires with the session (${ttl} ms)`);
    await a.delete('s');
    assert.deepEqual(await b.claimFirst('s', [many[39]!]), [true], 'delete forgets them');
  });

  test('aliases name a session for every replica; a session keeps its newest eight, and delete drops them', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = store({ keyPrefix });
    const b = store({ keyPrefix });
    assert.equal(await b.sessionOfAlias('response:r0'), undefined);
    for (let i = 0; i < 10; i += 1) await a.addAlias('s', `response:r${i}`);
    await a.addAlias('t', 'response:other');
    assert.equal(await b.sessionOfAlias('response:r9'), 's');
    assert.equal(await b.sessionOfAlias('response:r2'), 's');
    assert.equal(await b.sessionOfAlias('response:r1'), undefined, 'older than the newest eight');
    assert.equal(await raw.lLen(`${keyPrefix}aliases:s`), 8);
    await a.addAlias('s', 'response:r9');
    assert.equal(await raw.lLen(`${keyPrefix}aliases:s`), 8, 'an alias added again is not kept twice');
    assert.equal(await b.sessionOfAlias('response:r2'), 's');
    assert.ok((await raw.pTTL(`${keyPrefix}alias:response:r9`)) > 86_000_000, 'kept as long as the session');
    await b.delete('s');
    assert.equal(await a.sessionOfAlias('response:r9'), undefined, 'delete drops them');
    assert.equal(await a.sessionOfAlias('response:other'), 't', "another session's are kept");
  });

  test('notes are read by every replica; a later one of the same name replaces it, and delete drops them', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = store({ keyPrefix });
    const b = store({ keyPrefix });
    assert.equal(await b.readNote('s', 'calls'), undefined);
    await a.putNote('s', 'calls', 'first');
    await a.putNote('s', 'calls', 'second ünïcode');
    await a.putNote('s', 'other', 'kept apart');
    await a.putNote('t', 'calls', "another session's");
    assert.equal(await b.readNote('s', 'calls'), 'second ünïcode');
    assert.equal(await b.readNote('s', 'other'), 'kept apart');
    assert.ok((await raw.pTTL(`${keyPrefix}notes:s`)) > 86_000_000, 'kept as long as the session');
    await b.delete('s');
    assert.equal(await a.readNote('s', 'calls'), undefined, 'delete drops them');
    assert.equal(await a.readNote('t', 'calls'), "another session's");
  });

  test('a session and its log expire no sooner than ttlMs after the last write, and at most a second later', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const b = breakerOn(new RedisBreakerStore({ client: raw, keyPrefix, ttlMs: 60_000 }));
    // The second write comes before the store's refresh interval, the third after it.
    for (const pause of [0, 100, 1_100]) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      const before = Date.now();
      await b.observe('s', modelRound(pause));
      const after = Date.now();
      for (const key of [`${keyPrefix}session:s`, `${keyPrefix}log:s`]) {
        const expiresAt = Number(await raw.sendCommand(['PEXPIRETIME', key]));
        assert.ok(expiresAt >= before + 60_000, `${key} expires ${before + 60_000 - expiresAt} ms sooner than ttlMs after the write`);
        assert.ok(expiresAt <= after + 61_000, `${key} expires ${expiresAt - after - 60_000} ms after ttlMs`);
      }
    }
  });

  test('a session that expired after ttlMs starts afresh in the process that wrote it too, and is not reported lost', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const s = new RedisBreakerStore({ client: raw, keyPrefix, ttlMs: 300 });
    const b = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: s, budget: { maxTokens: 5000 } });
    for (let i = 0; i < 6; i++) await b.observe('s', modelRound(i));
    assert.equal((await b.snapshot('s')).budget.phase, 'exhausted');
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.deepEqual(await raw.keys(`${keyPrefix}*`), [], 'expired as ttlMs says');

    assert.equal((await b.observe('s', modelRound(0))).action, 'allow');
    const after = await b.snapshot('s');
    assert.deepEqual([after.counters.events, after.budget.tokens, after.budget.phase], [1, 1010, 'ok']);
    assert.deepEqual(s.status(), { restarted: false, sessionsLost: 0 });
  });

  test('a session whose hash expired before its log starts afresh, without the old log', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const call = { kind: 'tool_call' as const, tool: 'get_status', args: { job: 'build' }, result: 'queued' };
    for (let i = 0; i < 5; i++) await breakerOn(store({ keyPrefix })).observe('s', call);
    await raw.del(`${keyPrefix}session:s`);
    await breakerOn(store({ keyPrefix })).observe('s', modelRound(0));
    const { counters, version } = await breakerOn(store({ keyPrefix })).snapshot('s');
    assert.equal(version, 1);
    assert.deepEqual([counters.events, counters.modelCalls, counters.toolCalls], [1, 1, 0]);
  });

  test('listOpen lists tripped sessions and forgets deleted and expired ones', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const s = store({ keyPrefix });
    const b = breakerOn(s);
    for (const id of ['a', 'b', 'd']) {
      for (let i = 0; i < 6; i++) await b.observe(id, { kind: 'tool_call', tool: 'get_status', args: { job: 'build' }, result: 'queued' });
    }
    await b.observe('c', modelRound(0));
    assert.deepEqual(await s.listOpen(), ['a', 'b', 'd']);
    await s.delete('b');
    await raw.del(`${keyPrefix}session:d`); // as if it had expired
    assert.deepEqual(await s.listOpen(), ['a']);
    assert.equal((await b.snapshot('b')).version, undefined);
  });

  test('listOpen leaves out a session whose cooldown has ended, on every replica', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    let now = Date.now();
    const clock = () => now;
    const [a, b] = [store({ keyPrefix }), store({ keyPrefix })];
    const tripped = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: a, now: clock, cooldownMs: 30_000 });
    for (let i = 0; i < 6; i++) await tripped.observe('x', { kind: 'tool_call', tool: 'get_status', args: { job: 'build' }, result: 'queued' });
    const other = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: b, now: clock, cooldownMs: 30_000 });
    assert.deepEqual(await other.openSessions(), ['x']);
    assert.deepEqual((await other.health()).open, ['x']);
    now += 30_000;
    assert.deepEqual(await other.openSessions(), []);
    assert.deepEqual((await tripped.health()).open, []);
    // Dropped from the index, not only left out.
    assert.equal(await raw.zCard(`${keyPrefix}open-until`), 0);
    assert.equal((await other.snapshot('x')).state, 'HALF_OPEN');
  });

  test('the stored log and snapshot hold no raw tool or sub-agent payloads and no secret; trips are those of a breaker in memory', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const secrets = ['AKIAIOSFODNN7EXAMPLE', 'ghp_0123456789abcdefABCDEF0123456789abcd', 'sk-proj-abcdefghijklmnopqrstuvwx12', 'hunter2-Zq9!x'];
    const [aws, github, openai, password] = secrets as [string, string, string, string];
    // Not secrets, but raw tool payloads: the log keeps their fingerprints and hashes instead.
    const rawArgument = 'unredacted-argument-canary';
    const rawResult = 'unredacted-result-canary';
    const rawTask = 'unredacted-task-canary';
    const rawAnswer = 'unredacted-answer-canary';
    const events = [
      { kind: 'user' as const, text: `deploy with key ${aws}` },
      ...Array.from({ length: 3 }, (_, i) => ({
        kind: 'tool_call' as const,
        tool: 'read_config',
        args: { path: 'deploy/prod.env', note: `${rawArgument} token ${github}`, password },
        result: `${rawResult} OPENAI_API_KEY=${openai} round ${i % 1}`,
      })),
      ...Array.from({ length: 4 }, () => ({
        kind: 'model' as const,
        promptTokens: 100,
        completionTokens: 10,
        text: `Use ${openai} and AWS ${aws} to deploy the service now.`,
      })),
      { kind: 'retrieval' as const, query: `where is ${github} used`, results: [`config mentions ${aws}`] },
      { kind: 'delegation' as const, agent: 'helper', input: `rotate ${openai} ${rawTask}`, output: `rotated, new password=${password} ${rawAnswer}` },
    ];
    // A sub-agent tool asked the same task three times, answering the same: a delegation loop (in a session of its own).
    const subAgentEvents = [
      ...Array.from({ length: 3 }, () => ({
        kind: 'tool_call' as const,
        tool: 'researcher',
        args: { task: `summarise the incident report ${rawTask} using token ${github}`, apiKey: openai },
        result: `The incident was caused by an expired certificate on the gateway ${rawAnswer} ${aws}.`,
      })),
    ];
    const options = { telemetry: false, delegation: { subAgentTools: ['researcher'] } };
    const decide = async (breaker: AgentBreaker): Promise<string[]> => {
      const out: string[] = [];
      for (const [session, steps] of [
        ['s', events],
        ['d', subAgentEvents],
      ] as const) {
        for (const event of steps) {
          if (event.kind === 'tool_call') {
            const check = await breaker.checkToolCall(session, { tool: event.tool, args: event.args });
            out.push(`check:${check.action}:${check.category ?? ''}`);
            if (check.action === 'block' || check.action === 'stop') continue;
          }
          const decision = await breaker.observe(session, event);
          out.push(`${event.kind}:${decision.action}:${decision.category ?? ''}`);
        }
      }
      return out;
    };
    const stored = async (): Promise<string> => {
      const texts: string[] = [];
      for (const key of await raw.keys(`${keyPrefix}*`)) {
        const type = await raw.type(key);
        if (type === 'hash') texts.push(JSON.stringify(await raw.hGetAll(key)));
        else if (type === 'list') texts.push(...(await raw.lRange(key, 0, -1)));
        else if (type === 'zset') texts.push(...(await raw.zRange(key, 0, -1)));
        else texts.push(String(await raw.get(key)));
      }
      return texts.join('\n');
    };
    const onRedis = new AgentBreaker({ ...options, checkFreshnessMs: 0, store: store({ keyPrefix }) });
    const redisDecisions = await decide(onRedis);
    const inMemory = await decide(new AgentBreaker(options));
    assert.deepEqual(redisDecisions, inMemory);
    // The repeated config read is a spiral, and the repeated reply is text repetition: the same trips either way.
    assert.ok(
      redisDecisions.some((d) => d.endsWith(':tool_spiral')),
      redisDecisions.join(' '),
    );
    assert.ok(
      redisDecisions.some((d) => d.endsWith(':text_repetition')),
      redisDecisions.join(' '),
    );
    assert.ok(
      redisDecisions.some((d) => d.endsWith(':delegation_loop')),
      redisDecisions.join(' '),
    );
    const log = await raw.lRange(`${keyPrefix}log:s`, 0, -1);
    assert.ok(log.length > 0, 'the log holds operations not folded into a snapshot yet');
    const everything = await stored();
    for (const secret of [...secrets, rawArgument, rawResult, rawTask, rawAnswer]) assert.ok(!everything.includes(secret), `stored keys hold ${secret}`);
    // A replica that reads the digested log judges the session the same way.
    const replica = new AgentBreaker({ ...options, checkFreshnessMs: 0, store: store({ keyPrefix }) });
    assert.deepEqual(await replica.snapshot('s'), await onRedis.snapshot('s'));
    assert.deepEqual(await replica.snapshot('d'), await onRedis.snapshot('d'));
  });

  test('an observed event is one round trip; a check is one, or none within checkFreshnessMs', async () => {
    const client = counting(raw);
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const always = breakerOn(store({ keyPrefix, client }));
    await always.observe('warm-up', modelRound(0)); // may load the script (EVALSHA + EVAL)
    await always.checkModelCall('warm-up');
    client.commands.length = 0;
    for (let i = 0; i < 10; i++) {
      await always.checkModelCall('s');
      await always.observe('s', modelRound(i));
    }
    assert.deepEqual(client.commands, Array(20).fill('EVALSHA'));
    // The log is folded into the snapshot along the way, without a round trip of its own.
    for (let i = 10; i < 40; i++) await always.observe('s', modelRound(i));
    assert.deepEqual(client.commands, Array(50).fill('EVALSHA'));
    assert.ok((await raw.lLen(`${keyPrefix}log:s`)) <= 16);

    client.commands.length = 0;
    const fresh = breakerOn(store({ keyPrefix, client }), 60_000);
    for (let i = 0; i < 5; i++) {
      await fresh.checkModelCall('t');
      await fresh.observe('t', modelRound(i));
    }
    // A new store also asks the server's run id once, at its first reply, in the background (a restart is told by it).
    assert.deepEqual(
      client.commands.filter((c) => c === 'INFO'),
      ['INFO'],
    );
    assert.equal(client.commands.filter((c) => c !== 'INFO').length, 6, 'the first check reads; later checks trust the last write');
  });

  test('a server that lost the scripts (SCRIPT FLUSH) is sent the one it lacks with the next command, which is applied once', async () => {
    // A server of its own: flushing the shared one's scripts would add round trips to tests that count them.
    const port = await unusedPort();
    const server = await startDedicatedRedis(port);
    const own = createClient({ url: `redis://127.0.0.1:${port}` });
    own.on('error', () => {});
    try {
      await own.connect();
      const client = counting(own);
      const b = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: new RedisBreakerStore({ client, keyPrefix: prefix }) });
      await b.observe('s', modelRound(0));
      await own.sendCommand(['SCRIPT', 'FLUSH']);
      client.commands.length = 0;
      const warnings: string[] = [];
      b.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
      assert.equal((await b.observe('s', modelRound(1))).action, 'allow');
      assert.deepEqual(client.commands.slice(0, 2), ['EVALSHA', 'EVAL'], 'refused as NOSCRIPT, then sent whole');
      assert.deepEqual(warnings, []);
      assert.equal(await own.lLen(`${prefix}log:s`), 2, 'both events logged, the second once');
      assert.equal((await b.health()).unjudged, 0);
    } finally {
      own.destroy();
      await killProcess(server);
    }
  });

  test('a store created from a url connects by itself and closes its client', async () => {
    const s = new RedisBreakerStore({ url, keyPrefix: prefix });
    const b = breakerOn(s);
    const id = randomUUID();
    await b.observe(id, modelRound(0));
    assert.equal((await b.snapshot(id)).version, 1);
    await s.close();
    await assert.rejects(s.delete(id), BreakerStoreError);
  });

  test('await using closes the store at the end of its scope', async () => {
    const id = randomUUID();
    let used: RedisBreakerStore | undefined;
    {
      await using s = new RedisBreakerStore({ url, keyPrefix: prefix });
      used = s;
      await breakerOn(s).observe(id, modelRound(0));
    }
    await assert.rejects(used.delete(id), (error: unknown) => error instanceof BreakerStoreError && /the store is closed/.test(error.message));
  });

  test("a new store's first operations at once all wait for its connection: none is refused as offline", async () => {
    // A server's first requests after it starts: the client is open before its handshake ends.
    const s = new RedisBreakerStore({ url, keyPrefix: prefix });
    const warnings: string[] = [];
    const b = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: s, onStoreError: 'fail-closed' });
    b.on((event) => {
      if (event.type === 'warning') warnings.push(event.message ?? '');
    });
    try {
      const ids = Array.from({ length: 6 }, () => randomUUID());
      const decisions = await Promise.all(ids.map((id, i) => (i % 2 === 0 ? b.checkModelCall(id) : b.observe(id, modelRound(i)))));
      assert.deepEqual(
        decisions.map((d) => d.action),
        ids.map(() => 'allow'),
      );
      assert.deepEqual(warnings, []);
      assert.equal((await b.health()).unjudged, 0);
    } finally {
      await s.close();
    }
  });

  test('a client that is not known to be ready gets an abort signal, aborted when the store stops waiting; a ready one gets none', async () => {
    const given: Array<AbortSignal | undefined> = [];
    // Never answers: what a client holding commands while it reconnects looks like to the store.
    const holding: RedisCommandClient = {
      sendCommand(_args, options) {
        given.push(options?.abortSignal);
        return new Promise(() => {});
      },
    };
    const held = new RedisBreakerStore({ client: holding, keyPrefix: `${prefix}${randomUUID()}:`, timeoutMs: 50 });
    await assert.rejects(held.ping(), (error: unknown) => BreakerStoreError.isInstance(error) && /no reply within 50 ms/.test(error.message));
    assert.equal(given.length, 1);
    assert.ok(given[0] instanceof AbortSignal, 'the command carries a signal');
    assert.equal(given[0].aborted, true, 'aborted once the store stopped waiting: the client drops the command it holds');

    const sent: Array<Record<string, unknown> | undefined> = [];
    const ready: RedisCommandClient = {
      isReady: true,
      sendCommand(args, options) {
        sent.push(options);
        return raw.sendCommand(args, options);
      },
    };
    const s = new RedisBreakerStore({ client: ready, keyPrefix: `${prefix}${randomUUID()}:` });
    await breakerOn(s).observe(randomUUID(), modelRound(0));
    assert.ok(sent.length > 0);
    assert.ok(
      sent.every((options) => options?.abortSignal === undefined && options?.timeout === 0),
      "commands go without a signal, and without a timer of the client's own",
    );
  });

  test('an event that timed out while the client was reconnecting is not written once it is back', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const target = new URL(url);
    // A cable to Redis that can be pulled: connections through it, and a listener that can be closed and opened again.
    const cables = new Set<net.Socket>();
    const listener = net.createServer((socket) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const end of [socket, upstream]) {
        cables.add(end);
        end.on('error', () => {});
        end.on('close', () => cables.delete(end));
      }
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    // A client of the user's, with node-redis's default offline queue: while it reconnects, commands wait in it.
    const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: () => 300 } });
    client.on('error', () => {});
    await client.connect();
    try {
      const b = breakerOn(new RedisBreakerStore({ client, keyPrefix, timeoutMs: 100 }));
      const warnings: string[] = [];
      b.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
      await b.observe('s', modelRound(0));

      const down = new Promise((resolve) => client.once('error', resolve));
      const closed = new Promise((resolve) => listener.close(resolve));
      for (const end of cables) end.destroy();
      await Promise.all([down, closed]);
      assert.equal((await b.observe('s', modelRound(1))).action, 'allow', 'fail-open');
      assert.match(warnings.join('\n'), /no reply within 100 ms/);

      await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => client.once('ready', resolve));
      await client.ping();
      assert.equal(await raw.lLen(`${keyPrefix}log:s`), 1, 'the event reported unjudged was not appended after all');
    } finally {
      client.destroy();
      for (const end of cables) end.destroy();
      listener.close();
    }
  });

  test('an unreachable server fails fast with a BreakerStoreError that hides credentials', async () => {
    const s = new RedisBreakerStore({ url: `redis://user:s3cret@127.0.0.1:${await unusedPort()}`, timeoutMs: 500 });
    const error = await s.listOpen().then(
      () => assert.fail('listOpen should fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof BreakerStoreError);
    assert.equal(error.code, 'GOVERNOR_BREAKER_STORE');
    assert.equal(error.operation, 'listOpen');
    assert.doesNotMatch(error.message, /s3cret/);
    const b = breakerOn(s);
    assert.equal((await b.observe('x', modelRound(0))).action, 'allow');
    const health = await b.health();
    assert.equal(health.unjudged, 1);
    assert.doesNotMatch(JSON.stringify(health), /s3cret/);
    await s.close();
  });

  test('a wrong password is named as the reason, not taken for a server that does not answer', async () => {
    const port = await unusedPort();
    const server = await startDedicatedRedis(port);
    const admin = createClient({ url: `redis://127.0.0.1:${port}` });
    const s = new RedisBreakerStore({ url: `redis://default:Wr0ngPassw0rd@127.0.0.1:${port}`, timeoutMs: 1000 });
    try {
      await admin.connect();
      await admin.sendCommand(['CONFIG', 'SET', 'requirepass', 'the-real-one']);
      const b = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: s, onStoreError: 'fail-closed' });
      const warnings: string[] = [];
      b.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
      const health = await b.health();
      assert.equal(health.storeReachable, false);
      assert.match(health.storeError ?? '', /WRONGPASS|invalid username-password/);
      assert.doesNotMatch(JSON.stringify(health), /Wr0ngPassw0rd/);
      // Not only the first failure: every later refusal, warning and health check still names the reason.
      for (let i = 0; i < 3; i++) {
        const decision = await b.checkModelCall('s');
        assert.equal(decision.action, 'stop');
        assert.match(decision.message ?? '', /WRONGPASS/);
        assert.match((await b.health()).storeError ?? '', /WRONGPASS/);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(warnings.length, 3);
      for (const warning of warnings) assert.match(warning, /WRONGPASS/);
      const error = await s.listOpen().then(
        () => assert.fail('listOpen should fail'),
        (e: unknown) => e,
      );
      assert.ok(BreakerStoreError.isInstance(error));
      assert.match(error.message, /WRONGPASS/);
      assert.doesNotMatch(`${error.message} ${warnings.join(' ')} ${JSON.stringify(await b.health())}`, /Wr0ngPassw0rd/);
    } finally {
      // A client left open would keep reconnecting, and the test process alive.
      await s.close();
      await admin.close().catch(() => {});
      await killProcess(server);
    }
  });

  test('a database index the server does not have is named in every failure, not only the first', async () => {
    const target = new URL(url);
    target.pathname = '/999';
    const s = new RedisBreakerStore({ url: target.toString(), keyPrefix: prefix, timeoutMs: 500 });
    const b = breakerOn(s);
    const warnings: string[] = [];
    b.on((e) => e.type === 'warning' && warnings.push(e.message ?? ''));
    try {
      for (let i = 0; i < 4; i++) {
        const error = await s.listOpen().then(
          () => assert.fail('listOpen should fail'),
          (e: unknown) => e,
        );
        assert.ok(BreakerStoreError.isInstance(error));
        assert.equal(error.operation, 'listOpen');
        assert.match(error.message, /DB index is out of range/, `failure ${i + 1}: ${error.message}`);
        assert.equal((await b.observe('s', modelRound(i))).action, 'allow');
        assert.match((await b.health()).storeError ?? '', /DB index is out of range/);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(warnings.length, 4);
      for (const warning of warnings) assert.match(warning, /DB index is out of range/);
    } finally {
      await s.close();
    }
  });

  test('bad options are rejected at construction, naming the option', () => {
    assert.throws(
      () => new RedisBreakerStore({}),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'client',
    );
    assert.throws(
      () => new RedisBreakerStore({ url, client: raw }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'url',
    );
    assert.throws(
      () => new RedisBreakerStore({ url, ttlMs: 0 }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'ttlMs',
    );
    assert.throws(
      () => new RedisBreakerStore({ url, cacheSessions: 0 }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'cacheSessions',
    );
    assert.throws(
      () => new RedisBreakerStore({ url: 'not a url' }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'url',
    );
    assert.throws(
      () => new RedisBreakerStore({ client: {} as RedisCommandClient }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'client',
    );
  });
});

// ---------------------------------------------------------------- with the AgentBreaker

const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const workerScript = path.join(repoRoot, 'src', 'test-support', 'redis-breaker-worker.ts');
const nodeBinary = fs.existsSync(path.join(repoRoot, 'node_modules', '.bin', 'node')) ? path.join(repoRoot, 'node_modules', '.bin', 'node') : process.execPath;

/** An AgentBreaker in another process, on its own RedisBreakerStore. */
class BreakerProcess {
  readonly events: BreakerEventRecord[] = [];
  crash: string | undefined;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (d: BreakerDecision) => void; reject: (e: Error) => void }>();
  #nextId = 0;
  #exited = false;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (raw: unknown) => {
      const message = raw as { id?: number; decision?: BreakerDecision; event?: BreakerEventRecord; crash?: string };
      if (message.event) this.events.push(message.event);
      if (message.crash) this.crash = message.crash;
      if (message.id !== undefined) {
        this.#pending.get(message.id)?.resolve(message.decision as BreakerDecision);
        this.#pending.delete(message.id);
      }
    });
    child.on('exit', (code) => {
      this.#exited = true;
      for (const { reject } of this.#pending.values()) reject(new Error(`breaker process exited (${code}): ${this.crash ?? 'no crash report'}`));
      this.#pending.clear();
    });
  }

  static async start(env: Record<string, string>): Promise<BreakerProcess> {
    const child = fork(workerScript, [], { execPath: nodeBinary, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const worker = new BreakerProcess(child);
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: unknown) => {
        if ((m as { ready?: boolean }).ready) resolve();
      });
      child.on('exit', (code) => reject(new Error(`breaker process exited during start (${code}): ${worker.crash ?? ''}`)));
    });
    return worker;
  }

  call(op: 'checkModelCall' | 'checkToolCall' | 'observe', sessionId: string, arg?: unknown): Promise<BreakerDecision> {
    if (this.#exited) return Promise.reject(new Error(`breaker process is gone: ${this.crash ?? ''}`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#child.send({ id, op, sessionId, arg });
    });
  }

  get alive(): boolean {
    return !this.#exited;
  }

  async stop(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.send({ id: -1, op: 'exit', sessionId: '' });
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

type Breakerish = Pick<AgentBreaker, 'checkModelCall' | 'checkToolCall' | 'observe'>;

/**
 * An agent asking for the same search again and again, each round on the
 * breaker `pick(round)` returns, until the breaker stops it. Returns the
 * decisions, round by round, as text.
 */
async function spiral(sessionId: string, pick: (round: number) => Breakerish): Promise<string[]> {
  const log: string[] = [];
  for (let round = 0; round < 20; round++) {
    const b = pick(round);
    const gate = await b.checkModelCall(sessionId);
    log.push(`model:${gate.action}`);
    if (gate.action === 'stop') return log;
    await b.observe(sessionId, { kind: 'model', promptTokens: 1000, completionTokens: 20, text: '' });
    const call = { tool: 'search', args: { q: 'the same thing' } };
    const check = await b.checkToolCall(sessionId, call);
    log.push(`tool:${check.action}:${check.category ?? '-'}`);
    if (check.action === 'stop') return log;
    if (check.action !== 'block') await b.observe(sessionId, { kind: 'tool_call', ...call, result: 'no results' });
  }
  return log;
}

describe('AgentBreaker on RedisBreakerStore', () => {
  test('a Redis that may evict sessions when full is named in health; with noeviction a full Redis is an outage, not a silent loss', async () => {
    const port = await unusedPort();
    const server = await startDedicatedRedis(port, ['--maxmemory', '2mb', '--maxmemory-policy', 'allkeys-lru']);
    const serverUrl = `redis://127.0.0.1:${port}`;
    const admin = createClient({ url: serverUrl });
    admin.on('error', () => {});
    const s = new RedisBreakerStore({ url: serverUrl, keyPrefix: `${prefix}evict:`, timeoutMs: 1000 });
    const b = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: s, onStoreError: 'fail-closed' });
    const warnings: BreakerEventRecord[] = [];
    b.on((e) => e.type === 'warning' && warnings.push(e));
    try {
      await admin.connect();
      assert.equal((await b.health()).storeEvictionPolicy, 'allkeys-lru');
      const report = await health({ breakers: { shared: b } });
      assert.equal(report.components['shared']?.details?.['storeEvictionPolicy'], 'allkeys-lru');
      assert.equal(report.components['shared']?.status, 'UP', 'a policy is a caution, not a failure');

      await admin.configSet('maxmemory-policy', 'volatile-lru');
      assert.equal((await b.health()).storeEvictionPolicy, 'volatile-lru', 'every key the store writes has an expiry');
      await admin.configSet('maxmemory', '0');
      assert.equal((await b.health()).storeEvictionPolicy, undefined, 'no maxmemory: nothing is evicted');
      await admin.configSet({ maxmemory: '64mb', 'maxmemory-policy': 'noeviction' });
      assert.equal((await b.health()).storeEvictionPolicy, undefined);
      assert.deepEqual(s.status(), { restarted: false, sessionsLost: 0 });

      assert.equal((await b.observe('full', { kind: 'user', text: 'hello' })).action, 'allow');
      // Full: the server holds more than its maxmemory, and may evict nothing.
      const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
      assert.ok(used > 0);
      await admin.configSet('maxmemory', String(Math.floor(used / 2)));
      const refused = await b.observe('full', { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'r' });
      assert.equal(refused.action, 'stop');
      assert.equal(refused.reason, 'store_unavailable');
      assert.match(warnings.at(-1)?.message ?? '', /OOM command not allowed/);
      assert.equal((await b.health()).unjudged, 1);
    } finally {
      if (admin.isOpen) await admin.close();
      await s.close();
      await killProcess(server);
    }
  });

  test('two processes sharing one session trip together, exactly as one breaker would', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const a = await BreakerProcess.start({ WORKER_REDIS_URL: url, WORKER_KEY_PREFIX: keyPrefix });
    const b = await BreakerProcess.start({ WORKER_REDIS_URL: url, WORKER_KEY_PREFIX: keyPrefix });
    try {
      const remote = (p: BreakerProcess): Breakerish => ({
        checkModelCall: (s) => p.call('checkModelCall', s),
        checkToolCall: (s, c) => p.call('checkToolCall', s, c),
        observe: (s, e) => p.call('observe', s, e),
      });
      // Rounds alternate between the replicas, as behind a load balancer.
      const shared = await spiral('shared-session', (round) => remote(round % 2 === 0 ? a : b));
      const alone = new AgentBreaker({ telemetry: false, checkFreshnessMs: 0 });
      const reference = await spiral('reference', () => alone);

      assert.deepEqual(shared, reference);
      assert.equal(shared.at(-1), 'tool:stop:tool_spiral');
      // The replica that did not stop the session refuses it too: the breaker is OPEN for everyone.
      const lastRound = shared.filter((entry) => entry.startsWith('model:')).length - 1;
      const other = lastRound % 2 === 0 ? b : a;
      const refused = await other.call('checkModelCall', 'shared-session');
      assert.equal(refused.action, 'stop');
      assert.equal(refused.reason, 'breaker_open');
      assert.equal(refused.category, 'tool_spiral');
      // Escalations were decided on both sides of the load balancer.
      assert.ok(a.events.some((e) => e.type === 'escalation') || b.events.some((e) => e.type === 'escalation'));
      const open = await new RedisBreakerStore({ client: raw, keyPrefix }).listOpen();
      assert.deepEqual(open, ['shared-session']);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  for (const mode of ['fail-open', 'fail-closed'] as const) {
    test(`Redis dying mid-run: the breaker ${mode === 'fail-open' ? 'lets calls through' : 'refuses calls'} with a warning, and never crashes`, async () => {
      const port = await unusedPort();
      let server = await startDedicatedRedis(port);
      const worker = await BreakerProcess.start({
        WORKER_REDIS_URL: `redis://127.0.0.1:${port}`,
        WORKER_KEY_PREFIX: `${prefix}outage:`,
        WORKER_ON_STORE_ERROR: mode,
      });
      try {
        const before = await worker.call('checkModelCall', 'outage');
        assert.equal(before.action, 'allow');
        assert.equal((await worker.call('observe', 'outage', { kind: 'user', text: 'hello' })).action, 'allow');
        assert.equal(worker.events.filter((e) => e.type === 'warning').length, 0);

        await killProcess(server);

        const gate = await worker.call('checkModelCall', 'outage');
        const check = await worker.call('checkToolCall', 'outage', { tool: 'search', args: { q: 'x' } });
        const observed = await worker.call('observe', 'outage', { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'r' });
        for (const decision of [gate, check, observed]) {
          if (mode === 'fail-open') assert.equal(decision.action, 'allow');
          else {
            assert.equal(decision.action, 'stop');
            assert.equal(decision.reason, 'store_unavailable');
          }
        }
        const warnings = worker.events.filter((e) => e.type === 'warning');
        assert.equal(warnings.length, 3);
        assert.match(warnings[0]?.message ?? '', /store .* failed/);
        assert.ok(worker.alive, 'the breaker process must survive the outage');
        assert.equal(worker.crash, undefined);

        // The store comes back: judging resumes without a restart.
        server = await startDedicatedRedis(port);
        const warningCount = (): number => worker.events.filter((e) => e.type === 'warning').length;
        let recovered: BreakerDecision | undefined;
        // The client reconnects in the background; poll until a call is judged without a warning.
        for (const deadline = Date.now() + 15_000; recovered === undefined && Date.now() < deadline; ) {
          const warningsBefore = warningCount();
          const decision = await worker.call('checkModelCall', 'outage');
          if (warningCount() === warningsBefore) recovered = decision;
          else await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(recovered, 'the breaker should use the store again once Redis is back');
        assert.equal(recovered.action, 'allow');
        assert.equal(worker.crash, undefined);
      } finally {
        await worker.stop();
        await killProcess(server);
      }
    });
  }

  test('four processes writing one session at once: no event lost, the same trips as one writer', async () => {
    const keyPrefix = `${prefix}${randomUUID()}:`;
    const call = { tool: 'get_status', args: { job: 'build' } };
    const events = (k: number) =>
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0
          ? { kind: 'tool_call' as const, ...call, result: 'queued' }
          : { kind: 'model' as const, promptTokens: 100, completionTokens: k + 1, text: '' },
      );
    const workers = await Promise.all(Array.from({ length: 4 }, () => BreakerProcess.start({ WORKER_REDIS_URL: url, WORKER_KEY_PREFIX: keyPrefix })));
    try {
      // Every process sends all its events at once: they interleave on the server.
      await Promise.all(workers.flatMap((w, k) => events(k).map((e) => w.call('observe', 'contended', e))));
      const all = workers.flatMap((w) => w.events);
      assert.deepEqual(
        all.filter((e) => e.type === 'warning'),
        [],
        'no store warning: nothing was let through unjudged',
      );
      const shared = await breakerOn(store({ keyPrefix })).snapshot('contended');

      const alone = new AgentBreaker({ telemetry: false });
      const reference: BreakerEventRecord[] = [];
      alone.on((e) => reference.push(e));
      for (let k = 0; k < 4; k++) for (const e of events(k)) await alone.observe('reference', e);
      const expected = await alone.snapshot('reference');

      assert.equal(shared.version, 200);
      // The processes' events interleave in an order the reference does not know: where tool calls meet without a
      // model round between them, the stop waits for the next round (a block, and a detection, more for each).
      const { detections, ...counted } = shared.counters;
      const { detections: expectedDetections, ...expectedCounted } = expected.counters;
      assert.deepEqual(counted, expectedCounted);
      assert.ok(detections >= expectedDetections, `detections: ${detections}`);
      assert.equal(shared.counters.events, 200);
      assert.equal(shared.budget.tokens, expected.budget.tokens);
      assert.equal(shared.state, expected.state);
      assert.equal(shared.openCategory, expected.openCategory);
      assert.deepEqual(shared.escalations, expected.escalations);
      const trips = (list: BreakerEventRecord[]) =>
        list
          .filter((e) => e.type === 'escalation')
          .map((e) => `${e.category}:${e.action}`)
          .sort();
      const extra = [...trips(all)];
      for (const trip of trips(reference)) {
        const at = extra.indexOf(trip);
        assert.ok(at >= 0, `the trip ${trip} of one writer is there`);
        extra.splice(at, 1);
      }
      assert.ok(
        extra.every((t) => t === 'tool_spiral:block'),
        `only held blocks beyond one writer's: ${extra.join(', ')}`,
      );
      assert.equal(extra.length, detections - expectedDetections);
      assert.ok(trips(reference).includes('tool_spiral:stop'));
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  test('a Redis restart without persistence: health says so, and a tripped session this process knew is restored', async () => {
    const port = await unusedPort();
    let server = await startDedicatedRedis(port);
    const s = new RedisBreakerStore({ url: `redis://127.0.0.1:${port}`, keyPrefix: `${prefix}restart:`, timeoutMs: 1000 });
    const b = breakerOn(s);
    const warnings: BreakerEventRecord[] = [];
    b.on((e) => e.type === 'warning' && warnings.push(e));
    try {
      for (let i = 0; i < 6; i++) await b.observe('tripped', { kind: 'tool_call', tool: 'get_status', args: { job: 'build' }, result: 'queued' });
      assert.equal((await b.snapshot('tripped')).state, 'OPEN');
      const healthy = await b.health();
      assert.equal(healthy.storeRestarted, undefined);

      await killProcess(server);
      server = await startDedicatedRedis(port);
      let health = await b.health();
      for (const deadline = Date.now() + 10_000; health.status !== 'ok' && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 100));
        health = await b.health();
      }
      assert.equal(health.storeRestarted, true);

      // The server forgot the trip; this process did not, and writes it back.
      const gate = await b.checkModelCall('tripped');
      assert.equal(gate.action, 'stop');
      assert.ok(gate.reason === 'breaker_open' || gate.reason === 'detection', `a stop, got ${gate.reason}`);
      assert.equal((await b.observe('tripped', { kind: 'user', text: 'still there?' })).reason, 'breaker_open');
      const other = breakerOn(new RedisBreakerStore({ url: `redis://127.0.0.1:${port}`, keyPrefix: `${prefix}restart:` }));
      assert.equal((await other.snapshot('tripped')).state, 'OPEN');
      assert.equal((await b.health()).sessionsLost, 1);
      assert.deepEqual(
        warnings.filter((w) => /forgotten this session/.test(w.message ?? '')).map((w) => w.sessionId),
        ['tripped'],
      );
      await (other.options.store as RedisBreakerStore).close();
    } finally {
      await s.close();
      await killProcess(server);
    }
  });
});

/*
 * The sub-agents' rounds (`ModelEvent.delegated`) on a shared store: a
 * replica that did not see them judges the session's token drift as the one
 * that did, from the store's snapshot and operation log.
 */
/** Two replicas of one breaker on one Redis store, each without a cache of its own. */
function delegatedReplicas(): [AgentBreaker, AgentBreaker] {
  const keyPrefix = `${prefix}${randomUUID()}:`;
  const replica = () => new AgentBreaker({ telemetry: false, checkFreshnessMs: 0, store: new RedisBreakerStore({ client: raw, keyPrefix }) });
  return [replica(), replica()];
}

const promptRound = (promptTokens: number, delegated = false): ModelEvent => ({
  kind: 'model',
  text: '',
  promptTokens,
  completionTokens: 100,
  ...(delegated ? { delegated } : {}),
});

describe('delegated model rounds on a RedisBreakerStore', () => {
  test("a replica that did not see the sub-agents' rounds keeps them out of the lead's run too", async () => {
    const [a, b] = delegatedReplicas();
    // Five of the researcher's rounds after each of the lead's: the log is folded into the snapshot on the way.
    for (const lead of [10_000, 14_000, 19_000]) {
      assert.equal((await a.observe('s', promptRound(lead))).action, 'allow');
      for (let i = 0; i < 5; i++) assert.equal((await a.observe('s', promptRound(1_000 + 100 * i, true))).action, 'allow');
    }
    const fourth = await b.observe('s', promptRound(26_000));
    assert.equal(fourth.category, 'token_drift');
    assert.equal(fourth.action, 'steer');
    assert.deepEqual(fourth.evidence?.promptTokens, [10_000, 14_000, 19_000, 26_000]);
    assert.equal((await b.snapshot('s')).counters.modelCalls, 19);
  });

  test("a replica that did not see a sub-agent's first rounds judges its growth as the one that did", async () => {
    const [a, b] = delegatedReplicas();
    await a.observe('s', promptRound(30_000));
    for (const p of [6_000, 8_200, 11_200]) assert.equal((await a.observe('s', promptRound(p, true))).action, 'allow');
    const fourth = await b.observe('s', promptRound(15_300, true));
    assert.equal(fourth.category, 'token_drift');
    assert.deepEqual(fourth.evidence?.promptTokens, [6_000, 8_200, 11_200, 15_300]);
  });
});
