import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { AgentBreaker, InMemoryBreakerStore, type BreakerEventRecord } from './index.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import { settlesWithin } from '../test-support/settles-within.ts';
import { BreakerDriver, ManualClock } from './test-support/breaker-driver.ts';

/** Trips a session with a tool spiral (steer, block, stop). */
async function trip(breaker: AgentBreaker, sessionId: string): Promise<void> {
  const driver = new BreakerDriver(breaker, sessionId);
  await driver.repeat(6, 'get_status', { job: 'build' }, () => 'queued');
  assert.equal((await breaker.snapshot(sessionId)).state, 'OPEN');
}

/** One harmless model round: creates (or touches) a CLOSED session. */
function touch(breaker: AgentBreaker, sessionId: string) {
  return breaker.observe(sessionId, { kind: 'model', promptTokens: 10, completionTokens: 1, text: '' });
}

describe('InMemoryBreakerStore', () => {
  test('judges texts as they are: texts that differ only by a secret are different texts', async () => {
    // A support agent looks up which account owns each of four different leaked keys, one retrieval each.
    const keys = [
      'sk-live-4eC39HqLyjWDarjtT1zdp7dc',
      'sk-live-9fQ21ZpLmxWBcvrtY8kdp3aa',
      'sk-live-7hT55KwQnbEDfgsuI2lop9bb',
      'sk-live-2jR88MvXcpFGhjkyO4qaz1cc',
    ];
    const breaker = new AgentBreaker({ store: new InMemoryBreakerStore() });
    const out: string[] = [];
    for (const key of keys) {
      out.push(
        (
          await breaker.observe('s', {
            kind: 'retrieval',
            query: `which account owns api key ${key}`,
            results: [`audit log: key ${key} was created by billing`],
          })
        ).action,
      );
    }
    assert.deepEqual(out, ['allow', 'allow', 'allow', 'allow']);
  });

  test('applies operations in order and counts them', async () => {
    const store = new InMemoryBreakerStore();
    const breaker = new AgentBreaker({ store, telemetry: false });
    for (let i = 0; i < 5; i++) await touch(breaker, 'a');
    const snap = await breaker.snapshot('a');
    assert.equal(snap.version, 5);
    assert.equal(snap.counters.modelCalls, 5);
    assert.equal(snap.budget.tokens, 55);
    assert.equal((await breaker.snapshot('never')).version, undefined);
  });

  test('evicts the least recently used CLOSED session beyond maxSessions', async () => {
    const store = new InMemoryBreakerStore({ maxSessions: 2 });
    const breaker = new AgentBreaker({ store, telemetry: false });
    await touch(breaker, 'a');
    await touch(breaker, 'b');
    await touch(breaker, 'a');
    await touch(breaker, 'c');
    assert.equal(store.size, 2);
    assert.equal((await breaker.snapshot('a')).counters.modelCalls, 2);
    assert.equal((await breaker.snapshot('b')).version, undefined);
  });

  test('keeps the most recently used sessions through any order of touches, around a pinned one', async () => {
    // Every sequence of 6 touches of 3 sessions, on a store that holds 2 of them beside a tripped one.
    const ids = ['a', 'b', 'c'];
    for (let n = 0; n < ids.length ** 6; n++) {
      const touches = Array.from({ length: 6 }, (_, i) => ids[Math.floor(n / ids.length ** i) % ids.length]!);
      const store = new InMemoryBreakerStore({ maxSessions: 3, decodedSessions: 1 });
      const breaker = new AgentBreaker({ store, telemetry: false });
      await trip(breaker, 'pinned');
      for (const id of touches) await touch(breaker, id);
      // Which sessions are held can only be asked by reading them (which touches them): once, at the end.
      const held = [];
      for (const id of ids) if ((await store.read(id)) !== undefined) held.push(id);
      const lastUsed = [...new Set([...touches].reverse())].slice(0, 2).sort();
      assert.deepEqual(held, lastUsed, `after ${touches.join(' ')}`);
      assert.equal((await breaker.snapshot('pinned')).state, 'OPEN');
    }
  });

  test('a tripped session survives a flood of new sessions; CLOSED ones are evicted instead', async () => {
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ maxSessions: 3, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false });
    await trip(breaker, 'tripped');
    for (let i = 0; i < 50; i++) await touch(breaker, `new-${i}`);
    assert.equal(store.size, 3);
    const snap = await breaker.snapshot('tripped');
    assert.equal(snap.state, 'OPEN');
    assert.equal(snap.openCategory, 'tool_spiral');
    assert.deepEqual(await breaker.openSessions(), ['tripped']);
    assert.equal((await breaker.checkModelCall('tripped')).reason, 'breaker_open');
  });

  test('OPEN breakers past their cooldown leave the cap to the sessions in use, as CLOSED ones do', async () => {
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ maxSessions: 3, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, cooldownMs: 1_000, telemetry: false });
    for (const id of ['a', 'b', 'c', 'd']) await trip(breaker, id);
    assert.equal(store.size, 4, 'within their cooldown, every trip is kept over the cap');
    clock.advance(2_000);
    // A conversation in use makes its way to a spiral: with its evidence forgotten between events it never would.
    const driver = new BreakerDriver(breaker, 'in-use');
    for (let i = 0; i < 3; i++) {
      await touch(breaker, `other-${i}`);
      await driver.repeat(1, 'get_status', { job: 'deploy' }, () => 'queued');
    }
    assert.equal((await breaker.snapshot('in-use')).counters.toolCalls, 3);
    assert.equal(store.size, 3);
  });

  test('a spent budget survives the cap', async () => {
    const store = new InMemoryBreakerStore({ maxSessions: 2 });
    const breaker = new AgentBreaker({ store, telemetry: false, budget: { maxTokens: 400_000 } });
    await breaker.observe('spent', { kind: 'model', promptTokens: 400_000, completionTokens: 1_000, text: 'done' });
    for (let i = 0; i < 20; i++) await touch(breaker, `new-${i}`);
    const snap = await breaker.snapshot('spent');
    assert.equal(snap.budget.tokens, 401_000);
    assert.equal(snap.budget.phase, 'wrap_up');
  });

  test('an idle OPEN session is kept until its cooldown ends, then expires like any idle session', async () => {
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ idleTtlMs: 1_000, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, cooldownMs: 10_000, telemetry: false });
    await trip(breaker, 'tripped');
    await touch(breaker, 'closed');
    clock.advance(5_000);
    await touch(breaker, 'other');
    assert.equal(store.size, 2, 'the idle CLOSED session went, the OPEN one stayed');
    assert.equal((await breaker.checkModelCall('tripped')).reason, 'breaker_open');
    clock.advance(12_000);
    await touch(breaker, 'other');
    // 'tripped' was touched by the check above at 5 s; at 17 s it is idle and past its cooldown.
    assert.equal(store.size, 1);
    assert.equal((await breaker.snapshot('tripped')).version, undefined);
  });

  test("the breaker's default store keeps the breaker's clock: a session idle past the TTL on it is forgotten", async () => {
    const clock = new ManualClock();
    const breaker = new AgentBreaker({ now: clock.now, telemetry: false });
    await touch(breaker, 'idle');
    clock.advance(3_600_001);
    await touch(breaker, 'other');
    assert.equal((breaker.options.store as InMemoryBreakerStore).size, 1);
    assert.equal((await breaker.snapshot('idle')).version, undefined);
  });

  test('idle eviction keeps up with the write rate', async () => {
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ idleTtlMs: 1_000, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false });
    for (let i = 0; i < 500; i++) await touch(breaker, `old-${i}`);
    clock.advance(2_000);
    await touch(breaker, 'fresh');
    assert.equal(store.size, 1, 'one write after the idle time drops every idle session');
  });

  test('a cap full of open breakers is said in an event and in health', async () => {
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ maxSessions: 2, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false });
    const warnings: BreakerEventRecord[] = [];
    breaker.on((e) => {
      if (e.type === 'warning') warnings.push(e);
    });
    await trip(breaker, 'a');
    await trip(breaker, 'b');
    assert.equal(warnings.length, 0);
    await trip(breaker, 'c');
    assert.equal(store.size, 3);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message!, /over its session cap by 1/);
    assert.equal(warnings[0]!.code, 'store_over_cap');
    const health = await breaker.health();
    assert.equal(health.heldOverCap, 1);
    assert.deepEqual(health.open, ['a', 'b', 'c']);
  });

  test('sessions kept encoded beyond decodedSessions are judged exactly as decoded ones', async () => {
    /** Interleaves three sessions' tool loops (two looping, one productive) and returns every decision and final state. */
    async function run(store: InMemoryBreakerStore) {
      const clock = new ManualClock();
      const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false, textRepetition: { enabled: true } });
      const drivers = ['a', 'b', 'c'].map((id) => new BreakerDriver(breaker, id));
      const decisions: string[] = [];
      for (let i = 0; i < 8; i++) {
        for (const [n, driver] of drivers.entries()) {
          clock.advance(10);
          const args = n === 2 ? { path: `src/file-${i}.ts` } : { job: 'build' };
          const { decision } = await driver.tool('get_status', args, n === 2 ? `contents ${i}` : 'queued');
          decisions.push(`${driver.sessionId}:${decision.action}:${decision.category ?? ''}`);
        }
      }
      const states = await Promise.all(['a', 'b', 'c'].map(async (id) => (await store.read(id))?.state));
      return { decisions, states, open: await breaker.openSessions() };
    }
    const decoded = await run(new InMemoryBreakerStore());
    assert.ok(
      decoded.decisions.some((d) => d.startsWith('a:stop')),
      'the looping sessions trip',
    );
    assert.deepEqual(decoded.open, ['a', 'b']);
    for (const decodedSessions of [0, 1, 2])
      assert.deepEqual(await run(new InMemoryBreakerStore({ decodedSessions })), decoded, `decodedSessions ${decodedSessions}`);
  });

  test('an encoded OPEN session survives the cap and still stops calls', async () => {
    const store = new InMemoryBreakerStore({ maxSessions: 3, decodedSessions: 1 });
    const breaker = new AgentBreaker({ store, telemetry: false });
    await trip(breaker, 'tripped');
    for (let i = 0; i < 20; i++) await touch(breaker, `new-${i}`);
    assert.deepEqual(await breaker.openSessions(), ['tripped']);
    assert.equal((await breaker.checkModelCall('tripped')).reason, 'breaker_open');
    assert.equal((await breaker.snapshot('tripped')).openCategory, 'tool_spiral');
  });

  test('a session pushed out of the decoded set is compressed when the event loop turns, not by the operation that pushed it out', async () => {
    const store = new InMemoryBreakerStore({ decodedSessions: 8 });
    const breaker = new AgentBreaker({ store, telemetry: false });
    for (let i = 0; i < 8; i++) await touch(breaker, `s-${i}`);
    assert.equal(store.decoded, 8);
    await touch(breaker, 's-8');
    assert.equal(store.decoded, 9, 'the new session was answered first: the one it pushes out is still decoded');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(store.decoded, 8, 'the next turn of the event loop compressed it');
    // The compressed one (the least recently used) is judged on as before.
    await touch(breaker, 's-0');
    const snap = await breaker.snapshot('s-0');
    assert.equal(snap.counters.modelCalls, 2);
    assert.equal(snap.version, 2);
  });

  test('sessions pushed out of the decoded set are compressed a batch (a sixteenth of decodedSessions) at a time', async () => {
    const clock = new ManualClock();
    // A sixteenth of 64: batches of 4.
    const store = new InMemoryBreakerStore({ decodedSessions: 64, decodedIdleMs: 50, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 64; i++) await touch(breaker, `s-${i}`);
    await turn();
    assert.equal(store.decoded, 64);
    for (let i = 64; i < 67; i++) {
      await touch(breaker, `s-${i}`);
      await turn();
    }
    assert.equal(store.decoded, 67, 'three sessions pushed out wait for a fourth');
    await touch(breaker, 's-67');
    assert.equal(store.decoded, 68, 'the fourth is answered before any compression');
    await turn();
    assert.equal(store.decoded, 64, 'the turn after the fourth compressed all four');
    for (let i = 68; i < 70; i++) await touch(breaker, `s-${i}`);
    await turn();
    assert.equal(store.decoded, 66);
    // Fewer than a batch still go once idle, with every other idle session.
    clock.advance(50);
    await settlesWithin(
      (async () => {
        while (store.decoded > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      })(),
      5_000,
      'compressing the idle sessions',
    );
    for (const i of [0, 3, 66, 69]) assert.equal((await breaker.snapshot(`s-${i}`)).counters.modelCalls, 1);
  });

  test('a burst of new sessions with no turn of the event loop keeps at most an eighth more than decodedSessions decoded', async () => {
    for (const decodedSessions of [0, 1, 16]) {
      const store = new InMemoryBreakerStore({ decodedSessions });
      const breaker = new AgentBreaker({ store, telemetry: false });
      const most = decodedSessions + Math.ceil(decodedSessions / 8);
      const seen: number[] = [];
      for (let i = 0; i < 100; i++) {
        await touch(breaker, `s-${i}`);
        seen.push(store.decoded);
      }
      assert.equal(Math.max(...seen), most, `decodedSessions ${decodedSessions}: decoded counts ${[...new Set(seen)].join(', ')}`);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(store.decoded, decodedSessions, `decodedSessions ${decodedSessions}, after a turn`);
      for (let i = 0; i < 100; i += 33) assert.equal((await breaker.snapshot(`s-${i}`)).counters.modelCalls, 1);
    }
  });

  test('sessions left idle for decodedIdleMs are compressed in the background, and judged as if they never were', async () => {
    /** Interleaves a looping session and a productive one, pausing every third step until the store has compressed both. */
    async function run(store: InMemoryBreakerStore, pause: () => Promise<void>) {
      // The breaker's clock is the test's, so that both runs stamp the same times; the store keeps real time for idleness.
      const clock = new ManualClock();
      const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false, textRepetition: { enabled: true } });
      const looping = new BreakerDriver(breaker, 'looping');
      const working = new BreakerDriver(breaker, 'working');
      const decisions: string[] = [];
      for (let i = 0; i < 6; i++) {
        if (i % 3 === 2) await pause();
        const a = await looping.tool('get_status', { job: 'build' }, 'queued');
        const b = await working.tool('read_file', { path: `src/file-${i}.ts` }, `contents ${i}`);
        decisions.push(`${a.decision.action}:${a.decision.category ?? ''}`, `${b.decision.action}`);
      }
      return { decisions, states: [(await store.read('looping'))?.state, (await store.read('working'))?.state] };
    }
    const kept = await run(new InMemoryBreakerStore({ decodedIdleMs: MAX_TIMER_MS }), async () => {});
    assert.ok(kept.decisions.includes('stop:tool_spiral'), 'the looping session trips');

    const store = new InMemoryBreakerStore({ decodedIdleMs: 20 });
    let pauses = 0;
    const paused = await run(store, async () => {
      assert.equal(store.decoded, 2, 'both sessions were just used');
      await settlesWithin(
        (async () => {
          while (store.decoded > 0) await new Promise((resolve) => setTimeout(resolve, 5));
        })(),
        5_000,
        'compressing the idle sessions',
      );
      pauses++;
    });
    assert.equal(pauses, 2);
    assert.deepEqual(paused, kept);
    assert.equal(store.size, 2);
  });

  test('a sweep of many idle sessions compresses every one, a bounded batch per turn of the event loop', async () => {
    // The store's clock is the test's, so that every session goes idle at once, when the test says.
    const clock = new ManualClock();
    const store = new InMemoryBreakerStore({ decodedIdleMs: 10, now: clock.now });
    const breaker = new AgentBreaker({ store, now: clock.now, telemetry: false });
    for (let i = 0; i < 100; i++) await touch(breaker, `s-${i}`);
    assert.equal(store.decoded, 100);
    clock.advance(10);
    const seen = new Set<number>();
    await settlesWithin(
      (async () => {
        while (store.decoded > 0) {
          seen.add(store.decoded);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
      5_000,
      'compressing 100 idle sessions',
    );
    assert.ok(
      [...seen].some((n) => n > 0 && n < 100),
      `one turn compressed every session at once (decoded counts seen: ${[...seen].join(', ')})`,
    );
    for (let i = 0; i < 100; i++) assert.equal((await breaker.snapshot(`s-${i}`)).counters.modelCalls, 1);
  });

  test("the idle sweep's timer does not keep the process alive", async () => {
    // A script that uses the default store (idle sweep after 10 s) and then has nothing left to do.
    const script = `
      import { AgentBreaker, InMemoryBreakerStore } from ${JSON.stringify(new URL('./index.ts', import.meta.url).href)};
      const store = new InMemoryBreakerStore();
      const breaker = new AgentBreaker({ store, telemetry: false });
      await breaker.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '' });
      if (store.decoded !== 1) throw new Error('the session should be decoded');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await settlesWithin(
      once(child, 'exit').then(([exitCode]) => exitCode),
      8_000,
      'the script',
    ).finally(() => child.kill());
    assert.equal(code, 0, stderr);
  });

  test('rejects bad options', () => {
    assert.throws(
      () => new InMemoryBreakerStore({ maxSessions: 0 }),
      (e) => e instanceof InvalidOptionError && e.option === 'maxSessions',
    );
    assert.throws(
      () => new InMemoryBreakerStore({ idleTtlMs: -1 }),
      (e) => e instanceof InvalidOptionError && e.option === 'idleTtlMs',
    );
    assert.throws(
      () => new InMemoryBreakerStore({ decodedSessions: -1 }),
      (e) => e instanceof InvalidOptionError && e.option === 'decodedSessions',
    );
  });

  test('refuses an idle time above the timer maximum, as every time option', () => {
    for (const idleTtlMs of [3e9, MAX_TIMER_MS + 1, Infinity]) {
      assert.throws(
        () => new InMemoryBreakerStore({ idleTtlMs }),
        (e) => e instanceof InvalidOptionError && e.option === 'idleTtlMs' && /at most 2147483647/.test(e.message),
        `expected idleTtlMs: ${idleTtlMs} to be refused`,
      );
    }
    assert.equal(new InMemoryBreakerStore({ idleTtlMs: MAX_TIMER_MS }).idleTtlMs, MAX_TIMER_MS);
  });
});
