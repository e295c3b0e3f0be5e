import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AgentBreaker, health, healthHandler, InMemoryBreakerStore, InvalidOptionError, type BreakerStore, type HealthReport } from '../index.ts';
import { RedisBreakerStore } from '../redis/index.ts';
import { BreakerDriver } from '../breaker/test-support/breaker-driver.ts';
import { requireRedis, testRedisUrl, unusedPort } from '../test-support/services.ts';

const stores: RedisBreakerStore[] = [];
function redisStore(url: string): RedisBreakerStore {
  const store = new RedisBreakerStore({ url, keyPrefix: `governor:test:${randomUUID()}:`, timeoutMs: 500 });
  stores.push(store);
  return store;
}

before(async () => {
  await requireRedis(testRedisUrl());
});
after(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

describe('health', () => {
  test('answers 200 with the open breakers when every store answers', async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    await new BreakerDriver(breaker, 'looping-session').repeat(6, 'get_status', { job: 'build' }, () => 'queued');
    const shared = new AgentBreaker({ telemetry: false, store: redisStore(testRedisUrl()) });
    const handler = healthHandler({ breakers: { local: breaker, shared } });

    const response = await handler(new Request('http://localhost/health'));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const report = (await response.json()) as HealthReport;
    assert.equal(report.status, 'UP');
    assert.deepEqual(report.components['local'], {
      status: 'UP',
      details: { openSessions: 1, open: ['looping-session'], storeReachable: true, storeErrors: 0 },
    });
    assert.equal(report.components['shared']?.status, 'UP');
    assert.equal(report.components['shared']?.details?.['storeReachable'], true);
  });

  test('an open session whose id holds a secret is listed masked, as logs show it', async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const id = 'ci-job password=hunter2 ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    await new BreakerDriver(breaker, id).repeat(6, 'get_status', { job: 'build' }, () => 'queued');
    const body = await (await healthHandler({ breakers: { local: breaker } })(new Request('http://localhost/health'))).text();
    assert.match(body, /"open":\["ci-job password=\[REDACTED\]/);
    assert.doesNotMatch(body, /hunter2|ghp_abcdefghij/);
  });

  test("no address leaves the report: a URL in a session id, a socket error's host or IP", async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    await new BreakerDriver(breaker, 'loop-postgres://appuser:Hunter2Pa55@db.internal:5432/prod').repeat(6, 'get_status', { job: 'build' }, () => 'queued');
    const failing = (message: string) => () => Promise.reject(new Error(message));
    const report = await health({
      breakers: { local: breaker },
      checks: {
        cache: failing('connect ECONNREFUSED 10.20.30.40:6379'),
        search: failing('getaddrinfo ENOTFOUND es-prod-1.corp.internal'),
        queue: failing('connection to 10.1.2.3 timed out'),
      },
    });
    const body = JSON.stringify(report);
    assert.doesNotMatch(body, /Hunter2|db\.internal|10\.20\.30\.40|es-prod-1|10\.1\.2\.3/);
    assert.deepEqual(report.components['local']?.details?.['open'], ['loop-postgres://***']);
    assert.deepEqual(
      ['cache', 'search', 'queue'].map((name) => report.components[name]?.details?.['error']),
      ['connect ECONNREFUSED ***', 'getaddrinfo ENOTFOUND ***', 'connection to *** timed out'],
    );
  });

  test("answers 503 when a store is unreachable, without the URL's password", async () => {
    const url = `redis://admin:s3cret-pw@127.0.0.1:${await unusedPort()}`;
    const down = new AgentBreaker({ telemetry: false, store: redisStore(url) });
    const up = new AgentBreaker({ telemetry: false });
    const response = await healthHandler({ breakers: { down, up } })(new Request('http://localhost/health'));
    assert.equal(response.status, 503);
    const body = await response.text();
    assert.doesNotMatch(body, /s3cret-pw|127\.0\.0\.1/);
    const report = JSON.parse(body) as HealthReport;
    assert.equal(report.status, 'DOWN');
    assert.equal(report.components['up']?.status, 'UP');
    assert.equal(report.components['down']?.status, 'DOWN');
    assert.equal(report.components['down']?.details?.['storeReachable'], false);
    assert.match(String(report.components['down']?.details?.['error']), /ping failed/);
  });

  test('a store that answers again is UP, and says why the calls it missed went unjudged', async () => {
    const inner = new InMemoryBreakerStore();
    let failures = 1;
    const store: BreakerStore = {
      read: (sessionId) => inner.read(sessionId),
      delete: (sessionId) => inner.delete(sessionId),
      apply: (sessionId, op, reducer) =>
        failures-- > 0 ? Promise.reject(new Error("READONLY You can't write against a read only replica.")) : inner.apply(sessionId, op, reducer),
    };
    const breaker = new AgentBreaker({ telemetry: false, store });
    await breaker.observe('s', { kind: 'user', text: 'hello' });
    let report = await health({ breakers: { main: breaker } });
    assert.equal(report.components['main']?.status, 'DOWN');
    assert.match(String(report.components['main']?.details?.['error']), /^READONLY You can't write/);
    await breaker.observe('s', { kind: 'user', text: 'hello again' });
    report = await health({ breakers: { main: breaker } });
    assert.equal(report.components['main']?.status, 'UP');
    assert.equal(report.components['main']?.details?.['error'], undefined);
    assert.equal(report.components['main']?.details?.['unjudged'], 1);
    assert.match(String(report.components['main']?.details?.['lastStoreError']), /^READONLY You can't write/);
  });

  test("serves Node's (req, res) too, and refuses methods other than GET and HEAD", async () => {
    let healthy = true;
    const handler = healthHandler({
      checks: {
        database: () => {
          if (!healthy) throw new Error('connect ECONNREFUSED postgres://app:pw123@db:5432');
        },
      },
    });
    const server = http.createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/health`;
    try {
      const ok = await fetch(url);
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { status: 'UP', components: { database: { status: 'UP' } } });

      healthy = false;
      const failing = await fetch(url);
      assert.equal(failing.status, 503);
      const text = await failing.text();
      assert.doesNotMatch(text, /pw123/);
      // Nor the host: a public health endpoint does not map the internal network.
      assert.doesNotMatch(text, /@db:5432/);
      assert.match(text, /ECONNREFUSED postgres:\/\/\*\*\*/);

      const head = await fetch(url, { method: 'HEAD' });
      assert.equal(head.status, 503);
      assert.equal(await head.text(), '');

      const post = await fetch(url, { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('a cost cap that cannot be enforced is reported as a warning; the breaker stays UP', async () => {
    const breaker = new AgentBreaker({ telemetry: false, budget: { maxCostUsd: 1 } });
    await breaker.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '', model: 'house-model-7' });
    const report = await health({ breakers: { main: breaker } });
    assert.equal(report.status, 'UP');
    const details = report.components['main']?.details;
    assert.equal(report.components['main']?.status, 'UP');
    assert.equal(details?.['costBudget'], 'not_enforceable');
    assert.deepEqual(details?.['unpricedModels'], ['house-model-7']);
    assert.match(String((details?.['warnings'] as unknown[] | undefined)?.[0]), /maxCostUsd is not enforceable/);
  });

  test('a check slower than timeoutMs is DOWN; health() itself never throws', async () => {
    const report = await health({ checks: { slow: () => new Promise((resolve) => setTimeout(resolve, 1000).unref()), fast: () => 'ok' }, timeoutMs: 50 });
    assert.equal(report.status, 'DOWN');
    assert.equal(report.components['fast']?.status, 'UP');
    assert.match(String(report.components['slow']?.details?.['error']), /no answer within 50 ms/);
  });

  test('bad options are rejected at construction, naming the option', () => {
    assert.throws(
      () => healthHandler({ breakers: { x: {} as AgentBreaker } }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'breakers.x',
    );
    assert.throws(
      () => healthHandler({ timeoutMs: 0 }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'timeoutMs',
    );
  });
});
