// Breaker evidence is content: it reaches telemetry only with content recording on, which this file turns on.
process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] = 'true';

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, AgentLoop, ChatClient, SimpleLoggerAdvisor, ToolCallAdvisor, type ChatLogRecord } from '../index.ts';
import { OtelHarness } from '../telemetry/test-support/otel-harness.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { SECRET_FORMATS } from './test-support/secret-formats.ts';

const ALL_SECRETS = SECRET_FORMATS.map((f) => f.text).join('\n');

function leaked(text: string): string[] {
  return SECRET_FORMATS.filter((f) => text.includes(f.secret)).map((f) => f.name);
}

const otel = new OtelHarness();
before(() => otel.install());
after(() => otel.uninstall());

/** Every attribute of every span, span event and metric data point, as one text. */
async function telemetryText(): Promise<string> {
  const parts: unknown[] = [];
  for (const span of otel.spans()) {
    parts.push(
      span.name,
      span.attributes,
      span.status,
      span.events.map((e) => [e.name, e.attributes]),
    );
  }
  for (const metric of await otel.metrics()) parts.push(metric.dataPoints.map((p) => p.attributes));
  return JSON.stringify(parts);
}

describe('the twenty secret formats through every sink', () => {
  test('logger records, span attributes, span events with breaker evidence, metric attributes', async () => {
    const repeated = `The app connects with postgres://app:p4ss@w0rdX@db.internal:5432/app and the token ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ every time. `;
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'lookup', arguments: { query: ALL_SECRETS } }] },
        { text: `Here is what I found:\n${ALL_SECRETS}\n${repeated.repeat(4)}` },
      ],
      onExhausted: 'repeat-last',
    }).start();
    const records: ChatLogRecord[] = [];
    const lookup = tool({
      description: 'Looks something up.',
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }): Promise<string> => {
        const error = new Error(`lookup failed for ${query}`);
        error.name = 'LookupError sk_live_4eC39HqLyjWDarjtT1zdp7dcQ2';
        throw error;
      },
    });
    const breaker = new AgentBreaker();
    const events: string[] = [];
    breaker.on((event) => events.push(`${event.type} ${event.category ?? ''}`));
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new SimpleLoggerAdvisor({ log: (r) => records.push(r) }), new ToolCallAdvisor(), breaker)
      .defaultTools({ lookup })
      .telemetry({ recordContent: true })
      .build();
    await client
      .prompt(`Please check these:\n${ALL_SECRETS}`)
      .call()
      .content()
      .catch(() => undefined);

    assert.ok(records.length > 0);
    assert.deepEqual(leaked(JSON.stringify(records)), [], 'in logger records');
    const recorded = await telemetryText();
    assert.match(recorded, /gen_ai\.input\.messages/);
    assert.match(recorded, /\[REDACTED\]/);
    assert.ok(
      events.some((e) => e.includes('text_repetition')),
      `the breaker saw the repetition: ${events.join(', ')}`,
    );
    assert.match(recorded, /governor\.breaker\.detail/);
    assert.deepEqual(leaked(recorded), [], 'in spans, span events or metric attributes');
  });

  test('error messages and AgentLoop result.reason', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ error: { status: 401, message: `Incorrect API key provided. Request was:\n${ALL_SECRETS}` } }],
      onExhausted: 'repeat-last',
    }).start();
    const client = ChatClient.builder(scriptedModel(server)).build();
    const result = await new AgentLoop({ client, finishTool: null }).run('hello');
    assert.equal(result.status, 'error');
    assert.match(result.reason ?? '', /Incorrect API key/);
    assert.deepEqual(leaked(result.reason ?? ''), [], 'in result.reason');
    assert.deepEqual(leaked(await telemetryText()), [], 'in span status or exception events');
  });

  test('governor run prints no secret, as text or as JSON', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ error: { status: 401, message: `Incorrect API key provided. Request was:\n${ALL_SECRETS}` } }],
      onExhausted: 'repeat-last',
    }).start();
    const dir = mkdtempSync(path.join(tmpdir(), 'governor-redaction-'));
    try {
      const bin = new URL('../cli/bin.ts', import.meta.url).pathname;
      for (const extra of [[], ['--json']]) {
        const args = [bin, 'run', 'say hi', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'none', ...extra];
        const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { timeout: 60_000 }).catch(
          (error: { stdout: string; stderr: string }) => error,
        );
        assert.match(stdout, /Incorrect API key/);
        assert.deepEqual(leaked(stdout + stderr), [], `in governor run ${extra.join(' ')}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
