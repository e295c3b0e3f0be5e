import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AgentBreaker, ChatClient } from '../index.ts';
import { BreakerDriver } from '../breaker/test-support/breaker-driver.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { OtelHarness } from './test-support/otel-harness.ts';

// In a file of its own: the defect shows only in a process where no breaker was built before the first metric.
const otel = new OtelHarness();

after(async () => {
  await otel.uninstall();
});

test('a breaker built after the first metric was recorded still reports to the governor.breaker.open gauge', async () => {
  otel.install();
  // A model call records metrics before any breaker exists.
  await ChatClient.builder(mockModel([{ text: 'Hello.' }]))
    .build()
    .prompt('Hi')
    .call()
    .content();
  assert.ok((await otel.points('gen_ai.client.operation.duration')).length > 0);

  const breaker = new AgentBreaker();
  await new BreakerDriver(breaker, 's1').repeat(6, 'get_status', { job: 'build' }, () => 'queued');
  assert.deepEqual(await breaker.openSessions(), ['s1']);
  assert.deepEqual(
    (await otel.points('governor.breaker.open')).map((p) => p.value),
    [1],
  );
});
