import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker, InMemoryBreakerStore, type BreakerEventRecord, type BreakerStore } from '../index.ts';
import { toolCallOf } from '../chat/tool-scope.ts';

describe('AgentBreaker: a reused args object', () => {
  test('a loop that changes one args object between calls is judged by what each call asks for, not a spiral', async () => {
    const breaker = new AgentBreaker();
    const args: Record<string, unknown> = { path: '' };
    const actions: string[] = [];
    for (let i = 1; i <= 6; i++) {
      args.path = `src/file${i}.ts`;
      const decision = await breaker.checkToolCall('s', { tool: 'lint', args });
      actions.push(decision.action);
      await breaker.observe('s', { kind: 'tool_call', tool: 'lint', args, result: 'ok: no problems' });
    }
    assert.deepEqual(actions, ['allow', 'allow', 'allow', 'allow', 'allow', 'allow']);
  });

  test('a check judges the arguments as they were when it was called, also when the caller changes them before it is judged', async () => {
    const breaker = new AgentBreaker();
    for (let i = 0; i < 3; i++) {
      const args = { path: 'src/a.ts' };
      await breaker.checkToolCall('s', { tool: 'read_file', args });
      await breaker.observe('s', { kind: 'tool_call', tool: 'read_file', args, result: 'same text' });
    }
    const args = { path: 'src/a.ts' };
    const pending = breaker.checkToolCall('s', { tool: 'read_file', args });
    args.path = 'src/b.ts';
    const decision = await pending;
    assert.notEqual(decision.action, 'allow', 'the fourth identical call is judged as the repeat it was');
    assert.equal(decision.category, 'tool_spiral');
  });
});

describe('AgentBreaker: a checked call observed after the session changed', () => {
  test('the observation is judged on the session as it is then, not as the check found it', async () => {
    const store = new InMemoryBreakerStore();
    const mine = new AgentBreaker({ store });
    const other = new AgentBreaker({ store });
    const call = (args: object) => ({ kind: 'tool_call' as const, tool: 'read_file', args, result: 'same text' });
    const first = { path: 'src/a.ts' };
    assert.equal((await mine.checkToolCall('s', { tool: 'read_file', args: first })).action, 'allow');
    assert.equal((await mine.observe('s', call(first))).action, 'allow');
    const args = { path: 'src/a.ts' };
    assert.equal((await mine.checkToolCall('s', { tool: 'read_file', args })).action, 'allow', 'one before it: not a spiral yet');
    // Another replica of the agent runs the same call meanwhile, and records it first.
    assert.equal((await other.observe('s', call({ path: 'src/a.ts' }))).action, 'allow');
    const decision = await mine.observe('s', call(args));
    assert.equal(decision.action, 'steer', 'now the third identical call: its observation says so');
    assert.equal(decision.category, 'tool_spiral');
  });
});

describe('AgentBreaker listeners', () => {
  test('an async listener that rejects is swallowed like one that throws: no unhandled rejection', async () => {
    const breaker = new AgentBreaker();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let called = 0;
      breaker.on(async () => {
        called++;
        throw new Error('webhook down');
      });
      for (let i = 0; i < 5; i++) {
        const decision = await breaker.checkToolCall('s', { tool: 'search', args: { q: 'same' } });
        if (decision.action === 'stop') break;
        await breaker.observe('s', { kind: 'tool_call', tool: 'search', args: { q: 'same' }, result: 'same result' });
      }
      // Unhandled rejections are reported after the microtask queue drains.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(called > 0, 'the listener was called');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('AgentBreaker: bad input and errors of judgement are not store outages', () => {
  test('a user turn whose text is not a string is refused with InvalidOptionError naming event.text; nothing is recorded', async () => {
    const store = new InMemoryBreakerStore();
    const breaker = new AgentBreaker({ store, onStoreError: 'fail-closed' });
    const multimodal = [
      { type: 'text', text: 'what is in this picture?' },
      { type: 'image', image: 'data:…' },
    ];
    for (const text of [multimodal, undefined, null, 42, { text: 'hi' }]) {
      await assert.rejects(breaker.observe('s', { kind: 'user', text: text as never }), { name: 'InvalidOptionError', option: 'event.text' });
    }
    assert.equal((await breaker.snapshot('s')).counters.events, 0);
    const health = await breaker.health();
    assert.equal(health.storeReachable, true);
    assert.equal(health.storeErrors, 0);
    assert.equal(health.unjudged, 0);
  });

  test('an error thrown while judging (here by the arguments) is thrown to the caller, not counted as the store failing', async () => {
    const breaker = new AgentBreaker({ onStoreError: 'fail-closed' });
    const warnings: BreakerEventRecord[] = [];
    breaker.on((event) => void (event.type === 'warning' && warnings.push(event)));
    const args = {
      get path(): string {
        throw new Error('getter failed');
      },
    };
    await assert.rejects(breaker.observe('s', { kind: 'tool_call', tool: 'read_file', args, result: 'x' }), /getter failed/);
    const health = await breaker.health();
    assert.equal(health.status, 'ok');
    assert.equal(health.storeReachable, true);
    assert.equal(health.storeErrors, 0);
    assert.equal(health.unjudged, 0);
    assert.deepEqual(warnings, []);
  });

  test('an error of the reducer inside the store apply is thrown as it is, while a failure of the store itself fails open or closed', async () => {
    let broken = false;
    const inner = new InMemoryBreakerStore();
    // A store whose apply hands the reducer a state it cannot judge: the reducer throws, inside the store's apply.
    const store: BreakerStore = {
      read: (id) => inner.read(id),
      apply: async (id, op, reducer) => {
        if (broken) throw new Error('connection reset');
        reducer.apply({} as never, op);
        return inner.apply(id, op, reducer);
      },
      delete: (id) => inner.delete(id),
    };
    const breaker = new AgentBreaker({ store, onStoreError: 'fail-closed' });
    const warnings: BreakerEventRecord[] = [];
    breaker.on((event) => void (event.type === 'warning' && warnings.push(event)));
    await assert.rejects(breaker.observe('s', { kind: 'model', promptTokens: 1, completionTokens: 1, text: 'hello' }), TypeError);
    let health = await breaker.health();
    assert.equal(health.storeReachable, true, 'a bug in judging is not the store being down');
    assert.equal(health.storeErrors, 0);
    assert.equal(health.unjudged, 0);
    broken = true;
    const decision = await breaker.observe('s', { kind: 'model', promptTokens: 1, completionTokens: 1, text: 'hello' });
    assert.equal(decision.action, 'stop');
    assert.equal(decision.reason, 'store_unavailable');
    health = await breaker.health();
    assert.equal(health.storeReachable, false);
    assert.equal(health.storeErrors, 1);
    assert.equal(health.unjudged, 1);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.message]),
      [['store_failed', 'Agent breaker store apply failed (connection reset); failing closed: the call is refused.']],
    );
  });
});

describe('AgentBreaker checks: freshSince', () => {
  /** An in-memory store that tells what age of state each read would trust. */
  function recordingStore(): BreakerStore & { ages: number[] } {
    const inner = new InMemoryBreakerStore();
    const ages: number[] = [];
    return {
      ages,
      read: (id, _reducer, maxAgeMs) => {
        ages.push(maxAgeMs);
        return inner.read(id);
      },
      apply: (id, op, reducer) => inner.apply(id, op, reducer),
      delete: (id) => inner.delete(id),
    };
  }

  test('a check trusts state read or written since the given time as well as within checkFreshnessMs; without it, checkFreshnessMs alone', async () => {
    const store = recordingStore();
    const breaker = new AgentBreaker({ store, checkFreshnessMs: 0 });
    const since = Date.now() - 50;
    await breaker.checkModelCall('s');
    await breaker.checkToolCall('s', { tool: 'search', args: { q: 'oslo' } }, { freshSince: since });
    await breaker.checkModelCall('s', { freshSince: since });
    assert.equal(store.ages[0], 0);
    // Measured when the check reads: at least the 50 ms that have passed (and 100 ms of slack for the store's own clock reading).
    assert.ok(store.ages[1]! >= 150 && store.ages[2]! >= 150, `ages: ${store.ages.join(', ')}`);
    const longer = new AgentBreaker({ store, checkFreshnessMs: 60_000 });
    await longer.checkModelCall('s', { freshSince: since });
    assert.equal(store.ages[3], 60_000, 'a time that trusts less than checkFreshnessMs changes nothing');
  });

  test('a freshSince that is not a time is refused, naming the option', async () => {
    const breaker = new AgentBreaker();
    for (const freshSince of [Number.NaN, Number.POSITIVE_INFINITY, '2026-01-01' as unknown as number]) {
      await assert.rejects(
        breaker.checkModelCall('s', { freshSince }),
        (error: Error) => error.name === 'InvalidOptionError' && /options\.freshSince/.test(error.message),
      );
      await assert.rejects(breaker.checkToolCall('s', { tool: 'search', args: {} }, { freshSince }), /options\.freshSince/);
    }
  });
});

describe('AgentBreaker.observe: steerHere', () => {
  const QUERIES = ['refund policy for damaged items', 'refund policy damaged item', 'damaged items refund policy'];

  /** Observes three alike searches, the 3rd steered; `where` runs each observation (inside a tool call, say). */
  async function searchThrice(breaker: AgentBreaker, sessionId: string, steerHere: boolean, where: (work: () => Promise<void>) => Promise<void>) {
    for (const query of QUERIES) {
      await where(async () => void (await breaker.observe(sessionId, { kind: 'retrieval', query, results: ['policy-7'] }, { steerHere })));
    }
  }

  test('inside a governed tool call, a steer decided on an event observed with it is for the next round inside the call, and ends with the call', async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const call = toolCallOf(breaker, 'in');
    await searchThrice(breaker, 'in', true, call);
    assert.deepEqual(breaker.takeSteers('in'), [], 'not for the round of the agent that made the call');
    assert.equal(call(() => breaker.takeSteers('in')).length, 1, 'for the next round inside it');
  });

  test("without it, the steer is for the agent that called the tool, not a sub-agent another call runs; outside any call, for the session's next round", async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const other = toolCallOf(breaker, 'tool');
    await searchThrice(breaker, 'tool', false, toolCallOf(breaker, 'tool'));
    assert.deepEqual(
      other(() => breaker.takeSteers('tool')),
      [],
      'not for the first round of a sub-agent that a call started before the report runs',
    );
    assert.equal(breaker.takeSteers('tool').length, 1, "a tool's own report steers the agent that called it");
    // A sub-agent's own tool, inside the lead's call: for the sub-agent's next round there.
    const lead = toolCallOf(breaker, 'nested');
    await searchThrice(breaker, 'nested', false, (work) => lead(() => toolCallOf(breaker, 'nested')(work)));
    assert.deepEqual(breaker.takeSteers('nested'), [], "not for the lead's");
    assert.equal(lead(() => breaker.takeSteers('nested')).length, 1);
    await searchThrice(breaker, 'outside', true, (work) => work());
    assert.equal(breaker.takeSteers('outside').length, 1);
  });
});

describe('AgentBreaker: operations on one session', () => {
  type Step = { check: boolean; tool: string; args: object; result: string };
  // A few productive reads, then the same status poll over and over (some only observed): a spiral, to its stop.
  const steps: Step[] = Array.from({ length: 14 }, (_, i) =>
    i < 3
      ? { check: true, tool: 'read_file', args: { path: `src/f${i}.ts` }, result: `text ${i}` }
      : { check: i % 3 !== 0, tool: 'get_status', args: { job: 'build' }, result: 'queued' },
  );
  const record = (d: { action: string; category?: string }) => `${d.action}:${d.category ?? ''}`;

  /** Every step awaited before the next. */
  async function awaited(breaker: AgentBreaker): Promise<string[]> {
    const out: string[] = [];
    for (const { check, tool, args, result } of steps) {
      if (check) out.push(record(await breaker.checkToolCall('s', { tool, args })));
      out.push(record(await breaker.observe('s', { kind: 'tool_call', tool, args, result })));
    }
    return out;
  }

  test('calls started without awaiting the one before are judged in the order they were made, as awaited ones are', async () => {
    const expected = await awaited(new AgentBreaker({ telemetry: false }));
    assert.ok(expected.includes('stop:tool_spiral'), `the poll spirals: ${expected.join(' ')}`);
    const breaker = new AgentBreaker({ telemetry: false });
    const pending: Promise<{ action: string; category?: string }>[] = [];
    for (const { check, tool, args, result } of steps) {
      if (check) pending.push(breaker.checkToolCall('s', { tool, args }));
      pending.push(breaker.observe('s', { kind: 'tool_call', tool, args, result }));
    }
    assert.deepEqual((await Promise.all(pending)).map(record), expected);
  });

  test('an InMemoryBreakerStore subclass that replaces read and apply is called for every operation, and judges the same', async () => {
    const expected = await awaited(new AgentBreaker({ telemetry: false }));
    const calls: string[] = [];
    class CountingStore extends InMemoryBreakerStore {
      override async read(sessionId: string) {
        calls.push('read');
        return super.read(sessionId);
      }
      override async apply(...args: Parameters<InMemoryBreakerStore['apply']>) {
        calls.push('apply');
        return super.apply(...args);
      }
    }
    assert.deepEqual(await awaited(new AgentBreaker({ store: new CountingStore(), telemetry: false })), expected);
    assert.equal(calls.filter((c) => c === 'read').length, steps.filter((s) => s.check).length, 'each check reads the session');
    // Each observation writes, and so does each check that escalates (at least the one that stops).
    assert.ok(calls.filter((c) => c === 'apply').length > steps.length, `${calls.join(' ')}`);
  });

  test('over many sessions, evictions, idle gaps, trips and resets, the immediate path judges every call as the queued path does', async () => {
    /** Every call's answer and, now and then, a snapshot, through a breaker on the given store; the same seeded run each time. */
    async function run(makeStore: (now: () => number) => InMemoryBreakerStore, seed: number): Promise<string[]> {
      let time = 1_700_000_000_000;
      const now = () => time;
      const breaker = new AgentBreaker({
        store: makeStore(now),
        now,
        telemetry: false,
        cooldownMs: 2_000,
        idleResetMs: 20_000,
        budget: { maxTokens: 60_000 },
      });
      const out: string[] = [];
      breaker.on((event) => out.push(`event ${event.type} ${JSON.stringify(event)}`));
      let state = seed;
      const next = (n: number) => {
        // mulberry32: a seeded draw, so both paths see the same calls.
        state = (state + 0x6d2b79f5) | 0;
        let r = Math.imul(state ^ (state >>> 15), 1 | state);
        r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
        return ((r ^ (r >>> 14)) >>> 0) % n;
      };
      const pick = <T>(items: readonly T[]): T => items[next(items.length)]!;
      const tools = ['get_status', 'read_file', 'search', 'write_file'];
      const versions = new Map<string, number>();
      const answer = (d: { action: string; category?: string; message?: string }) => `${d.action}:${d.category ?? ''}:${d.message ?? ''}`;
      for (let i = 0; i < 1_500; i++) {
        // Two busy sessions and four seldom used, over a cap of four (two decoded): CLOSED ones are evicted, open
        // ones and spent budgets kept.
        const id = next(10) < 7 ? `s${next(2)}` : `s${2 + next(4)}`;
        const draw = next(100);
        try {
          if (draw < 30) {
            // Mostly the same status poll: a spiral in the making.
            const poll = next(10) < 6;
            const tool = poll ? 'get_status' : pick(tools);
            const args = poll ? { job: 'build' } : { path: `src/f${next(4)}.ts`, query: pick(['build', 'status of the build', 'tests']) };
            const checked = await breaker.checkToolCall(id, { tool, args });
            out.push(`${i} ${id} check ${tool} ${answer(checked)}`);
            if (checked.action === 'block' || checked.action === 'stop') continue;
            const result = poll ? 'queued' : pick(['done: 3 files', `line ${next(50)}`, 'Error: not found']);
            out.push(`${i} observe ${answer(await breaker.observe(id, { kind: 'tool_call', tool, args, result, error: result.startsWith('Error') }))}`);
          } else if (draw < 55) {
            out.push(`${i} ${id} model ${answer(await breaker.checkModelCall(id))}`);
            const text = pick(['Let me check the status again.', 'Checking the build status now.', `Step ${next(20)} of the plan is done.`]);
            const round = { kind: 'model', promptTokens: 500 + next(3_000), completionTokens: next(400), text } as const;
            out.push(`${i} round ${answer(await breaker.observe(id, round))}`);
          } else if (draw < 63) {
            const query = pick(['deploy status', 'status of deploy', `release notes ${next(5)}`]);
            out.push(`${i} ${id} retrieval ${answer(await breaker.observe(id, { kind: 'retrieval', query, results: [pick(['a', 'b', 'c'])] }))}`);
          } else if (draw < 70) {
            const input = pick(['Summarise the build log', 'Summarise the build log again', `Find test ${next(9)}`]);
            const delegation = { kind: 'delegation', agent: pick(['researcher', 'coder']), input, output: pick(['No findings.', 'Done.']) } as const;
            out.push(`${i} ${id} delegation ${answer(await breaker.observe(id, delegation))}`);
          } else if (draw < 76) {
            out.push(`${i} ${id} user ${answer(await breaker.observe(id, { kind: 'user', text: pick(['continue', 'keep going', 'stop looping']) }))}`);
          } else if (draw < 80) {
            await breaker.reset(id, { evidence: next(2) === 0 });
            out.push(`${i} ${id} reset`);
          } else if (draw < 92) {
            const snapshot = await breaker.snapshot(id);
            // A session whose place in its order went back was forgotten: evicted while CLOSED.
            if ((snapshot.version ?? 0) < (versions.get(id) ?? 0)) out.push(`${i} ${id} forgotten`);
            versions.set(id, snapshot.version ?? 0);
            out.push(`${i} ${id} snapshot ${JSON.stringify(snapshot)}`);
          } else {
            // Mostly short steps; some past the cooldown, a few past idleResetMs.
            time += pick([10, 10, 250, 250, 2_500, 2_500, 25_000]);
          }
        } catch (error) {
          out.push(`${i} ${id} threw ${String(error)}`);
        }
      }
      for (let s = 0; s < 6; s++) out.push(`end s${s} ${JSON.stringify(await breaker.snapshot(`s${s}`))}`);
      return out;
    }
    class QueuedStore extends InMemoryBreakerStore {
      override async read(...args: Parameters<InMemoryBreakerStore['read']>) {
        return super.read(...args);
      }
      override async apply(...args: Parameters<InMemoryBreakerStore['apply']>) {
        return super.apply(...args);
      }
    }
    const options = (now: () => number) => ({ maxSessions: 4, decodedSessions: 2, now });
    const reached: string[] = [];
    for (const seed of [1, 2, 3]) {
      const immediate = await run((now) => new InMemoryBreakerStore(options(now)), seed);
      const queued = await run((now) => new QueuedStore(options(now)), seed);
      assert.equal(immediate.length, queued.length);
      for (const [i, line] of immediate.entries()) assert.equal(line, queued[i], `seed ${seed}, line ${i}`);
      reached.push(...immediate);
    }
    for (const kind of ['stop:tool_spiral', 'stop:budget', 'block:', 'steer:', 'event escalation', 'event state_change', 'HALF_OPEN', 'forgotten']) {
      assert.ok(
        reached.some((line) => line.includes(kind)),
        `the runs reach ${kind}`,
      );
    }
  });

  test('an InMemoryBreakerStore behind a Proxy is used through the Proxy', async () => {
    const expected = await awaited(new AgentBreaker({ telemetry: false }));
    const seen = new Set<string | symbol>();
    const store = new InMemoryBreakerStore();
    const proxied = new Proxy(store, {
      get(target, key) {
        seen.add(key);
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    assert.deepEqual(await awaited(new AgentBreaker({ store: proxied, telemetry: false })), expected);
    assert.ok(seen.has('read') && seen.has('apply'), `went through the proxy: ${[...seen].map(String).join(', ')}`);
  });
});
