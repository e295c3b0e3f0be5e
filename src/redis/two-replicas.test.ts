import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { requireRedis } from '../test-support/services.ts';

const run = promisify(execFile);
const WORKER = new URL('../test-support/chat-client-worker.ts', import.meta.url).pathname;

interface WorkerResult {
  escalations: string[];
  executions: number;
  modelCalls: number;
  error?: { name: string; category: string };
}

describe('two ChatClients in two processes on one session, sharing a RedisBreakerStore', () => {
  let url: string;
  before(async () => {
    url = await requireRedis();
  });

  async function replica(session: string, prefix: string, calls: number): Promise<WorkerResult> {
    const { stdout } = await run(process.execPath, [WORKER], {
      env: { ...process.env, WORKER_REDIS_URL: url, WORKER_KEY_PREFIX: prefix, WORKER_SESSION: session, WORKER_CALLS: String(calls) },
      timeout: 30_000,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult;
  }

  test('evidence gathered by one replica counts in the other, and they trip together', async () => {
    const prefix = `governor:test:replicas:${randomUUID()}:`;
    // Replica A checks the same failing job twice: no loop yet on its own.
    const a = await replica('shared', prefix, 2);
    assert.deepEqual(a.escalations, []);
    assert.equal(a.executions, 2);
    // Replica B's first identical check is the third of the session: B is steered at once.
    const b = await replica('shared', prefix, 3);
    assert.equal(b.escalations[0], 'tool_spiral:steer');
    // B keeps going until the shared breaker stops it: later escalations block, then stop.
    assert.deepEqual(b.escalations, ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(b.error?.category, 'tool_spiral');
    // A replica arriving after the trip is refused before its model is called.
    const c = await replica('shared', prefix, 3);
    assert.equal(c.modelCalls, 0);
    assert.equal(c.error?.name, 'BreakerOpenError');
    // Another session is untouched.
    const d = await replica('other', prefix, 2);
    assert.deepEqual(d.escalations, []);
    assert.equal(d.error, undefined);
  });
});
