import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, ChatClient, ToolCallAdvisor, ToolSpiralError, type BreakerStore } from '../index.ts';
import { BreakerDriver } from '../breaker/test-support/breaker-driver.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { OtelHarness } from './test-support/otel-harness.ts';
import { getStatus, stuckOnStatus } from './test-support/stuck-agent.ts';

// The process default says "record content": each test checks that a client's own setting wins over it.
// Set before anything reads the defaults (they are read once, lazily); this file runs in its own process.
process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] = 'true';

const otel = new OtelHarness();

/** Runs `fn` inside the application's own span, as a request handler would, and returns that span's events. */
async function inApplicationSpan(fn: () => Promise<unknown>): Promise<Array<{ name: string; attributes: Record<string, unknown> }>> {
  await trace.getTracer('app').startActiveSpan('POST /agent', async (span) => {
    try {
      await fn();
    } finally {
      span.end();
    }
  });
  return otel.span('POST /agent').events.map((e) => ({ name: e.name, attributes: { ...e.attributes } }));
}

describe("the breaker's telemetry follows the settings of the ChatClient call it judges", () => {
  beforeEach(() => {
    otel.install();
  });
  afterEach(async () => {
    await otel.uninstall();
  });
  after(async () => {
    await otel.uninstall();
  });

  test('a client with telemetry off adds no breaker events to the span it runs in and counts nothing', async () => {
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker())
      .defaultTools({ get_status: getStatus })
      .telemetry({ enabled: false, recordContent: false })
      .build();
    const events = await inApplicationSpan(() =>
      assert.rejects(client.prompt('Is the build done?').call().content(), (e: unknown) => e instanceof ToolSpiralError),
    );
    assert.deepEqual(events, []);
    assert.deepEqual(await otel.points('governor.breaker.escalations'), []);
    assert.deepEqual(otel.tree(), ['POST /agent']);
  });

  test('in stream() too', async () => {
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker())
      .defaultTools({ get_status: getStatus })
      .telemetry({ enabled: false })
      .build();
    const events = await inApplicationSpan(() =>
      assert.rejects(async () => {
        for await (const _ of client.prompt('Is the build done?').stream().chatResponse());
      }, ToolSpiralError),
    );
    assert.deepEqual(events, []);
    assert.deepEqual(await otel.points('governor.breaker.escalations'), []);
  });

  test('a client with telemetry off does not count the operations its breaker could not judge', async () => {
    const failing: BreakerStore = {
      read: () => Promise.reject(new Error('ECONNREFUSED')),
      apply: () => Promise.reject(new Error('ECONNREFUSED')),
      delete: () => Promise.resolve(),
    };
    const build = (enabled: boolean) =>
      ChatClient.builder(mockModel([{ text: 'ok' }]))
        .defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker({ store: failing }))
        .telemetry({ enabled })
        .build();
    assert.equal(await build(false).prompt('hi').call().content(), 'ok');
    assert.deepEqual(await otel.points('governor.breaker.unjudged'), []);
    // The same client with telemetry on counts them: the test can see the counter.
    assert.equal(await build(true).prompt('hi').call().content(), 'ok');
    assert.notDeepEqual(await otel.points('governor.breaker.unjudged'), []);
  });

  test("a breaker judged under a span of the application's inside the call keeps the evidence out when the call does not record content; outside a call the default decides", async () => {
    // A tool that drives a breaker of its own inside a span of its own: the active span is not Governor's.
    const inner = new AgentBreaker();
    const lookup = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: () =>
        trace.getTracer('app').startActiveSpan('db lookup', async (span) => {
          try {
            await new BreakerDriver(inner, 'inner').repeat(6, 'get_status', { job: 'build' }, () => 'queued');
            return 'found';
          } finally {
            span.end();
          }
        }),
    });
    const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'lookup', input: { id: '7' } }] }, { text: 'Done.' }]))
      .defaultAdvisors(new ToolCallAdvisor())
      .defaultTools({ lookup })
      .telemetry({ recordContent: false })
      .build();
    assert.equal(await client.prompt('Look up 7.').call().content(), 'Done.');
    const escalations = otel.span('db lookup').events.filter((e) => e.name === 'governor.breaker.escalation');
    assert.equal(escalations.length, 3);
    assert.ok(
      escalations.every((e) => e.attributes?.['governor.breaker.detail'] === undefined),
      'the call said recordContent: false, whatever the environment says',
    );

    // Outside any ChatClient call, the process default (here: record content) decides.
    const outside = await inApplicationSpan(() => new BreakerDriver(new AgentBreaker(), 'outside').repeat(6, 'get_status', { job: 'build' }, () => 'queued'));
    const details = outside.filter((e) => e.name === 'governor.breaker.escalation').map((e) => e.attributes['governor.breaker.detail']);
    assert.equal(details.length, 3);
    assert.ok(
      details.every((detail) => typeof detail === 'string' && detail.includes('get_status')),
      JSON.stringify(details),
    );
  });
});
