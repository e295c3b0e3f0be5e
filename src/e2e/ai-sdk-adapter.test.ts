/**
 * The AgentBreaker on plain AI SDK loops (`generateText`, `streamText`,
 * `ToolLoopAgent`) through `breakerForAiSdk`, with the real
 * `@ai-sdk/openai-compatible` provider over real HTTP against the scripted
 * stand-in model. What the model received is read from the recorded requests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, isStepCount, type ModelMessage, streamText, tool, type ToolSet, ToolLoopAgent } from 'ai';
import { z } from 'zod';
import { AgentBreaker, AgentBreakerError, breakerForAiSdk, type BreakerEventRecord, type SupportedLanguageModel } from '../index.ts';
import { CODE_LOOP, type HostedLoop, loopNote, MCP_LOOP, PAGE_LOOP, SEARCH_LOOP_ANSWER, SHELL_LOOP, searchLoopServer } from '../test-support/hosted-loops.ts';
import { ScriptedModelServer, scriptedModel, type ScriptFunction } from '../testing/index.ts';
import { escalations, lastToolResult, spiralServer } from './recorded-run.ts';

const SESSION = 'build-watch-7';
const PROMPT = 'Is build b-17 done?';

/** A breaker with its escalations and state changes recorded, and tools that count their executions. */
function governedSession(statuses: (run: number) => string) {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
  const executions: string[] = [];
  const tools = governed.tools({
    check_build: tool({
      description: 'Status of a CI build',
      inputSchema: z.object({ buildId: z.string() }),
      execute: async ({ buildId }) => {
        const status = statuses(executions.length);
        executions.push(buildId);
        return `build ${buildId}: ${status}`;
      },
    }),
  });
  return { breaker, events, governed, executions, tools };
}

/**
 * What every spiral scenario must show on the wire: three runs of the same
 * status check answered identically; the third answer steered, the fourth call
 * blocked (never run), the fifth stopped — and no model request after the stop.
 */
async function assertSpiralStopped(server: ScriptedModelServer, session: ReturnType<typeof governedSession>, error: unknown): Promise<void> {
  assert.ok(error instanceof AgentBreakerError, `expected an AgentBreakerError, got ${String(error)}`);
  assert.equal(error.category, 'tool_spiral');
  assert.equal(error.sessionId, SESSION);

  assert.deepEqual(session.executions, ['b-17', 'b-17', 'b-17'], 'the blocked and the stopped call did not run');
  assert.equal(server.requests.length, 5, 'no model request is sent once the breaker has stopped the session');
  for (const i of [1, 2]) {
    assert.equal(lastToolResult(server.requests[i]), 'build b-17: running', `request #${i + 1} carries the plain result`);
  }
  const steered = lastToolResult(server.requests[3]);
  assert.match(steered, /^build b-17: running\n\n\[AgentBreaker\] /, 'the 3rd call ran and its result carries the steering');
  assert.match(steered, /"check_build" 3 times/);
  const blocked = lastToolResult(server.requests[4]);
  assert.match(blocked, /^\[AgentBreaker\] This call was NOT executed\./);
  assert.doesNotMatch(blocked, /build b-17: running/, 'a blocked call has no real result');

  assert.deepEqual(escalations(session.events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
  const snapshot = await session.breaker.snapshot(SESSION);
  assert.equal(snapshot.state, 'OPEN');
  assert.equal(snapshot.openCategory, 'tool_spiral');
}

describe('breakerForAiSdk on generateText', () => {
  test('a tool-call spiral is steered, then blocked, then generateText rejects with the typed error', async () => {
    await using server = await spiralServer();
    const session = governedSession(() => 'running');
    const error = await generateText({
      model: session.governed.model(scriptedModel(server)),
      tools: session.tools,
      stopWhen: isStepCount(20),
      prompt: PROMPT,
    }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    await assertSpiralStopped(server, session, error);
  });

  test('a tool with a typed output keeps its type: the steer goes in the next prompt, a blocked call is a tool error', async () => {
    await using server = await spiralServer();
    const breaker = new AgentBreaker({ telemetry: false });
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    let runs = 0;
    const tools = governed.tools({
      check_build: tool({
        description: 'Status of a CI build',
        inputSchema: z.object({ buildId: z.string() }),
        outputSchema: z.object({ state: z.string() }),
        execute: async () => {
          runs += 1;
          return { state: 'running' };
        },
        // Reads the typed output: a string in its place would throw here.
        toModelOutput: ({ output }) => ({ type: 'text', value: `state: ${output.state.toUpperCase()}` }),
      }),
    });
    const error = await generateText({
      model: governed.model(scriptedModel(server)),
      tools,
      stopWhen: [isStepCount(20), governed.stopWhen],
      prompt: PROMPT,
    }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(AgentBreakerError.isInstance(error), `the spiral is stopped by the breaker, got ${String(error)}`);
    assert.equal(error.category, 'tool_spiral');
    assert.equal(runs, 3, 'the blocked and the stopped call did not run');
    const steered = server.requests[3]!.body.messages;
    assert.deepEqual(
      steered.at(-2),
      { role: 'tool', tool_call_id: (steered.at(-2) as { tool_call_id: string }).tool_call_id, content: 'state: RUNNING' },
      'the steered call answers in its own type',
    );
    assert.match(JSON.stringify(steered.at(-1)), /^\{"role":"user".*\[AgentBreaker\] .*\\"check_build\\" 3 times/, 'the steer follows it');
    assert.match(lastToolResult(server.requests[4]), /\[AgentBreaker\] This call was NOT executed\./, 'the blocked call is a tool error with the explanation');
  });

  for (const [what, call] of [
    ['input the tool rejects', { name: 'search', arguments: { query: 5 } }],
    ['a tool it does not have', { name: 'web_search', arguments: { query: 'flights to Oslo' } }],
  ] as const) {
    test(`a call the AI SDK answers with an error without running the tool (${what}), made again and again, is stopped as an error loop`, async () => {
      await using server = await new ScriptedModelServer({ script: [{ toolCalls: [call] }], onExhausted: 'repeat-last' }).start();
      const breaker = new AgentBreaker({ telemetry: false });
      const events: BreakerEventRecord[] = [];
      breaker.on((event) => events.push(event));
      const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
      let runs = 0;
      const search = tool({
        description: 'Searches the web',
        inputSchema: z.object({ query: z.string() }),
        execute: async () => {
          runs += 1;
          return 'results';
        },
      });
      const error = await generateText({
        model: governed.model(scriptedModel(server)),
        tools: governed.tools({ search }),
        stopWhen: [isStepCount(30), governed.stopWhen],
        prompt: 'Find flights to Oslo.',
      }).then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );
      assert.ok(AgentBreakerError.isInstance(error), `the loop is stopped by the breaker, got ${String(error)}`);
      assert.equal(error.category, 'error_loop');
      assert.equal(runs, 0, 'the tool never ran');
      assert.ok(server.requests.length < 10, `stopped after ${server.requests.length} model calls, not at the step cap`);
      assert.equal(escalations(events)[0], 'error_loop:steer');
      assert.match(JSON.stringify(server.requests.at(-1)!.body.messages), /\[AgentBreaker\] /, 'the model was told before the stop');
    });
  }

  test('a streaming tool (async *execute) stays one: its outputs pass as they come, the last is what the model gets and the breaker records', async () => {
    await using server = await new ScriptedModelServer({
      script: (_request, index) => (index < 4 ? { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] } : { text: 'It is 15C.' }),
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    let runs = 0;
    const weather = tool({
      description: 'Weather for a city',
      inputSchema: z.object({ city: z.string() }),
      async *execute({ city }) {
        runs += 1;
        yield { status: 'loading' as const, text: `Looking up ${city}…` };
        yield { status: 'done' as const, text: `15C in ${city}` };
      },
    });
    const preliminary: unknown[] = [];
    const result = streamText({
      model: governed.model(scriptedModel(server)),
      tools: governed.tools({ weather }),
      stopWhen: [isStepCount(10), governed.stopWhen],
      prompt: 'Weather in Paris?',
    });
    for await (const part of result.fullStream) if (part.type === 'tool-result' && part.preliminary === true) preliminary.push(part.output);
    assert.equal(lastToolResult(server.requests[1]), '{"status":"done","text":"15C in Paris"}', 'the model got the last output');
    assert.deepEqual(preliminary.slice(0, 2), [
      { status: 'loading', text: 'Looking up Paris…' },
      { status: 'done', text: '15C in Paris' },
    ]);
    // The same output three times: the third is steered, the fourth blocked, as for any tool.
    assert.match(lastToolResult(server.requests[3]), /^\{"status":"done","text":"15C in Paris"\}\n\n\[AgentBreaker\] /);
    assert.match(lastToolResult(server.requests[4]), /This call was NOT executed/);
    assert.equal(runs, 3);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block']);
  });

  test("OpenAI's shell tool: a command that fails the same way again and again is an error loop, stopped before it runs a 4th time", async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'shell', arguments: { commands: ['npm test'] } }] }],
      onExhausted: 'repeat-last',
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    const provider = createOpenAI({ apiKey: 'test-key', baseURL: server.baseURL });
    const ran: string[][] = [];
    const tools = governed.tools({
      shell: provider.tools.shell({
        execute: async ({ action }) => {
          ran.push(action.commands);
          return { output: [{ stdout: '', stderr: 'FAIL src/cart.test.ts: expected 3, got 2', outcome: { type: 'exit', exitCode: 1 } }] };
        },
      }),
    });
    const error = await generateText({
      model: governed.model(provider.responses(server.modelId)),
      tools,
      stopWhen: [isStepCount(20), governed.stopWhen],
      prompt: 'Make the cart tests pass.',
    }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(AgentBreakerError.isInstance(error), `the loop is stopped by the breaker, got ${String(error)}`);
    assert.equal(error.category, 'error_loop', 'a command that exits 1 is a failure');
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.deepEqual(ran, [['npm test'], ['npm test'], ['npm test']], 'the blocked and the stopped command did not run');
    assert.deepEqual(server.requests[0]!.body['tools'], [{ type: 'shell' }], 'the model was given the built-in shell tool');
    assert.match(JSON.stringify(server.requests[3]!.body.messages.at(-1)), /\[AgentBreaker\] .*\\"shell\\" has failed/, 'the steer follows the 3rd output');
  });

  test("OpenAI's apply_patch tool: a patch that does not apply, sent again and again under a new call id, is an error loop", async () => {
    const operation = { type: 'update_file', path: 'src/cart.ts', diff: '@@\n-  return items.length;\n+  return items.reduce((n, i) => n + i.quantity, 0);\n' };
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'apply_patch', arguments: operation }] }],
      onExhausted: 'repeat-last',
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    const provider = createOpenAI({ apiKey: 'test-key', baseURL: server.baseURL });
    const callIds: string[] = [];
    const tools = governed.tools({
      apply_patch: provider.tools.applyPatch({
        execute: async ({ callId, operation: op }) => {
          callIds.push(callId);
          return { status: 'failed' as const, output: `Invalid context in ${op.path}: "  return items.length;" not found` };
        },
      }),
    });
    const error = await generateText({
      model: governed.model(provider.responses(server.modelId)),
      tools,
      stopWhen: [isStepCount(20), governed.stopWhen],
      prompt: 'Count quantities in the cart.',
    }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(AgentBreakerError.isInstance(error), `the loop is stopped by the breaker, got ${String(error)}`);
    assert.equal(error.category, 'error_loop');
    assert.equal(new Set(callIds).size, 3, 'three edits ran, each under a call id of its own');
  });

  test('after a stop and a reset the same governed object runs the conversation on', async () => {
    await using server = await spiralServer();
    const session = governedSession(() => 'running');
    const run = (model: ScriptedModelServer, prompt: string) =>
      generateText({
        model: session.governed.model(scriptedModel(model)),
        tools: session.tools,
        stopWhen: [isStepCount(20), session.governed.stopWhen],
        prompt,
      });
    await assert.rejects(run(server, PROMPT), (e: unknown) => AgentBreakerError.isInstance(e) && e.category === 'tool_spiral');
    // Until the cooldown or a reset the session stays stopped.
    await assert.rejects(run(server, 'And now?'), (e: unknown) => AgentBreakerError.isInstance(e));
    await session.breaker.reset(SESSION);
    await using answering = await new ScriptedModelServer({ script: [{ text: 'It is still running.' }] }).start();
    assert.equal((await run(answering, 'Is it still running?')).text, 'It is still running.');
    assert.equal((await session.breaker.snapshot(SESSION)).state, 'CLOSED');
    assert.equal(session.governed.stopped, undefined);
  });

  test('polling the same call while its result changes is left alone', async () => {
    const statuses = ['queued', 'running 10%', 'running 35%', 'running 60%', 'running 85%', 'running 99%', 'succeeded'];
    // Calls the same check with the same arguments until the build reports success.
    const script: ScriptFunction = (request) => {
      const last = request.body.messages.at(-1);
      return last?.role === 'tool' && String(last.content).endsWith('succeeded')
        ? { text: 'Build b-17 succeeded.' }
        : { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] };
    };
    await using server = await new ScriptedModelServer({ script }).start();
    const session = governedSession((run) => statuses[run] ?? 'unknown');
    const result = await generateText({
      model: session.governed.model(scriptedModel(server)),
      tools: session.tools,
      stopWhen: isStepCount(20),
      prompt: PROMPT,
    });

    assert.equal(result.text, 'Build b-17 succeeded.');
    assert.equal(session.executions.length, statuses.length, 'every poll ran');
    assert.equal(server.requests.length, statuses.length + 1);
    for (const request of server.requests) {
      assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    }
    assert.deepEqual(escalations(session.events), []);
    const snapshot = await session.breaker.snapshot(SESSION);
    assert.equal(snapshot.state, 'CLOSED');
    assert.equal(snapshot.counters.toolCalls, statuses.length);
    assert.equal(snapshot.counters.modelCalls, statuses.length + 1, 'the middleware recorded every model round');
  });

  // The AI SDK turns an error thrown by a tool into a tool-error result, so a stop
  // decided on a tool call in the last allowed step surfaces through governed.stopWhen.
  test('a stop in the last step stopWhen allows still rejects generateText', async () => {
    await using server = await spiralServer();
    const session = governedSession(() => 'running');
    const outcome = await generateText({
      model: session.governed.model(scriptedModel(server)),
      tools: session.tools,
      stopWhen: [isStepCount(6), session.governed.stopWhen],
      prompt: PROMPT,
    }).then(
      (result) => result,
      (e: unknown) => e,
    );

    assert.deepEqual(escalations(session.events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop'], 'the breaker did stop the run');
    assert.ok(outcome instanceof AgentBreakerError, 'the stop reaches the caller as a typed error');
    assert.equal(outcome.category, 'tool_spiral');
  });
});

describe('breakerForAiSdk on streamText', () => {
  test('a tool-call spiral is steered, then blocked, then the stream fails with the typed error', async () => {
    await using server = await spiralServer();
    const session = governedSession(() => 'running');
    const reported: unknown[] = [];
    const result = streamText({
      model: session.governed.model(scriptedModel(server)),
      tools: session.tools,
      stopWhen: isStepCount(20),
      prompt: PROMPT,
      onError: ({ error }) => {
        reported.push(error);
      },
    });
    const streamed: unknown[] = [];
    let text = '';
    for await (const part of result.fullStream) {
      if (part.type === 'error') streamed.push(part.error);
      if (part.type === 'text-delta') text += part.text;
    }

    assert.equal(streamed.length, 1, 'the stream carries one error part');
    assert.equal(reported[0], streamed[0], 'onError hears the same error');
    assert.equal(text, '');
    // A stream does not throw the stop: its text resolves with what was streamed.
    assert.equal(await result.text, text);
    await assertSpiralStopped(server, session, streamed[0]);
  });

  test('paging through results with the same tool is left alone', async () => {
    const pages = 6;
    await using server = await new ScriptedModelServer({
      script: (_request, index) =>
        index < pages
          ? { toolCalls: [{ name: 'list_orders', arguments: { customer: 'c-9', page: index + 1 } }] }
          : { text: `Customer c-9 has ${pages * 2} orders.` },
    }).start();
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    const pagesRead: number[] = [];
    const tools = governed.tools({
      list_orders: tool({
        inputSchema: z.object({ customer: z.string(), page: z.number().int() }),
        execute: async ({ customer, page }) => {
          pagesRead.push(page);
          return { customer, page, orders: [`o-${page * 2 - 1}`, `o-${page * 2}`], more: page < pages };
        },
      }),
    });
    const result = streamText({ model: governed.model(scriptedModel(server)), tools, stopWhen: isStepCount(20), prompt: 'How many orders has c-9?' });

    assert.equal(await result.text, 'Customer c-9 has 12 orders.');
    assert.deepEqual(pagesRead, [1, 2, 3, 4, 5, 6]);
    assert.equal(server.requests.length, pages + 1);
    assert.ok(
      server.requests.every((r) => r.body.stream === true),
      'streamText streams every step',
    );
    for (const request of server.requests) {
      assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/);
    }
    assert.deepEqual(escalations(events), []);
    const snapshot = await breaker.snapshot(SESSION);
    assert.equal(snapshot.state, 'CLOSED');
    assert.equal(snapshot.counters.modelCalls, pages + 1, 'the streaming middleware recorded every round');
  });
});

describe('breakerForAiSdk on ToolLoopAgent', () => {
  test('the governed model and tools stop a spiralling agent with the typed error', async () => {
    await using server = await spiralServer();
    const session = governedSession(() => 'running');
    // No stopWhen: the agent's own default step limit is far above where the breaker stops.
    const agent = new ToolLoopAgent({ model: session.governed.model(scriptedModel(server)), tools: session.tools });
    const error = await agent.generate({ prompt: PROMPT }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    await assertSpiralStopped(server, session, error);
  });
});

describe('steers decided on observed events reach the next step under breakerForAiSdk', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    test(`${mode}: a RAG-fixation steer from a retrieval the tool reports is in the next step's prompt`, async () => {
      const queries = ['refund policy for damaged items', 'refund policy damaged item', 'damaged items refund policy'];
      await using server = await new ScriptedModelServer({
        script: [...queries.map((query) => ({ toolCalls: [{ name: 'search', arguments: { query } }] })), { text: 'Refunded in full.' }],
      }).start();
      const breaker = new AgentBreaker({ telemetry: false });
      const governed = breakerForAiSdk(breaker, { sessionId: `aisdk-rag-${mode}` });
      const tools = governed.tools({
        search: tool({
          inputSchema: z.object({ query: z.string() }),
          execute: async ({ query }) => {
            await breaker.observe(`aisdk-rag-${mode}`, { kind: 'retrieval', query, results: ['policy-7', 'faq-2'] });
            return 'policy-7, faq-2';
          },
        }),
      });
      const settings = { model: governed.model(scriptedModel(server)), tools, stopWhen: [isStepCount(6), governed.stopWhen], prompt: 'Refund policy?' };
      const text = mode === 'generateText' ? (await generateText(settings)).text : await streamText(settings).text;
      assert.equal(text, 'Refunded in full.');
      const note = server.requests[3]!.body.messages.at(-1);
      assert.equal(note?.role, 'user');
      assert.match(String(note?.content), /^\[AgentBreaker\] /);
      assert.ok(!JSON.stringify(server.requests[2]!.body.messages).includes('[AgentBreaker]'));
    });
  }
});

/**
 * A chat that asks `first`, then "Keep looking." up to 8 times, keeping each
 * answer's messages; it throws what ends it (a stream does not throw the
 * stop: it ends with an error part, thrown here).
 */
async function askUntilStopped(
  mode: 'generateText' | 'streamText',
  model: Parameters<typeof generateText>[0]['model'],
  tools: Parameters<typeof generateText>[0]['tools'],
  first: string,
  answers: string[],
): Promise<void> {
  const messages: ModelMessage[] = [];
  for (let i = 0; i < 8; i += 1) {
    messages.push({ role: 'user', content: i === 0 ? first : 'Keep looking.' });
    const settings = { model, tools, messages, maxOutputTokens: 256 };
    if (mode === 'generateText') {
      const result = await generateText(settings);
      answers.push(result.text);
      messages.push(...result.response.messages);
      continue;
    }
    const result = streamText({ ...settings, onError: () => {} });
    let text = '';
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error;
      if (part.type === 'text-delta') text += part.text;
    }
    answers.push(text);
    messages.push(...(await result.response).messages);
  }
}

describe('breakerForAiSdk with searches the provider runs itself (hosted web search)', () => {
  const providers = {
    'OpenAI Responses': (baseURL: string) => {
      const openai = createOpenAI({ baseURL, apiKey: 'sk-test-not-a-real-key' });
      return { model: openai.responses('m'), tools: { web_search: openai.tools.webSearch({}) } };
    },
    Anthropic: (baseURL: string) => {
      const anthropic = createAnthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key' });
      return { model: anthropic('claude-test'), tools: { web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }) } };
    },
  };
  for (const [name, provider] of Object.entries(providers)) {
    for (const mode of ['generateText', 'streamText'] as const) {
      test(`${name}, ${mode}: the same search over and over is steered in the next prompt, then stopped with the typed error`, async () => {
        await using server = await searchLoopServer();
        const breaker = new AgentBreaker({ telemetry: false });
        const sessionId = `hosted-${name}-${mode}`;
        const governed = breakerForAiSdk(breaker, { sessionId });
        const { model, tools } = provider(server.baseURL);
        const answers: string[] = [];
        await assert.rejects(
          askUntilStopped(mode, governed.model(model), tools, 'Find me the cheapest flight to Oslo in March.', answers),
          (error: unknown) => {
            assert.ok(AgentBreakerError.isInstance(error), `expected the breaker's error, got ${String(error)}`);
            assert.equal(error.category, 'rag_fixation');
            return true;
          },
        );
        assert.deepEqual(answers, [SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER]);
        assert.equal((await breaker.snapshot(sessionId)).counters.retrievals, 4);
        // The fourth request carried the note decided on the third search; the third did not.
        assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] .*search/);
        assert.doesNotMatch(JSON.stringify(server.requests[2]!.body.messages), /\[AgentBreaker\]/);
      });
    }

    test(`${name}: four alike searches in one answer are steered once; the next answer that searches again is stopped`, async () => {
      await using server = await searchLoopServer({ perAnswer: 4 });
      const breaker = new AgentBreaker({ telemetry: false });
      const sessionId = `hosted-one-answer-${name}`;
      const governed = breakerForAiSdk(breaker, { sessionId });
      const { model, tools } = provider(server.baseURL);
      const messages: ModelMessage[] = [{ role: 'user', content: 'Find me the cheapest flight to Oslo in March.' }];
      const first = await generateText({ model: governed.model(model), tools, messages, maxOutputTokens: 256 });
      assert.equal(first.text, SEARCH_LOOP_ANSWER);
      messages.push(...first.response.messages, { role: 'user', content: 'Keep looking.' });
      await assert.rejects(generateText({ model: governed.model(model), tools, messages, maxOutputTokens: 256 }), (error: unknown) => {
        assert.ok(AgentBreakerError.isInstance(error), `expected the breaker's error, got ${String(error)}`);
        assert.equal(error.category, 'rag_fixation');
        return true;
      });
      // Every search that ran is counted, those of the stopped answer too.
      assert.equal((await breaker.snapshot(sessionId)).counters.retrievals, 8);
      assert.equal(JSON.stringify(server.requests[1]!.body.messages).match(/\[AgentBreaker\]/g)?.length, 1, 'one steer, in the second request');
    });
  }
});

/** A loop of calls the provider runs itself, and per provider the tools that let it run and the tool name the breaker judges it under. */
interface LoopCase {
  readonly what: string;
  readonly loop: HostedLoop;
  readonly providers: Readonly<Record<string, (baseURL: string) => { model: SupportedLanguageModel; tools: ToolSet; tool: string }>>;
}

const HOSTED_LOOPS: readonly LoopCase[] = [
  {
    what: 'the same page reopened (web search open_page, web fetch)',
    loop: PAGE_LOOP,
    providers: {
      'OpenAI Responses': (baseURL) => {
        const openai = createOpenAI({ baseURL, apiKey: 'sk-test-not-a-real-key' });
        return { model: openai.responses('m'), tools: { web_search: openai.tools.webSearch({}) }, tool: 'open_page' };
      },
      Anthropic: (baseURL) => {
        const anthropic = createAnthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key' });
        return { model: anthropic('claude-test'), tools: { fetch: anthropic.tools.webFetch_20250910({ maxUses: 5 }) }, tool: 'web_fetch' };
      },
    },
  },
  {
    what: 'the same code failing the same way (code interpreter, code execution)',
    loop: CODE_LOOP,
    providers: {
      'OpenAI Responses': (baseURL) => {
        const openai = createOpenAI({ baseURL, apiKey: 'sk-test-not-a-real-key' });
        return { model: openai.responses('m'), tools: { code_interpreter: openai.tools.codeInterpreter({}) }, tool: 'code_interpreter' };
      },
      Anthropic: (baseURL) => {
        const anthropic = createAnthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key' });
        return { model: anthropic('claude-test'), tools: { code_execution: anthropic.tools.codeExecution_20250825() }, tool: 'bash_code_execution' };
      },
    },
  },
  {
    what: "the same command failing the same way (OpenAI's hosted shell)",
    loop: SHELL_LOOP,
    providers: {
      'OpenAI Responses': (baseURL) => {
        const openai = createOpenAI({ baseURL, apiKey: 'sk-test-not-a-real-key' });
        return { model: openai.responses('m'), tools: { shell: openai.tools.shell({ environment: { type: 'containerAuto' } }) }, tool: 'shell' };
      },
    },
  },
  {
    what: 'the same remote MCP tool called for the same answer (OpenAI MCP tool, Anthropic MCP connector)',
    loop: MCP_LOOP,
    providers: {
      'OpenAI Responses': (baseURL) => {
        const openai = createOpenAI({ baseURL, apiKey: 'sk-test-not-a-real-key' });
        const tracker = openai.tools.mcp({ serverLabel: 'tracker', serverUrl: 'https://mcp.tracker.example/sse', requireApproval: 'never' });
        return { model: openai.responses('m'), tools: { tracker }, tool: 'get_issue' };
      },
      // The MCP connector is configured per request (providerOptions), not as a tool: the model is given none.
      Anthropic: (baseURL) => {
        const anthropic = createAnthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key' });
        return { model: anthropic('claude-test'), tools: {}, tool: 'get_issue' };
      },
    },
  },
];

describe('breakerForAiSdk with calls the provider runs itself, answer after answer', () => {
  for (const { what, loop, providers } of HOSTED_LOOPS) {
    for (const [name, provider] of Object.entries(providers)) {
      for (const mode of ['generateText', 'streamText'] as const) {
        test(`${name}, ${mode}: ${what} is steered, then stopped (${loop.category})`, async () => {
          await using server = await loop.start();
          const breaker = new AgentBreaker({ telemetry: false });
          const sessionId = `hosted-loop-${loop.category}-${name}-${mode}`;
          const governed = breakerForAiSdk(breaker, { sessionId });
          const { model, tools, tool } = provider(server.baseURL);
          const answers: string[] = [];
          await assert.rejects(askUntilStopped(mode, governed.model(model), tools, 'What does a flight to Oslo cost in March?', answers), (error: unknown) => {
            assert.ok(AgentBreakerError.isInstance(error), `expected the breaker's error, got ${String(error)}`);
            assert.equal(error.category, loop.category);
            return true;
          });
          // Three times: steered; four: noted again (the call has run, so nothing is refused); five: stopped.
          assert.deepEqual(answers, [loop.answer, loop.answer, loop.answer, loop.answer]);
          assert.equal((await breaker.snapshot(sessionId)).counters.toolCalls, 5);
          // A note in the 4th request, another in the 5th; the call has run, so neither says it was refused.
          const sent = server.requests.map((q) => JSON.stringify(q.body.messages));
          assert.deepEqual(
            sent.map((body) => [...body.matchAll(loopNote(loop, 'AgentBreaker', tool))].map((m) => m[1])),
            [[], [], [], [loop.counts[0]], [loop.counts[1]]],
          );
          assert.deepEqual(
            sent.map((body) => body.split('[AgentBreaker]').length - 1),
            [0, 0, 0, 1, 1],
            'no other note',
          );
          assert.ok(sent.every((body) => !body.includes('NOT executed')));
        });
      }
    }
  }
});
