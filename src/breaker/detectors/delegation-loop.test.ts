import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

describe('delegation loop', () => {
  test('a sub-agent re-asked the same task a third time trips, before it runs', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
    const out = [];
    for (let i = 0; i < 3; i++) {
      out.push(await d.tool('researcher', { task: `find the 2024 revenue of ACME corp ${i === 2 ? 'again' : ''}`.trim() }, `Answer ${i}: sources disagree on ${2000 + i} figures.`));
    }
    assert.deepEqual(out.map((x) => x.decision.action), ['allow', 'allow', 'steer']);
    assert.equal(out[2]!.check.category, 'delegation_loop');
    assert.equal(out[2]!.check.evidence?.pattern, 'reask');
  });

  test('a re-ask answered the same is caught on the second answer', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const answer = 'I could not find the 2024 revenue of ACME corp in the available filings.';
    const first = await d.delegation('researcher', 'find the 2024 revenue of ACME corp', answer);
    const second = await d.delegation('researcher', 'find the 2024 revenue of ACME corp, look harder', `${answer} Sorry.`);
    assert.equal(first.action, 'allow');
    assert.equal(second.action, 'steer');
    assert.equal(second.evidence?.pattern, 'same_answer');
    assert.match(second.message ?? '', /same answer/);
  });

  test('different tasks to one sub-agent are not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const topics = ['revenue of ACME', 'headcount of Globex', 'CEO of Initech', 'founding year of Umbrella', 'HQ city of Hooli'];
    const out = [];
    for (const t of topics) out.push(await d.delegation('researcher', `find the ${t}`, `The ${t} is listed in the report.`));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('maxCalls per agent', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { perAgent: { coder: { maxCalls: 5 } } } }));
    const out = [];
    for (let i = 0; i < 5; i++) out.push(await d.delegation('coder', 'fix the failing test in parser.py', ['Renamed the helper and reran the suite.', 'Added a timezone branch; two tests still fail.', 'Reverted the branch, patched the regex instead.', 'Parser now strips whitespace before matching dates.', 'Made the date format configurable, tests pending.'][i]!));
    assert.deepEqual(out.map((x) => x.action), ['allow', 'allow', 'allow', 'allow', 'steer']);
  });

  test('a user turn restarts the count', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) {
      out.push(await d.delegation('researcher', 'summarise the latest news on ACME', `News item ${i} of the day about a new product line ${i}.`));
      await d.user('Thanks, and now?');
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });
});
