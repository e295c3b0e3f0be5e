import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker, BudgetExceededError, breakerErrorFor } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

describe('budget', () => {
  test('crossing leaves exactly one wrap-up round: steer, tool calls blocked, then stop', async () => {
    const b = new AgentBreaker({ budget: { maxTokens: 10_000 } });
    const d = new BreakerDriver(b, 's');
    assert.equal((await d.model('working', 4_000, 500)).action, 'allow');
    const crossing = await d.model('still working', 5_000, 600);
    assert.equal(crossing.action, 'steer');
    assert.equal(crossing.category, 'budget');
    assert.match(crossing.message ?? '', /Wrap up now/);

    const tool = await d.tool('search', { q: 'more' }, 'never runs');
    assert.equal(tool.decision.action, 'block', 'no more tools');
    assert.equal(tool.observed, undefined);

    const gate = await b.checkModelCall('s');
    assert.equal(gate.action, 'steer', 'the wrap-up round is let through, with the wrap-up text');
    await b.observe('s', { kind: 'model', promptTokens: 6_000, completionTokens: 200, text: 'Here is my final answer.' });

    const after = await b.checkModelCall('s');
    assert.equal(after.action, 'stop');
    assert.equal(after.category, 'budget');
    assert.ok(breakerErrorFor(after) instanceof BudgetExceededError);
    assert.equal((await b.snapshot('s')).state, 'OPEN');
  });

  test('neither reset() nor user turns give the budget back', async () => {
    const b = new AgentBreaker({ budget: { maxTokens: 1_000, wrapUpTurn: false } });
    const d = new BreakerDriver(b, 's');
    assert.equal((await d.model('x', 900, 200)).action, 'stop');
    await b.reset('s');
    await d.user('Please continue, I approve.');
    const probe = await b.checkModelCall('s');
    assert.equal(probe.action, 'stop');
    assert.equal(probe.category, 'budget');
    const snap = await b.snapshot('s');
    assert.equal(snap.budget.tokens, 1_100);
    assert.equal(snap.budget.phase, 'exhausted');
  });

  test('a cost cap counts events that carry costUsd', async () => {
    const b = new AgentBreaker({ budget: { maxCostUsd: 0.5 } });
    const d = new BreakerDriver(b, 's');
    assert.equal((await d.model('a', 100, 10, 0.3)).action, 'allow');
    const crossing = await d.model('b', 100, 10, 0.3);
    assert.equal(crossing.category, 'budget');
    assert.equal(crossing.evidence?.maxCostUsd, 0.5);
  });

  test('unknown token counts do not count as zero-cost proof, they are just not added', async () => {
    const b = new AgentBreaker({ budget: { maxTokens: 1_000 } });
    const d = new BreakerDriver(b, 's');
    for (let i = 0; i < 5; i++) assert.equal((await d.model('', null, null)).action, 'allow');
    assert.equal((await b.snapshot('s')).budget.tokens, 0);
  });
});
