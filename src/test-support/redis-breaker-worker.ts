/**
 * A separate process holding its own AgentBreaker on a RedisBreakerStore, for
 * tests that need two replicas (or a Redis outage) for real. Driven over IPC:
 * the parent sends `{ id, op, sessionId, arg }`, the worker answers
 * `{ id, decision }`; breaker events are forwarded as `{ event }`. Any crash
 * is reported as `{ crash }` before exiting non-zero.
 */
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerEvent, ProposedToolCall } from '../breaker/breaker-event.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';

interface Request {
  readonly id: number;
  readonly op: 'checkModelCall' | 'checkToolCall' | 'observe' | 'exit';
  readonly sessionId: string;
  readonly arg?: unknown;
}

const send = (message: unknown): void => {
  process.send?.(message);
};

for (const signal of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(signal, (error: unknown) => {
    send({ crash: `${signal}: ${error instanceof Error ? error.stack : String(error)}` });
    process.exit(1);
  });
}

const url = process.env['WORKER_REDIS_URL'];
const keyPrefix = process.env['WORKER_KEY_PREFIX'];
const onStoreError = process.env['WORKER_ON_STORE_ERROR'] === 'fail-closed' ? 'fail-closed' : 'fail-open';
if (!url || !keyPrefix) throw new Error('WORKER_REDIS_URL and WORKER_KEY_PREFIX are required');

const store = new RedisBreakerStore({ url, keyPrefix, timeoutMs: 1000 });
const breaker = new AgentBreaker({ store, onStoreError, telemetry: false, checkFreshnessMs: 0 });
breaker.on((event) => send({ event }));

process.on('message', (raw: unknown) => {
  const request = raw as Request;
  void (async () => {
    if (request.op === 'exit') {
      await store.close();
      send({ id: request.id, decision: null });
      process.disconnect();
      return;
    }
    const decision =
      request.op === 'checkModelCall'
        ? await breaker.checkModelCall(request.sessionId)
        : request.op === 'checkToolCall'
          ? await breaker.checkToolCall(request.sessionId, request.arg as ProposedToolCall)
          : await breaker.observe(request.sessionId, request.arg as BreakerEvent);
    send({ id: request.id, decision });
  })();
});

send({ ready: true });
