import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import { AgentBreaker, InMemoryBreakerStore } from './index.ts';
import { BreakerDriver } from './test-support/breaker-driver.ts';

function rejects(options: unknown, option: string) {
  assert.throws(
    () => new AgentBreaker(options as ConstructorParameters<typeof AgentBreaker>[0]),
    (e: unknown) => e instanceof InvalidOptionError && e.option === option,
    `expected InvalidOptionError naming ${option}`,
  );
}

describe('AgentBreaker options', () => {
  test('defaults are documented values', () => {
    const o = new AgentBreaker().options;
    assert.equal(o.toolSpiral.maxRepeats, 4);
    assert.equal(o.toolSpiral.window, 5);
    assert.equal(o.toolSpiral.similarity, 0.8);
    assert.deepEqual(o.toolSpiral.escalation, ['steer', 'block', 'stop']);
    assert.equal(o.errorLoop.maxRepeats, 3);
    assert.equal(o.errorLoop.maxTransientRepeats, 5);
    assert.equal(o.tokenDrift.growthFactor, 1.35);
    assert.equal(o.tokenDrift.consecutive, 3);
    assert.equal(o.ragFixation.consecutive, 3);
    assert.equal(o.ragFixation.similarity, 0.75);
    assert.equal(o.delegation.maxCalls, 3);
    assert.equal(o.delegation.answerSimilarity, 0.65);
    assert.equal(o.budget.maxTokens, 10_000_000);
    assert.equal(o.tokenDrift.minPromptTokens, 5000);
    assert.equal(o.cooldownMs, 60_000);
    assert.equal(o.onStoreError, 'fail-open');
  });

  test('bad values name the option', () => {
    rejects({ toolSpiral: { similarity: 1.5 } }, 'toolSpiral.similarity');
    rejects({ toolSpiral: { similarity: 0 } }, 'toolSpiral.similarity');
    rejects({ toolSpiral: { maxRepeats: 1 } }, 'toolSpiral.maxRepeats');
    rejects({ toolSpiral: { maxRepeats: 6, window: 3 } }, 'toolSpiral.window');
    rejects({ toolSpiral: { escalation: ['steer', 'explode'] } }, 'toolSpiral.escalation');
    rejects({ toolSpiral: { perTool: { search: { maxRepeats: 'x' } } } }, 'toolSpiral.perTool.search.maxRepeats');
    rejects({ errorLoop: { maxTransientRepeats: 2.5 } }, 'errorLoop.maxTransientRepeats');
    rejects({ cycle: { maxPeriod: 1 } }, 'cycle.maxPeriod');
    rejects({ tokenDrift: { growthFactor: 1 } }, 'tokenDrift.growthFactor');
    rejects({ delegation: { subAgentTools: 'researcher' } }, 'delegation.subAgentTools');
    rejects({ delegation: { perAgent: { coder: { maxCalls: 0 } } } }, 'delegation.perAgent.coder.maxCalls');
    rejects({ budget: { maxTokens: -5 } }, 'budget.maxTokens');
    rejects({ onStoreError: 'ignore' }, 'onStoreError');
    rejects({ cooldownMs: -1 }, 'cooldownMs');
    rejects({ cooldownMs: 1.5 }, 'cooldownMs');
    rejects({ checkFreshnessMs: -1 }, 'checkFreshnessMs');
    rejects({ checkFreshnessMs: Number.NaN }, 'checkFreshnessMs');
    rejects({ store: {} }, 'store');
    rejects({ now: 5 }, 'now');
  });

  test('a store is checked when the breaker is built, not when a method is first needed', () => {
    const inner = new InMemoryBreakerStore();
    // A wrapper that forgot delete(): reset() would have thrown in the middle of a run.
    const partial = { read: inner.read.bind(inner), apply: inner.apply.bind(inner) };
    assert.throws(
      () => new AgentBreaker({ store: partial as never }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'store' && /delete is not a function/.test(e.message),
    );
    assert.throws(
      () => new AgentBreaker({ store: { ...partial, delete: inner.delete.bind(inner), ping: 'yes' } as never }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'store.ping' && /must be a function/.test(e.message),
    );
    assert.throws(
      () => new AgentBreaker({ store: null as never }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'store' && /got null/.test(e.message),
    );
    // Methods on a prototype count, as on every class-based store.
    class TracingStore extends InMemoryBreakerStore {}
    assert.ok(new AgentBreaker({ store: new TracingStore() }));
  });

  test('a time above the timer maximum is refused, naming the option and the range', () => {
    for (const option of ['cooldownMs', 'checkFreshnessMs']) {
      for (const value of [3e9, 2 ** 31, Infinity]) {
        assert.throws(
          () => new AgentBreaker({ [option]: value }),
          (e: unknown) => e instanceof InvalidOptionError && e.option === option && /from 0 to 2147483647/.test(e.message),
          `expected ${option}: ${value} to be refused`,
        );
      }
      assert.equal(new AgentBreaker({ [option]: MAX_TIMER_MS }).options[option as 'cooldownMs' | 'checkFreshnessMs'], MAX_TIMER_MS);
      assert.equal(new AgentBreaker({ [option]: 0 }).options[option as 'cooldownMs' | 'checkFreshnessMs'], 0);
    }
  });

  test('misspelt options are rejected rather than ignored', () => {
    rejects({ toolSpiral: { simlarity: 0.9 } }, 'toolSpiral.simlarity');
    rejects({ toolSpirals: {} }, 'toolSpirals');
    rejects({ toolSpiral: { perTool: { search: { windw: 3 } } } }, 'toolSpiral.perTool.search.windw');
  });

  test('options from a JSON config file are accepted', () => {
    const config = JSON.parse('{"toolSpiral":{"maxRepeats":3},"delegation":{"subAgentTools":["researcher"]},"budget":{"maxTokens":50000}}');
    const b = new AgentBreaker(config);
    assert.equal(b.options.toolSpiral.maxRepeats, 3);
    assert.deepEqual(b.options.delegation.subAgentTools, ['researcher']);
  });

  test('bad input to the methods gets a typed error too', async () => {
    const b = new AgentBreaker();
    await assert.rejects(b.checkToolCall('', { tool: 'x', args: {} }), (e: unknown) => e instanceof InvalidOptionError && e.option === 'sessionId');
    await assert.rejects(b.observe('s', { kind: 'nope' } as never), (e: unknown) => e instanceof InvalidOptionError && e.option === 'event.kind');
    await assert.rejects(
      b.observe('s', { kind: 'model', promptTokens: -1, completionTokens: null, text: '' }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'event.promptTokens',
    );
  });
});

describe('evidence windows follow the detector options', () => {
  test('defaults keep the default windows', () => {
    assert.deepEqual(new AgentBreaker().options.windows, { tools: 32, delegations: 12, retrievals: 8, texts: 6 });
    // A tool of its own that may fail 30 times in an outage: room for 29 earlier attempts and as many other calls.
    assert.equal(new AgentBreaker({ errorLoop: { perTool: { deploy: { maxTransientRepeats: 30 } } } }).options.windows.tools, 58);
    assert.equal(new AgentBreaker({ delegation: { perAgent: { coder: { maxCalls: 10 } } } }).options.windows.delegations, 18);
  });

  test('a count beyond a default window is still reached', async () => {
    // A period-5 cycle that must repeat 7 times: 35 tool calls of evidence.
    const cycle = new BreakerDriver(new AgentBreaker({ cycle: { repeats: 8 }, toolSpiral: { enabled: false }, errorLoop: { enabled: false } }));
    const steps = ['a', 'b', 'c', 'd', 'e'].map((t) => [t, { id: t }, `${t} unchanged`] as const);
    let cycleAt = -1;
    for (let i = 0; i < 45 && cycleAt < 0; i += 1) {
      const [tool, args, result] = steps[i % 5]!;
      if ((await cycle.tool(tool, args, result)).decision.category === 'cycle') cycleAt = i;
    }
    assert.equal(cycleAt, 35, 'caught as it starts its 8th round');

    // The same search 40 times: the chain's window is lengthened to match when it is left out.
    const spiral = new BreakerDriver(new AgentBreaker({ toolSpiral: { maxRepeats: 40, maxIdenticalRepeats: 40 }, errorLoop: { enabled: false } }));
    const calls = await spiral.repeat(45, 'search', { q: 'refund policy' }, () => 'No results.');
    assert.equal(
      calls.findIndex((c) => c.decision.category === 'tool_spiral'),
      39,
    );
    // So it is for a count of one tool's own.
    const own = new AgentBreaker({ toolSpiral: { perTool: { poll: { maxRepeats: 8, maxIdenticalRepeats: 8 } } }, errorLoop: { enabled: false } });
    assert.equal(own.options.toolSpiral.window, 7);
    const polls = await new BreakerDriver(own).repeat(12, 'poll', { job: 'build' }, () => 'queued');
    assert.equal(
      polls.findIndex((c) => c.decision.category === 'tool_spiral'),
      7,
    );
    // A window given that no chain of a tool's count fits in is refused, naming what it must be.
    assert.throws(
      () => new AgentBreaker({ toolSpiral: { window: 5, perTool: { poll: { maxRepeats: 8 } } } }),
      (error: unknown) => InvalidOptionError.isInstance(error) && error.option === 'toolSpiral.window' && /perTool maxRepeats - 1 \(7\)/.test(error.message),
    );

    // The same reply, 10 times in a row.
    const text = new BreakerDriver(new AgentBreaker({ textRepetition: { repeats: 10 } }));
    const reply = 'I could not find the refund policy in the knowledge base, please try again later with a different question.';
    let textAt = -1;
    for (let i = 0; i < 15 && textAt < 0; i += 1) if ((await text.model(reply)).category === 'text_repetition') textAt = i;
    assert.equal(textAt, 9);
  });
});
