import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

const docs = ['doc-7: refund policy overview', 'doc-9: shipping times'];

describe('RAG fixation', () => {
  test('three near-identical queries returning the same documents trip', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('refund policy for damaged items', docs),
      await d.retrieval('refund policy for damaged items please', docs),
      await d.retrieval('refund policy for damaged items', docs),
    ];
    assert.deepEqual(out.map((x) => x.action), ['allow', 'allow', 'steer']);
    assert.equal(out[2]!.category, 'rag_fixation');
    assert.match(out[2]!.message ?? '', /searches/);
  });

  test('near-identical queries whose results change are exploring, not fixated', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 5; i++) out.push(await d.retrieval('refund policy for damaged items', [`doc-${i}`, `doc-${i + 10}`]));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('different queries are not fixation', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('refund policy', docs),
      await d.retrieval('shipping to canada', docs),
      await d.retrieval('warranty on laptops', docs),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('a user turn between queries restarts the evidence', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) {
      out.push(await d.retrieval('refund policy for damaged items', docs));
      await d.user('And what about this one?');
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('escalates to a stop when it goes on', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) out.push(await d.retrieval('refund policy for damaged items', docs));
    assert.deepEqual(out.map((x) => x.action), ['allow', 'allow', 'steer', 'stop']);
  });
});
