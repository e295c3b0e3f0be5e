/**
 * `breakerForAiSdk` on a tool that throws: the AI SDK writes the error result
 * the model reads itself, and a steer decided for the call must reach the model
 * on it; and a sub-agent run inside a tool, in the lead's session, whose task
 * is no user turn and whose rounds leave the lead's token drift alone. The
 * real AI SDK (`generateText`, `streamText`, `ToolLoopAgent`) with the
 * `@ai-sdk/openai-compatible` provider over real HTTP against the scripted
 * stand-in model.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { generateText, isStepCount, streamText, ToolLoopAgent, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { createOpenAI } from '@ai-sdk/openai';
import {
  AgentBreaker,
  AgentBreakerError,
  BreakerOpenError,
  breakerForAiSdk,
  ErrorLoopError,
  InMemoryBreakerStore,
  ToolSpiralError,
  type BreakerEventRecord,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { escalations, lastToolResult } from '../e2e/recorded-run.ts';
import { assertDelegatedOutageCaught, delegatedOutageServer } from '../test-support/delegated-outage.ts';
import { assertLeadDriftCaught, compoundingLeadServer } from './test-support/compounding-lead.ts';

function failingDeploy(sessionId: string, thrown: () => Error = () => new Error('permission denied: role deployer missing')) {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const governed = breakerForAiSdk(breaker, { sessionId });
  let attempts = 0;
  const tools = governed.tools({
    deploy: tool({
      description: 'Deploys to an environment',
      inputSchema: z.object({ env: z.string() }),
      execute: async (): Promise<string> => {
        attempts += 1;
        throw thrown();
      },
    }),
  });
  return { events, governed, tools, attempts: () => attempts };
}

function loopingModel(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }], onExhausted: 'repeat-last' }).start();
}

/** What `generateText` rejects with: the breaker must end the run before its step cap. */
function stoppedGenerateText(
  server: ScriptedModelServer,
  governed: ReturnType<typeof failingDeploy>['governed'],
  tools: ReturnType<typeof failingDeploy>['tools'],
): Promise<unknown> {
  return generateText({
    model: governed.model(scriptedModel(server)),
    tools,
    stopWhen: [isStepCount(20), governed.stopWhen],
    prompt: 'Deploy to prod.',
  }).then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

/** What every variant shows on the wire: the steer on the 3rd error result, kept there in later requests, then the block. */
function assertSteeredOnTheError(server: ScriptedModelServer, events: readonly BreakerEventRecord[], attempts: number, error: unknown): void {
  assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
  assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
  assert.equal(attempts, 3, 'the 3rd attempt ran steered; the 4th was blocked, the 5th stopped');
  assert.equal(lastToolResult(server.requests[1]), 'Error: permission denied: role deployer missing', 'an unsteered failure reads as without the breaker');
  const steered = /^Error: permission denied: role deployer missing\n\n\[AgentBreaker\] "deploy" has failed/;
  assert.match(lastToolResult(server.requests[3]), steered, 'the 3rd error result carries the steer');
  const earlier = server.requests[4]!.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
  assert.match(earlier[2]!, steered, 'and keeps it in later requests');
  assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
}

describe('breakerForAiSdk: a tool that throws', () => {
  test('generateText: the steer decided for the 3rd attempt reaches the model on its error result', async () => {
    await using server = await loopingModel();
    const { events, governed, tools, attempts } = failingDeploy('ai-throws');
    const error = await stoppedGenerateText(server, governed, tools);
    assertSteeredOnTheError(server, events, attempts(), error);
  });

  test('streamText: the same', async () => {
    await using server = await loopingModel();
    const { events, governed, tools, attempts } = failingDeploy('ai-throws-stream');
    const result = streamText({
      model: governed.model(scriptedModel(server)),
      tools,
      stopWhen: [isStepCount(20), governed.stopWhen],
      prompt: 'Deploy to prod.',
      onError: () => {},
    });
    // The stop decided on the last tool call is the stream's error part, from the next step's gate: no model call.
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    assert.equal(errors.length, 1);
    assertSteeredOnTheError(server, events, attempts(), errors[0]);
    assert.equal(server.requests.length, 5);
  });
});

describe('breakerForAiSdk: streamText served to a browser as a UI message stream', () => {
  /** A chat route as an app serves it: one door per request, the session from the request, the loop stopped by the breaker. */
  async function chatRoute(serve: 'pipe to the Node response' | 'a fetch Response') {
    const upstream = await loopingModel();
    const breaker = new AgentBreaker({ telemetry: false });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const server = http.createServer(async (_request, response) => {
      const governed = breakerForAiSdk(breaker, { sessionId: 'ui-chat' });
      const tools = governed.tools({
        deploy: tool({ description: 'Deploys', inputSchema: z.object({ env: z.string() }), execute: async () => 'queued' }),
      });
      const result = streamText({
        model: governed.model(scriptedModel(upstream)),
        tools,
        stopWhen: [isStepCount(20), governed.stopWhen],
        prompt: 'Deploy.',
        onError: () => {},
      });
      // What the browser may read of a failure: the breaker's own explanation, nothing else.
      const onError = (error: unknown) => (AgentBreakerError.isInstance(error) ? error.message : 'An error occurred.');
      if (serve === 'pipe to the Node response') {
        result.pipeUIMessageStreamToResponse(response, { onError });
        return;
      }
      const answer = result.toUIMessageStreamResponse({ onError });
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      for await (const chunk of answer.body!) response.write(chunk);
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const chat = async () => {
      const body = await (await fetch(`http://127.0.0.1:${port}/api/chat`, { method: 'POST' })).text();
      const chunks = body
        .split('\n\n')
        .filter((event) => event.startsWith('data: '))
        .map((event) => event.slice('data: '.length));
      return {
        done: chunks.at(-1) === '[DONE]',
        parts: chunks.filter((c) => c !== '[DONE]').map((c) => JSON.parse(c) as { type: string; errorText?: string }),
      };
    };
    try {
      const first = await chat();
      const second = await chat();
      return { first, second, unhandled };
    } finally {
      process.off('unhandledRejection', onUnhandled);
      server.close();
      await upstream.close();
    }
  }

  for (const serve of ['pipe to the Node response', 'a fetch Response'] as const) {
    test(`${serve}: the stop is an error part with the breaker's explanation, the response ends whole, and the server serves the next request`, async () => {
      const { first, second, unhandled } = await chatRoute(serve);
      assert.deepEqual(unhandled, [], 'no rejection is left unhandled');
      assert.equal(first.done, true, 'the response ends with [DONE]');
      const errors = first.parts.filter((p) => p.type === 'error');
      assert.equal(errors.length, 1);
      assert.match(errors[0]!.errorText ?? '', /^Agent stopped: tool-call spiral/);
      assert.equal(first.parts.at(-1), errors[0], 'the last part: streamText ends a stream that failed there');
      assert.equal(second.done, true);
      assert.match(second.parts.find((p) => p.type === 'error')?.errorText ?? '', /breaker is OPEN/);
    });
  }
});

describe('breakerForAiSdk: a tool whose error names the outage only in its fields', () => {
  test('a status of 503 on the error gets the allowance for transient errors, as the same words in its message do', async () => {
    await using server = await loopingModel();
    const { governed, tools, attempts } = failingDeploy('ai-throws-status', () => Object.assign(new Error('upstream failed'), { status: 503 }));
    const error = await stoppedGenerateText(server, governed, tools);
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(attempts(), 5, 'an outage is retried longer than a rejection (3 attempts)');
    assert.equal(lastToolResult(server.requests[1]), 'Error: upstream failed', 'the model reads what the AI SDK writes, as without the breaker');
  });
});

describe('breakerForAiSdk: a sub-agent as a tool, in the same session', () => {
  /** How the researcher runs inside its tool. */
  type Nesting = 'generateText' | 'streamText' | 'a streaming tool' | 'its own door';

  /**
   * A lead that delegates the same lookup to its researcher (a tool that
   * runs its own agent loop on a model of the same breaker and session) with
   * a task worded anew each time; the researcher's one tool fails with an
   * outage every time. The researcher is read-only (a lookup), so its
   * answers change nothing that would end the outage's evidence.
   */
  async function delegatedOutage(nesting: Nesting) {
    await using server = await delegatedOutageServer();
    const sessionId = `ai-delegated-${nesting}`;
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const governed = breakerForAiSdk(breaker, { sessionId });
    // The lead's governed model, reused by the researcher.
    const model = governed.model(scriptedModel(server));
    let lookups = 0;
    const getInvoice = tool({
      description: 'Reads an invoice',
      inputSchema: z.object({ id: z.string() }),
      execute: async (): Promise<string> => {
        lookups += 1;
        throw new Error('503 Service Unavailable: upstream billing-api is down');
      },
    });
    const researcher = (task: string) => {
      // A door of its own for the parent's session, as a sub-agent handed the session id builds.
      const door = nesting === 'its own door' ? breakerForAiSdk(breaker, { sessionId }) : governed;
      return new ToolLoopAgent({
        model: nesting === 'its own door' ? door.model(scriptedModel(server)) : model,
        tools: door.tools({ get_invoice: getInvoice }),
        stopWhen: [isStepCount(5), door.stopWhen],
      }).stream({ prompt: task });
    };
    const inputSchema = z.object({ task: z.string() });
    const lookupInvoice =
      nesting === 'a streaming tool'
        ? tool({
            description: 'Researches a task',
            inputSchema,
            // The researcher's text as it comes, as a sub-agent streams its progress to the UI.
            async *execute({ task }) {
              const result = await researcher(task);
              let text = '';
              for await (const delta of result.textStream) yield (text += delta);
            },
          })
        : tool({
            description: 'Researches a task',
            inputSchema,
            execute: async ({ task }): Promise<string> => {
              if (nesting === 'generateText') {
                return (await generateText({ model, tools: governed.tools({ get_invoice: getInvoice }), stopWhen: isStepCount(5), prompt: task })).text;
              }
              const result =
                nesting === 'streamText'
                  ? // The stop is read from the result: the SDK's default logging of stream errors is left out.
                    streamText({ model, tools: governed.tools({ get_invoice: getInvoice }), stopWhen: isStepCount(5), prompt: task, onError: () => {} })
                  : await researcher(task);
              for await (const _part of result.fullStream) {
                // drained only to drive the nested run
              }
              return await result.text;
            },
          });
    const error = await generateText({
      model,
      tools: governed.tools({ lookup_invoice: lookupInvoice }),
      stopWhen: [isStepCount(12), governed.stopWhen],
      prompt: 'What does invoice inv-9 come to?',
    }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    return { error, events, lookups, counters: (await breaker.snapshot(sessionId)).counters };
  }

  for (const nesting of ['generateText', 'streamText', 'a streaming tool', 'its own door'] as const) {
    test(`the researcher on ${nesting}: the task the lead wrote is no user turn, and the outage across delegations is caught`, async () => {
      assertDelegatedOutageCaught(await delegatedOutage(nesting));
    });
  }
});

describe('breakerForAiSdk: a sub-agent between the rounds of a lead whose context compounds', () => {
  for (const nesting of ['generateText', 'streamText', 'a streaming tool', 'its own door'] as const) {
    test(`the researcher on ${nesting}: its small prompts do not restart the lead's growth, token drift trips at the lead's 4th round as without it`, async () => {
      await using server = await compoundingLeadServer();
      const sessionId = `ai-compounding-lead-${nesting}`;
      const breaker = new AgentBreaker({ telemetry: false });
      const events: BreakerEventRecord[] = [];
      breaker.on((event) => events.push(event));
      const governed = breakerForAiSdk(breaker, { sessionId });
      const model = governed.model(scriptedModel(server));
      let delegations = 0;
      // A door of its own for the lead's session, as a sub-agent handed the session id builds.
      const researcher = (task: string) =>
        streamText({ model: nesting === 'its own door' ? breakerForAiSdk(breaker, { sessionId }).model(scriptedModel(server)) : model, prompt: task });
      const inputSchema = z.object({ task: z.string() });
      const research =
        nesting === 'a streaming tool'
          ? tool({
              description: 'Researches a task',
              inputSchema,
              async *execute({ task }) {
                delegations += 1;
                let text = '';
                for await (const delta of researcher(task).textStream) yield (text += delta);
              },
            })
          : tool({
              description: 'Researches a task',
              inputSchema,
              execute: async ({ task }): Promise<string> => {
                delegations += 1;
                if (nesting === 'generateText') return (await generateText({ model, prompt: task })).text;
                const result = researcher(task);
                for await (const _part of result.fullStream) {
                  // drained only to drive the nested run
                }
                return await result.text;
              },
            });
      const error = await generateText({
        model,
        tools: governed.tools({ research }),
        stopWhen: [isStepCount(12), governed.stopWhen],
        prompt: 'Prepare the weekly operations brief.',
      }).then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );
      await assertLeadDriftCaught(error, events, breaker, sessionId, delegations);
    });
  }
});

describe('breakerForAiSdk: how a streamed run ends', () => {
  /** Every part of a streamText run, and any rejection left unhandled while it ran. */
  async function streamedParts(
    run: () => { readonly fullStream: AsyncIterable<{ type: string; error?: unknown }> },
  ): Promise<{ parts: { type: string; error?: unknown }[]; unhandled: unknown[] }> {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const parts: { type: string; error?: unknown }[] = [];
      for await (const part of run().fullStream) parts.push(part);
      // A rejection from the run would be reported on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { parts, unhandled };
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }

  test('a sub-agent run with generateText on the same door, inside a streamed lead: its stop ends the lead with one error part, nothing unhandled', async () => {
    // The lead asks its researcher once; the researcher greps the same thing until the breaker stops it.
    await using server = await new ScriptedModelServer({
      script: (request) =>
        JSON.stringify(request.body.messages[0]?.content).includes('Find where retries are configured')
          ? { toolCalls: [{ name: 'grep', arguments: { pattern: 'retries' } }] }
          : { toolCalls: [{ name: 'research', arguments: { task: 'Find where retries are configured.' } }] },
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const governed = breakerForAiSdk(breaker, { sessionId: 'shared-door' });
    const model = governed.model(scriptedModel(server));
    const grep = tool({ description: 'Searches the code', inputSchema: z.object({ pattern: z.string() }), execute: async () => 'no match' });
    const research = tool({
      description: 'Runs the researcher',
      inputSchema: z.object({ task: z.string() }),
      execute: async ({ task }) =>
        (await generateText({ model, tools: governed.tools({ grep }), stopWhen: [isStepCount(10), governed.stopWhen], prompt: task })).text,
    });
    const { parts, unhandled } = await streamedParts(() =>
      streamText({
        model,
        tools: governed.tools({ research }),
        stopWhen: [isStepCount(10), governed.stopWhen],
        prompt: 'Where are retries set?',
        onError: () => {},
      }),
    );
    assert.deepEqual(unhandled, [], 'no rejection is left unhandled (piped to a Node response, one would end the server)');
    const errors = parts.filter((p) => p.type === 'error');
    assert.equal(errors.length, 1, `one error part, got: ${parts.map((p) => p.type).join(',')}`);
    assert.equal((errors[0]!.error as AgentBreakerError).category, 'tool_spiral');
    assert.equal(parts.at(-1)?.type, 'error', 'the stream ends at the stop');
  });

  test('a stop decided on recording a round that also asked for a tool: one error part, and no model request after it', async () => {
    // Each answer runs the same hosted search (its third is a RAG fixation, its fourth a stop) and asks for a local tool.
    await using server = await new ScriptedModelServer({
      script: () => ({
        webSearches: [{ query: 'cheapest flight to Oslo in March', sources: ['https://fares.example/oslo'] }],
        toolCalls: [{ name: 'note', arguments: { text: 'still looking' } }],
      }),
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const governed = breakerForAiSdk(breaker, { sessionId: 'round-stop' });
    const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'sk-test-not-a-real-key' });
    let notes = 0;
    const note = tool({
      description: 'Takes a note',
      inputSchema: z.object({ text: z.string() }),
      execute: async () => {
        notes += 1;
        return 'noted';
      },
    });
    let onErrorCalls = 0;
    const { parts, unhandled } = await streamedParts(() =>
      streamText({
        model: governed.model(openai.responses('m')),
        tools: { web_search: openai.tools.webSearch({}), ...governed.tools({ note }) },
        stopWhen: [isStepCount(10), governed.stopWhen],
        prompt: 'Find me the cheapest flight to Oslo in March.',
        onError: () => {
          onErrorCalls += 1;
        },
      }),
    );
    assert.deepEqual(unhandled, []);
    const errors = parts.filter((p) => p.type === 'error');
    assert.equal(errors.length, 1, `one error part, got: ${parts.map((p) => p.type).join(',')}`);
    assert.equal((errors[0]!.error as AgentBreakerError).category, 'rag_fixation');
    assert.equal(onErrorCalls, 1, 'onError (logging, alerts) hears of the stop once');
    assert.equal(server.requests.length, 4, 'the stopped answer is the last one the model is asked for');
    assert.equal(notes, 3, "the stopped answer's call is refused, not run");
  });

  test('a call that ran keeps its result when the store fails closed while recording it: the next gate refuses', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'refund', arguments: { order: '42' } }] }, { text: 'Refunded.' }],
    }).start();
    const store = new InMemoryBreakerStore();
    let storeDown = false;
    // The store goes down while the refund runs: its check was judged, its result cannot be recorded.
    const failing = new Proxy(store, {
      get(target, key) {
        if (storeDown && (key === 'apply' || key === 'read')) return () => Promise.reject(new Error('connection lost'));
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const breaker = new AgentBreaker({ telemetry: false, store: failing, onStoreError: 'fail-closed' });
    breaker.on(() => {});
    const governed = breakerForAiSdk(breaker, { sessionId: 'refund-ran' });
    const refunds: string[] = [];
    const refund = tool({
      description: 'Refunds an order',
      inputSchema: z.object({ order: z.string() }),
      execute: async ({ order }) => {
        refunds.push(order);
        storeDown = true;
        return `refund for order ${order} made`;
      },
    });
    const { parts, unhandled } = await streamedParts(() =>
      streamText({
        model: governed.model(scriptedModel(server)),
        tools: governed.tools({ refund }),
        stopWhen: [isStepCount(5), governed.stopWhen],
        prompt: 'Refund order 42.',
        onError: () => {},
      }),
    );
    assert.deepEqual(unhandled, []);
    assert.deepEqual(refunds, ['42']);
    const result = parts.find((p) => p.type === 'tool-result') as { output?: unknown } | undefined;
    assert.equal(result?.output, 'refund for order 42 made', 'what the history keeps for the call is what it did');
    assert.equal(
      parts.some((p) => p.type === 'tool-error'),
      false,
    );
    const errors = parts.filter((p) => p.type === 'error');
    assert.equal(errors.length, 1);
    assert.equal((errors[0]!.error as Error).name, 'BreakerUnavailableError');
    assert.equal(server.requests.length, 1, 'the model is not called again while the store cannot judge');
  });

  test('a call the caller cancels is no failure: cancelling a slow tool again and again is no error loop', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'report', arguments: { quarter: 'Q3' } }] }],
      onExhausted: 'repeat-last',
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    let started = 0;
    const report = tool({
      description: 'Builds a quarterly report (slow)',
      inputSchema: z.object({ quarter: z.string() }),
      execute: (_input, { abortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          started += 1;
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
        }),
    });
    for (const attempt of [1, 2, 3, 4]) {
      const governed = breakerForAiSdk(breaker, { sessionId: 'cancelled' });
      const controller = new AbortController();
      const run = generateText({
        model: governed.model(scriptedModel(server)),
        tools: governed.tools({ report }),
        stopWhen: [isStepCount(5), governed.stopWhen],
        prompt: `Build the Q3 report (try ${attempt}).`,
        abortSignal: controller.signal,
      });
      while (started < attempt) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      await assert.rejects(run, (error: unknown) => (error as Error).name === 'AbortError');
    }
    assert.deepEqual(escalations(events), [], 'no escalation: the tool never failed');
    assert.equal((await breaker.snapshot('cancelled')).counters.toolCalls, 0, 'a cancelled call is not recorded');
  });
});

describe('breakerForAiSdk: tools as users write them', () => {
  test('an execute that returns an async iterable without being `async *execute` runs, and the model gets its last output as without the breaker', async () => {
    async function* progress(n: number): AsyncGenerator<string> {
      for (let step = 1; step <= n; step++) yield `progress ${step}/${n}`;
    }
    const toolMessages: string[] = [];
    for (const governedRun of [false, true]) {
      await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'build', arguments: { n: 3 } }] }, { text: 'Built.' }] }).start();
      const governed = breakerForAiSdk(new AgentBreaker({ telemetry: false }), { sessionId: 'iterable' });
      // As an arrow returning a generator, or an `async *execute` compiled for an older target, is written.
      const tools = { build: tool({ inputSchema: z.object({ n: z.number() }), execute: ({ n }: { n: number }) => progress(n) }) };
      const result = await generateText({
        model: governedRun ? governed.model(scriptedModel(server)) : scriptedModel(server),
        tools: governedRun ? governed.tools(tools) : tools,
        stopWhen: isStepCount(3),
        prompt: 'Build it.',
      });
      assert.equal(result.text, 'Built.');
      toolMessages.push(lastToolResult(server.requests[1]));
    }
    assert.deepEqual(toolMessages, ['progress 3/3', 'progress 3/3']);
  });

  test('a chat route with a door per request: a call failing the same way turn after turn is an error loop, recorded once per attempt', async () => {
    await using server = await loopingModel();
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    let attempts = 0;
    const deploy = tool({
      inputSchema: z.object({ env: z.string() }),
      execute: async (): Promise<string> => {
        attempts += 1;
        throw new Error('record A is locked');
      },
    });
    const messages: ModelMessage[] = [];
    let stopped: unknown;
    for (let turn = 1; turn <= 8 && stopped === undefined; turn++) {
      // What a route does: the session id comes with the request, and so does a new door.
      const governed = breakerForAiSdk(breaker, { sessionId: 'chat-1' });
      messages.push({ role: 'user', content: 'continue' });
      try {
        const result = await generateText({
          model: governed.model(scriptedModel(server)),
          tools: governed.tools({ deploy }),
          stopWhen: [isStepCount(1), governed.stopWhen],
          messages,
        });
        messages.push(...result.response.messages);
      } catch (error) {
        stopped = error;
      }
    }
    assert.ok(ErrorLoopError.isInstance(stopped), `expected ErrorLoopError, got ${String(stopped)}`);
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.equal(attempts, 3, 'as with one door for the whole chat: the 4th attempt is blocked, the 5th stopped');
    assert.equal((await breaker.snapshot('chat-1')).counters.toolCalls, attempts, 'each attempt recorded once, none again from the next prompt');
  });

  test("the AI SDK's own tool time limit (timeout: { toolMs }) is a failure, not a cancel: a call that keeps timing out is stopped", async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'fetchReport', arguments: { id: 'A1' } }] }],
      onExhausted: 'repeat-last',
    }).start();
    const governed = breakerForAiSdk(new AgentBreaker({ telemetry: false }), { sessionId: 'timeouts' });
    let started = 0;
    const fetchReport = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: (_input, { abortSignal }) =>
        new Promise<string>((_resolve, reject) => {
          started += 1;
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
        }),
    });
    const run = generateText({
      model: governed.model(scriptedModel(server)),
      tools: governed.tools({ fetchReport }),
      stopWhen: [isStepCount(15), governed.stopWhen],
      prompt: 'Fetch report A1.',
      timeout: { toolMs: 20 },
    });
    await assert.rejects(run, (error: unknown) => ErrorLoopError.isInstance(error) && /same transient error/.test(error.message));
    assert.ok(started < 15, `stopped before the step cap (${started} attempts)`);
  });
});

describe('breakerForAiSdk: a door used again after a stop', () => {
  test('a later call on the same door is refused with BreakerOpenError, without a model request, as on a new door', async () => {
    await using server = await loopingModel();
    const breaker = new AgentBreaker({ telemetry: false });
    const governed = breakerForAiSdk(breaker, { sessionId: 'reused' });
    const deploy = tool({ inputSchema: z.object({ env: z.string() }), execute: async () => 'queued' });
    const run = () =>
      generateText({
        model: governed.model(scriptedModel(server)),
        tools: governed.tools({ deploy }),
        stopWhen: [isStepCount(20), governed.stopWhen],
        prompt: 'Deploy to prod.',
      });
    const first = await run().then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(ToolSpiralError.isInstance(first), `the loop is stopped: ${String(first)}`);
    assert.equal(governed.stopped, first);
    const requests = server.requests.length;
    for (let again = 0; again < 2; again++) {
      await assert.rejects(run(), (error: unknown) => BreakerOpenError.isInstance(error));
      assert.equal(server.requests.length, requests, 'no model request');
    }
  });
});
