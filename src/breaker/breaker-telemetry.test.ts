import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, test } from 'node:test';
import {
  context,
  createNoopMeter,
  metrics,
  ROOT_CONTEXT,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Counter,
  type MeterProvider,
  type Span,
} from '@opentelemetry/api';
import { AgentBreaker } from './index.ts';
import { BreakerDriver } from './test-support/breaker-driver.ts';

/** The smallest async context manager: enough for an active span to survive awaits. */
class TestContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

describe('OpenTelemetry', () => {
  test('every escalation is a span event on the active span and a counter increment by category and action', async () => {
    const counted: Array<{ value: number; attributes: Attributes | undefined }> = [];
    const provider: MeterProvider = {
      getMeter: () => ({
        ...createNoopMeter(),
        createCounter: () => ({ add: (value: number, attributes?: Attributes) => counted.push({ value, attributes }) }) as Counter,
      }),
    };
    metrics.setGlobalMeterProvider(provider);
    context.setGlobalContextManager(new TestContextManager());
    const spanEvents: Array<{ name: string; attributes: Attributes | undefined }> = [];
    const span = { addEvent: (name: string, attributes?: Attributes) => spanEvents.push({ name, attributes }) } as unknown as Span;

    const d = new BreakerDriver(new AgentBreaker(), 's');
    await context.with(trace.setSpan(ROOT_CONTEXT, span), () => d.repeat(6, 'get_status', { job: 'build' }, () => 'queued'));

    assert.deepEqual(
      counted.map((c) => c.attributes),
      [
        { category: 'tool_spiral', action: 'steer' },
        { category: 'tool_spiral', action: 'block' },
        { category: 'tool_spiral', action: 'stop' },
      ],
    );
    const names = spanEvents.map((e) => e.name);
    assert.deepEqual(names, ['governor.breaker.escalation', 'governor.breaker.escalation', 'governor.breaker.escalation', 'governor.breaker.state_change']);
    assert.equal(spanEvents[0]!.attributes?.['governor.breaker.category'], 'tool_spiral');
    assert.equal(spanEvents[3]!.attributes?.['governor.breaker.to'], 'OPEN');
    // Content recording is off (the default): the evidence, which may quote the agent, is left out.
    assert.ok(spanEvents.every((e) => e.attributes?.['governor.breaker.detail'] === undefined));
  });

  test('a repeated sentence quoting a password is not recorded while content recording is off', async () => {
    context.setGlobalContextManager(new TestContextManager());
    const spanEvents: Array<{ name: string; attributes: Attributes | undefined }> = [];
    const span = { addEvent: (name: string, attributes?: Attributes) => spanEvents.push({ name, attributes }) } as unknown as Span;
    const d = new BreakerDriver(new AgentBreaker(), 'quote');
    const sentence = 'Connect to the database with DB_PASSWORD=Hunter2Secret now please. ';
    await context.with(trace.setSpan(ROOT_CONTEXT, span), () => d.model(sentence.repeat(4)));
    assert.ok(
      spanEvents.some((e) => e.attributes?.['governor.breaker.category'] === 'text_repetition'),
      JSON.stringify(spanEvents),
    );
    assert.doesNotMatch(JSON.stringify(spanEvents), /hunter2secret|Hunter2Secret/i);
  });

  test('a warning is a span event with its code and its message', async () => {
    context.setGlobalContextManager(new TestContextManager());
    const spanEvents: Array<{ name: string; attributes: Attributes | undefined }> = [];
    const span = { addEvent: (name: string, attributes?: Attributes) => spanEvents.push({ name, attributes }) } as unknown as Span;
    const breaker = new AgentBreaker({ budget: { maxCostUsd: 1 } });
    await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
      breaker.observe('w', { kind: 'model', promptTokens: 10, completionTokens: 1, text: '', model: 'house-model-3' }),
    );
    assert.deepEqual(spanEvents, [
      {
        name: 'governor.breaker.warning',
        attributes: {
          'governor.breaker.session_id': 'w',
          'governor.breaker.code': 'cost_not_enforceable',
          'governor.breaker.message': 'budget.maxCostUsd is not enforceable: model "house-model-3" has no price; price its rounds (costUsd).',
        },
      },
    ]);
  });

  test('with telemetry off nothing is recorded', async () => {
    let added = 0;
    metrics.disable();
    metrics.setGlobalMeterProvider({
      getMeter: () => ({ ...createNoopMeter(), createCounter: () => ({ add: () => added++ }) as Counter }),
    });
    const d = new BreakerDriver(new AgentBreaker({ telemetry: false }), 's');
    await d.repeat(5, 'get_status', { job: 'build' }, () => 'queued');
    assert.equal(added, 0);
  });
});
