import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InMemoryBreakerStore } from '../breaker/in-memory-breaker-store.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { requireRedis } from '../test-support/services.ts';
import { type CallVerdict, judgedRequestsFor } from './judged-requests.ts';

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
const VERDICTS: CallVerdict[] = [
  { print: 'p1', action: 'allow' },
  { print: 'p2', action: 'steer', message: `You have called "search" with ${SECRET} 3 times.` },
];

describe('verdicts kept for a retry', () => {
  test('without a store that keeps notes, this process keeps them: for the request they were given for, and only while they are the latest', async () => {
    const judged = judgedRequestsFor(new InMemoryBreakerStore());
    await judged.put('s', 'r1', VERDICTS);
    assert.deepEqual(await judged.of('s', 'r1'), VERDICTS);
    assert.equal(await judged.of('s', 'r0'), undefined);
    assert.equal(await judged.of('other', 'r1'), undefined);
    await judged.put('s', 'r2', [{ print: 'p1', action: 'block', message: 'not run' }]);
    assert.equal(await judged.of('s', 'r1'), undefined);
  });

  describe('on a shared Redis store', () => {
    let url: string;
    const stores: RedisBreakerStore[] = [];
    before(async () => {
      url = await requireRedis();
    });
    after(async () => {
      for (const store of stores) await store.close();
    });

    test('another replica reads them, the messages redacted; the store holds no secret', async () => {
      const keyPrefix = `governor:test:judged:${randomUUID()}:`;
      const [a, b] = [new RedisBreakerStore({ url, keyPrefix }), new RedisBreakerStore({ url, keyPrefix })] as const;
      stores.push(a, b);
      await judgedRequestsFor(a).put('s', 'r1', VERDICTS);
      const there = await judgedRequestsFor(b).of('s', 'r1');
      assert.deepEqual(there?.[0], VERDICTS[0]);
      assert.equal(there?.[1]?.action, 'steer');
      assert.match(there?.[1]?.message ?? '', /^You have called "search" with \[REDACTED\] 3 times\.$/);
      assert.doesNotMatch((await b.readNote('s', 'request-verdicts')) ?? '', /sk-proj/);
    });

    test('a note another version wrote (or garbage) counts as none, and so does a store that fails', async () => {
      const keyPrefix = `governor:test:judged:${randomUUID()}:`;
      const store = new RedisBreakerStore({ url, keyPrefix });
      stores.push(store);
      const judged = judgedRequestsFor(store);
      for (const note of ['not json', '{"request":"r1","calls":[["p1","maybe"]]}', '{"request":"r1","calls":{}}']) {
        await store.putNote('s', 'request-verdicts', note);
        assert.equal(await judged.of('s', 'r1'), undefined, note);
      }
      const failing = new RedisBreakerStore({ url, keyPrefix });
      await failing.close();
      const unreachable = judgedRequestsFor(failing);
      await unreachable.put('s', 'r1', VERDICTS);
      // This process still knows what it judged.
      assert.deepEqual(await unreachable.of('s', 'r1'), VERDICTS);
      assert.equal(await unreachable.of('s', 'r2'), undefined);
    });
  });
});
