import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { APICallError } from '@ai-sdk/provider';
import { RetryError, StreamProviderError } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { tool } from 'ai';
import { z } from 'zod';
import {
  ChatClient,
  CONVERSATION_ID,
  MODEL_CALL_LISTENERS,
  ModelStallError,
  TOOL_CALL_LISTENERS,
  ToolCallingAdvisor,
  type ChatClientRequestSpec,
  type ModelOptions,
  type ModelRetryEvent,
  type ToolCallInfo,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type ScriptedTurn } from '../testing/index.ts';
import { OtelHarness } from '../telemetry/test-support/otel-harness.ts';

type Mode = 'call' | 'stream';

async function answer(spec: ChatClientRequestSpec, mode: Mode): Promise<string> {
  if (mode === 'call') return spec.call().content();
  let text = '';
  for await (const delta of spec.stream().content()) text += delta;
  return text;
}

async function setup(script: ScriptedTurn[], options: ModelOptions = {}) {
  const server = await new ScriptedModelServer({ script }).start();
  const retries: ModelRetryEvent[] = [];
  const client = ChatClient.builder(scriptedModel(server))
    .defaultOptions({ retryDelayMs: 5, ...options })
    .defaultAdvisorParams({ [MODEL_CALL_LISTENERS]: [{ onRetry: (e: ModelRetryEvent) => retries.push(e) }] })
    .build();
  return { server, client, retries };
}

for (const mode of ['call', 'stream'] as const) {
  describe(`model call retries (${mode})`, () => {
    test('503, 503, success: the call succeeds after two retries and reports them', async () => {
      const { server, client, retries } = await setup([
        { error: { status: 503 } },
        { error: { status: 503 } },
        { text: 'third time lucky', usage: { promptTokens: 10, completionTokens: 3 } },
      ]);
      await using _ = server;
      assert.equal(await answer(client.prompt('hi'), mode), 'third time lucky');
      assert.equal(server.requests.length, 3);
      assert.deepEqual(
        retries.map((r) => [r.attempt, r.statusCode, r.maxRetries, r.fromRetryAfter]),
        [
          [1, 503, 2, false],
          [2, 503, 2, false],
        ],
      );
    });

    test('usage counts only the attempt that answered', async () => {
      const { server, client } = await setup([{ error: { status: 500 } }, { text: 'ok', usage: { promptTokens: 10, completionTokens: 3 } }]);
      await using _ = server;
      const response = await client.prompt('hi').call().chatResponse();
      assert.deepEqual(response.totalUsage, { inputTokens: 10, outputTokens: 3, cachedInputTokens: 0 });
    });

    test('429 with retry-after-ms: the wait is honoured', async () => {
      const { server, client, retries } = await setup([{ error: { status: 429, retryAfterMs: 400 } }, { text: 'ok' }], { retryDelayMs: 1 });
      await using _ = server;
      const started = performance.now();
      assert.equal(await answer(client.prompt('hi'), mode), 'ok');
      assert.ok(performance.now() - started >= 390, 'the client waited as long as the server asked');
      assert.equal(retries.length, 1);
      assert.equal(retries[0]!.delayMs, 400);
      assert.equal(retries[0]!.fromRetryAfter, true);
    });

    test('a 400 is not retried', async () => {
      const { server, client, retries } = await setup([{ error: { status: 400 } }, { text: 'never' }]);
      await using _ = server;
      await assert.rejects(answer(client.prompt('hi'), mode), (e: unknown) => APICallError.isInstance(e) && e.statusCode === 400);
      assert.equal(server.requests.length, 1);
      assert.equal(retries.length, 0);
    });

    test('retries stop at maxRetries with a RetryError holding every attempt', async () => {
      const { server, client } = await setup([{ error: { status: 502 } }], { maxRetries: 1 });
      await using _ = server;
      await assert.rejects(
        answer(client.prompt('hi'), mode).finally(() => undefined),
        (e: unknown) => {
          assert.ok(RetryError.isInstance(e));
          assert.equal(e.errors.length, 2);
          return true;
        },
      );
      assert.equal(server.requests.length, 2);
    });

    test("the RetryError's message, which quotes the last error, holds no secret; the errors keep theirs", async () => {
      const key = 'sk-proj-Zq8vT3kLmN4pR7sW2xY5bC9dF1gH6jK0aE3iO8uQ';
      const overloaded: ScriptedTurn = { error: { status: 503, message: `Overloaded while checking key ${key}` } };
      const { server, client } = await setup([overloaded, overloaded], { maxRetries: 1 });
      await using _ = server;
      await assert.rejects(answer(client.prompt('hi'), mode), (e: unknown) => {
        assert.ok(RetryError.isInstance(e));
        assert.ok(!e.message.includes(key), e.message);
        assert.match(e.message, /Overloaded while checking key \[REDACTED\]/);
        assert.ok(String((e.lastError as Error).message).includes(key), 'the provider error is kept whole');
        return true;
      });
    });

    test('a stalled connection (headers, no body) is cancelled and retried', async () => {
      const { server, client, retries } = await setup([{ stall: true }, { text: 'fresh connection' }], { stallTimeoutMs: 300 });
      await using _ = server;
      assert.equal(await answer(client.prompt('hi'), mode), 'fresh connection');
      assert.equal(retries.length, 1);
      assert.ok(ModelStallError.isInstance(retries[0]!.error));
    });

    test('without retries a stall fails the call with ModelStallError', async () => {
      const { server, client } = await setup([{ stall: true }], { stallTimeoutMs: 200, maxRetries: 0 });
      await using _ = server;
      await assert.rejects(answer(client.prompt('hi'), mode), (e: unknown) => ModelStallError.isInstance(e) && e.code === 'GOVERNOR_MODEL_STALLED');
    });

    test('the abort signal cancels the wait between attempts', async () => {
      const { server, client } = await setup([{ error: { status: 429, retryAfterMs: 30_000 } }, { text: 'too late' }]);
      await using _ = server;
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user gave up')), 100);
      const started = performance.now();
      await assert.rejects(answer(client.prompt('hi').abortSignal(controller.signal), mode), /user gave up/);
      assert.ok(performance.now() - started < 10_000, 'the 30 s wait was cancelled');
      assert.equal(server.requests.length, 1);
    });
  });
}

test('a retry names the same session as the tool calls of its request', async () => {
  await using server = await new ScriptedModelServer({
    script: [
      { error: { status: 503 } },
      { toolCalls: [{ name: 'ping', arguments: {} }] },
      { text: 'done' },
      { error: { status: 503 } },
      { toolCalls: [{ name: 'ping', arguments: {} }] },
      { text: 'done again' },
    ],
  }).start();
  const retries: ModelRetryEvent[] = [];
  const toolCalls: ToolCallInfo[] = [];
  const client = ChatClient.builder(scriptedModel(server))
    .defaultOptions({ retryDelayMs: 5 })
    .defaultAdvisors(new ToolCallingAdvisor())
    .defaultTools({ ping: tool({ inputSchema: z.object({}), execute: async () => 'pong' }) })
    .defaultAdvisorParams({
      [MODEL_CALL_LISTENERS]: [{ onRetry: (e: ModelRetryEvent) => retries.push(e) }],
      [TOOL_CALL_LISTENERS]: [{ onToolCallStart: (e: ToolCallInfo) => toolCalls.push(e) }],
    })
    .build();
  // No conversation id: the call gets a session of its own, not the shared 'default'.
  assert.equal(await client.prompt('hi').call().content(), 'done');
  assert.equal(retries.length, 1);
  assert.equal(toolCalls.length, 1);
  assert.notEqual(retries[0]!.sessionId, 'default');
  assert.equal(retries[0]!.sessionId, toolCalls[0]!.sessionId);
  // A named conversation is the session of both.
  assert.equal(
    await client
      .prompt('again')
      .advisors((a) => a.param(CONVERSATION_ID, 'c-7'))
      .call()
      .content(),
    'done again',
  );
  assert.deepEqual([retries[1]!.sessionId, toolCalls[1]!.sessionId], ['c-7', 'c-7']);
});

test('each retry is an event on the round span', async () => {
  const otel = new OtelHarness().install();
  try {
    const { server, client } = await setup([{ error: { status: 503 } }, { text: 'ok' }]);
    await using _ = server;
    await client.prompt('hi').call().content();
    const span = otel.spans().find((s) => s.name.startsWith('chat '));
    assert.ok(span, 'a chat span was recorded');
    const events = span.events.filter((e) => e.name === 'governor.retry');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.attributes?.['http.response.status_code'], 503);
    assert.equal(events[0]!.attributes?.['governor.retry.attempt'], 1);
  } finally {
    await otel.uninstall();
  }
});

test('a slow stream consumer is not mistaken for a stalled model', async () => {
  const { server, client, retries } = await setup([{ text: 'one two three' }], { stallTimeoutMs: 100, maxRetries: 0 });
  await using _ = server;
  let text = '';
  for await (const delta of client.prompt('hi').stream().content()) {
    text += delta;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  assert.equal(text, 'one two three');
  assert.equal(retries.length, 0);
});

describe("a provider's error inside the stream", () => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  const answer = (text: string): LanguageModelV4StreamPart[] => [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: text },
    { type: 'text-end', id: 't' },
    { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } },
  ];
  // What @ai-sdk/anthropic passes on for an `overloaded_error` event: a plain object, not an Error.
  const overloaded = { type: 'overloaded_error', message: 'Overloaded' };

  test('an overload before any output is retried; the answer comes from the next attempt', async () => {
    const streams: LanguageModelV4StreamPart[][] = [
      [
        { type: 'stream-start', warnings: [] },
        { type: 'error', error: overloaded },
      ],
      [{ type: 'stream-start', warnings: [] }, ...answer('Hello after the overload.')],
    ];
    const model = new MockLanguageModelV4({ doStream: async () => ({ stream: convertArrayToReadableStream(streams.shift() ?? []) }) });
    const retries: ModelRetryEvent[] = [];
    const client = ChatClient.builder(model)
      .defaultOptions({ retryDelayMs: 5 })
      .defaultAdvisorParams({ [MODEL_CALL_LISTENERS]: [{ onRetry: (e: ModelRetryEvent) => retries.push(e) }] })
      .build();
    let text = '';
    for await (const delta of client.prompt('hi').stream().content()) text += delta;
    assert.equal(text, 'Hello after the overload.');
    assert.equal(retries.length, 1);
    assert.ok(StreamProviderError.isInstance(retries[0]!.error));
  });

  test("after output, or when it is no outage, the caller gets the AI SDK's StreamProviderError, as from streamText", async () => {
    const cases: Array<[LanguageModelV4StreamPart[], boolean]> = [
      [[{ type: 'stream-start', warnings: [] }, ...answer('Hello ').slice(0, 2), { type: 'error', error: overloaded }], true],
      [
        [
          { type: 'stream-start', warnings: [] },
          { type: 'error', error: { error: { type: 'invalid_request_error', message: 'prompt is too long', status: 400 } } },
        ],
        false,
      ],
    ];
    for (const [parts, retryable] of cases) {
      let attempts = 0;
      const model = new MockLanguageModelV4({
        doStream: async () => {
          attempts++;
          return { stream: convertArrayToReadableStream(parts) };
        },
      });
      const client = ChatClient.builder(model).defaultOptions({ retryDelayMs: 5 }).build();
      const failed = await (async () => {
        for await (const _ of client.prompt('hi').stream().content());
      })().then(
        () => assert.fail('expected the stream to fail'),
        (error: unknown) => error,
      );
      assert.ok(StreamProviderError.isInstance(failed), String(failed));
      assert.ok(failed instanceof Error);
      assert.equal(failed.isRetryable, retryable);
      assert.equal(attempts, 1, 'not retried: output was shown, or the request itself was refused');
    }
  });
});
