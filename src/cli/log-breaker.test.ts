import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerStore } from '../breaker/breaker-store.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { killProcess, startDedicatedRedis, unusedPort } from '../test-support/services.ts';
import { checkBreakerStore, logBreaker } from './log-breaker.ts';

test('warnings are printed at most one per 10 s, saying how many were not; the store check names an unanswering store', async () => {
  const store = new RedisBreakerStore({ url: `redis://:hunter2@127.0.0.1:${await unusedPort()}`, timeoutMs: 200 });
  const breaker = new AgentBreaker({ telemetry: false, store, onStoreError: 'fail-closed' });
  const lines: string[] = [];
  let clock = 0;
  const stop = logBreaker(
    breaker,
    (line) => lines.push(line),
    () => clock,
  );
  try {
    for (let i = 0; i < 3; i += 1) await breaker.observe('s\n1', { kind: 'user', text: 'hello' });
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^breaker warning in session "s\\n1": Agent breaker store apply failed .*failing closed/);
    clock = 9_999;
    await breaker.observe('s\n1', { kind: 'user', text: 'hello' });
    assert.equal(lines.length, 1);
    clock = 10_000;
    await breaker.observe('s\n1', { kind: 'user', text: 'hello' });
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /\(3 more warnings like it since the last printed\)$/);

    await checkBreakerStore(breaker, (line) => lines.push(line));
    assert.match(lines.at(-1)!, /^breaker store is unavailable \(GOVERNOR_BREAKER_STORE: .+\): requests are refused until it is back$/);
    assert.ok(lines.every((line) => !line.includes('hunter2') && !line.includes('\n')));
  } finally {
    stop();
    await store.close();
  }
});

test('a store that answers again is said so: after how long, how many requests went unjudged meanwhile, how many warnings were not printed', {
  timeout: 60_000,
}, async () => {
  const port = await unusedPort();
  let server = await startDedicatedRedis(port);
  const store = new RedisBreakerStore({ url: `redis://127.0.0.1:${port}`, timeoutMs: 500 });
  const breaker = new AgentBreaker({ telemetry: false, store });
  const lines: string[] = [];
  const stop = logBreaker(breaker, (line) => lines.push(line));
  try {
    await breaker.observe('s', { kind: 'user', text: 'hello there, first turn' });
    assert.deepEqual(lines, []);
    await killProcess(server);
    for (let i = 0; i < 3; i++) assert.equal((await breaker.observe('s', { kind: 'user', text: `turn ${i} while the store is down` })).action, 'allow');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /failing open/);
    server = await startDedicatedRedis(port);
    // The restarted Redis forgot the session: the first write that reaches it writes the session back, and that
    // warning is printed, though it comes within 10 s of the outage's (the outage's many do not hold it back).
    const forgotten = /^breaker warning in session "s": Agent breaker store had forgotten this session .*restored from this process\.$/;
    let turn = 0;
    for (const deadline = Date.now() + 20_000; !lines.some((line) => forgotten.test(line)) && Date.now() < deadline; turn++) {
      await breaker.observe('s', { kind: 'user', text: `turn ${turn} once the store is started again` });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(lines.filter((line) => forgotten.test(line)).length, 1, lines.join('\n'));
    for (const deadline = Date.now() + 20_000; !lines.some((line) => /answers again/.test(line)) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The turns that found the store still reconnecting went unjudged too.
    const recovered = lines.filter((line) => /answers again/.test(line));
    assert.equal(recovered.length, 1, lines.join('\n'));
    assert.match(
      recovered[0]!,
      /^breaker store answers again after about \d+ s; \d+ requests were let through unjudged meanwhile; \d+ warnings? (was|were) not printed$/,
    );
    const unjudged = Number(/; (\d+) requests/.exec(recovered[0]!)![1]);
    assert.ok(unjudged >= 3, recovered[0]);
    assert.equal((await breaker.health()).unjudged, unjudged);
    const printed = lines.length;
    // The next outage's first warning is printed at once, not held back by the one printed before the recovery.
    await killProcess(server);
    await breaker.observe('s', { kind: 'user', text: 'a turn in the second outage' });
    assert.equal(lines.length, printed + 1, lines.join('\n'));
    assert.match(lines.at(-1)!, /failing open: the call is let through unjudged\.$/);
  } finally {
    stop();
    await store.close();
    await killProcess(server);
  }
});

test('the store check warns of a Redis that may evict sessions, and says nothing of a healthy one', async () => {
  const port = await unusedPort();
  const server = await startDedicatedRedis(port, ['--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru']);
  const store = new RedisBreakerStore({ url: `redis://127.0.0.1:${port}` });
  const lines: string[] = [];
  try {
    await checkBreakerStore(new AgentBreaker({ telemetry: false, store }), (line) => lines.push(line));
    assert.deepEqual(lines, [
      'breaker store may evict sessions when full (maxmemory-policy volatile-lru), forgetting their trips and budgets: use noeviction, or memory to spare',
    ]);
    lines.length = 0;
    await checkBreakerStore(new AgentBreaker({ telemetry: false }), (line) => lines.push(line));
    assert.deepEqual(lines, []);
  } finally {
    await store.close();
    await killProcess(server);
  }
});

test('a long session id is redacted before it is cut, so no part of a token in it is printed', async () => {
  const token = 'ghp_R4nd0mT0k3nAbCdEfGhIjKlMnOpQrStUvWxY';
  const sessionId = `org-acme-production-eu-west-1/agent-deploy-bot/run-2024-06-01T12:00:00Z/${token}`;
  assert.ok(sessionId.length > 100);
  const breaker = new AgentBreaker({ telemetry: false, textRepetition: { repeats: 2 } });
  const lines: string[] = [];
  logBreaker(breaker, (line) => lines.push(line));
  const reply = 'I am still looking into the deployment and will report back shortly with the results.';
  await breaker.observe(sessionId, { kind: 'model', text: reply, promptTokens: null, completionTokens: null });
  await breaker.observe(sessionId, { kind: 'model', text: reply, promptTokens: null, completionTokens: null });
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0]!, /in session "org-acme-production-eu-west-1\/agent-deploy-bot\/run-2024-06-01T12:00:00Z\/\[REDACTED\]"/);
  assert.ok(!lines[0]!.includes(token.slice(0, 8)), lines[0]);
});

test('a long session id is cut in its middle: two that differ only at the end stay apart in the log', async () => {
  // Claude Code's metadata.user_id: the device first, the session last.
  const idOf = (session: string) => `user:{"device_id":"${'2b'.repeat(32)}","account_uuid":"","session_id":"${session}"}`;
  const breaker = new AgentBreaker({ telemetry: false, textRepetition: { repeats: 2 } });
  const lines: string[] = [];
  logBreaker(breaker, (line) => lines.push(line));
  const reply = 'I am still looking into the deployment and will report back shortly with the results.';
  for (const session of ['5f0c7a1e-0000-4000-8000-000000000001', '5f0c7a1e-0000-4000-8000-000000000002']) {
    for (let i = 0; i < 2; i++) await breaker.observe(idOf(session), { kind: 'model', text: reply, promptTokens: null, completionTokens: null });
  }
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.notEqual(lines[0], lines[1]);
  assert.match(lines[1]!, /000000000002/);
});

test('warnings are throttled by their code: a failing read and a failing write are one kind, two unpriced models two', async () => {
  const failing: BreakerStore = {
    read: () => Promise.reject(new Error('connection reset')),
    apply: () => Promise.reject(new Error('connection reset')),
    delete: () => Promise.resolve(),
  };
  const breaker = new AgentBreaker({ telemetry: false, store: failing, budget: { maxCostUsd: 1 } });
  const lines: string[] = [];
  const stop = logBreaker(
    breaker,
    (line) => lines.push(line),
    () => 0,
  );
  try {
    await breaker.checkModelCall('s');
    await breaker.observe('s', { kind: 'user', text: 'hello' });
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /store read failed \(connection reset\); failing open/);
    const priced = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 1 } });
    const stopPriced = logBreaker(
      priced,
      (line) => lines.push(line),
      () => 0,
    );
    try {
      for (const model of ['house-model-1', 'house-model-2'])
        await priced.observe('t', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '', model });
    } finally {
      stopPriced();
    }
    assert.deepEqual(
      lines.slice(1).map((line) => /model "([^"]+)"/.exec(line)?.[1]),
      ['house-model-1', 'house-model-2'],
    );
  } finally {
    stop();
  }
});
