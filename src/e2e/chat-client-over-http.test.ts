/**
 * The ChatClient end to end: the real `@ai-sdk/openai-compatible` provider over
 * real HTTP against the scripted stand-in model. What the model "received" is
 * read from the recorded request bodies, so every assertion is about what
 * really went over the wire.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { APICallError } from '@ai-sdk/provider';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AdvisorOrder,
  ChatClient,
  StructuredOutputValidationAdvisor,
  StructuredOutputValidationError,
  ToolCallAdvisor,
  ToolCallLimitExceededError,
  type Advisor,
  type AdvisorChain,
  type ChatClientRequest,
  type ChatClientRequestSpec,
  type ChatResponse,
  type ChatStreamEvent,
  type GovernedToolSet,
  type ToolCallAdvisorOptions,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type ChatCompletionMessage, type ScriptedTurn } from '../testing/index.ts';

type Mode = 'call' | 'stream';
const MODES: readonly Mode[] = ['call', 'stream'];

/** Runs a request in either mode and returns the final response (and, streaming, every event). */
async function run(spec: ChatClientRequestSpec, mode: Mode): Promise<{ response: ChatResponse; events: ChatStreamEvent[] }> {
  if (mode === 'call') return { response: await spec.call().chatResponse(), events: [] };
  const events: ChatStreamEvent[] = [];
  for await (const event of spec.stream().chatResponse()) events.push(event);
  const finishes = events.filter((e): e is Extract<ChatStreamEvent, { type: 'finish' }> => e.type === 'finish');
  assert.equal(finishes.length, 1, 'a stream ends with exactly one finish event');
  assert.equal(events.at(-1)?.type, 'finish', 'the finish event is the last one');
  return { response: finishes[0]!.response.response, events };
}

/** Drains a request in either mode, for scenarios that are expected to fail. */
async function drain(spec: ChatClientRequestSpec, mode: Mode): Promise<void> {
  if (mode === 'call') {
    await spec.call().chatResponse();
    return;
  }
  for await (const _event of spec.stream().chatResponse()) {
    // consumed only to drive the stream
  }
}

async function startServer(script: ScriptedTurn[]): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script }).start();
}

function client(server: ScriptedModelServer, tools: GovernedToolSet, options: ToolCallAdvisorOptions = {}, ...advisors: Advisor[]): ChatClient {
  return ChatClient.builder(scriptedModel(server))
    .defaultAdvisors(new ToolCallAdvisor(options), ...advisors)
    .defaultTools(tools)
    .build();
}

function messagesOf(server: ScriptedModelServer, index: number): ChatCompletionMessage[] {
  const request = server.requests[index];
  assert.ok(request, `request #${index + 1} reached the stand-in model`);
  return request.body.messages;
}

/** The tool messages at the end of a recorded request: the answers to the previous round's calls. */
function trailingToolMessages(server: ScriptedModelServer, index: number): Array<{ id: unknown; content: unknown }> {
  const messages = messagesOf(server, index);
  const trailing: Array<{ id: unknown; content: unknown }> = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i--) {
    trailing.unshift({ id: messages[i]!.tool_call_id, content: messages[i]!.content });
  }
  return trailing;
}

function toolCallIdsOfLastAssistant(server: ScriptedModelServer, index: number): unknown[] {
  const assistant = messagesOf(server, index).findLast((m) => m.role === 'assistant');
  assert.ok(assistant, `request #${index + 1} carries the assistant turn`);
  assert.ok(Array.isArray(assistant.tool_calls), 'the assistant turn carries its tool calls');
  return (assistant.tool_calls as Array<{ id: unknown }>).map((c) => c.id);
}

/** An advisor that counts how often it runs and remembers how many messages each request carried. */
function probe(name: string, order: number): Advisor & { calls: number; streams: number; seen: number[] } {
  const advisor = {
    name,
    order,
    calls: 0,
    streams: 0,
    seen: [] as number[],
    adviseCall(request: ChatClientRequest, chain: AdvisorChain) {
      advisor.calls += 1;
      advisor.seen.push(request.messages.length);
      return chain.nextCall(request);
    },
    async *adviseStream(request: ChatClientRequest, chain: AdvisorChain) {
      advisor.streams += 1;
      advisor.seen.push(request.messages.length);
      yield* chain.nextStream(request);
    },
  };
  return advisor;
}

const weather = tool({
  description: 'Current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `15°C in ${city}`,
});

/** A weather tool that records the cities it ran for. */
function recordingWeather(cities: string[]) {
  return tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      cities.push(city);
      return `15°C in ${city}`;
    },
  });
}

const threeRounds = (): ScriptedTurn[] => [
  { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] },
  { toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }] },
  { text: 'Paris 15, Rome 15' },
];

for (const mode of MODES) {
  describe(`ChatClient over HTTP, ${mode}()`, () => {
    test('an advisor outside the tool loop runs once per call, one inside once per model round', async () => {
      await using server = await startServer(threeRounds());
      const outer = probe('outer', AdvisorOrder.MEMORY);
      const inner = probe('inner', AdvisorOrder.DEFAULT);
      const { response } = await run(client(server, { weather }, {}, inner, outer).prompt('Weather in Paris and Rome?'), mode);

      assert.equal(response.text, 'Paris 15, Rome 15');
      assert.equal(response.rounds, 3);
      assert.equal(server.requests.length, 3);
      const runs = (a: typeof outer) => (mode === 'call' ? a.calls : a.streams);
      assert.equal(runs(outer), 1);
      assert.equal(runs(inner), 3);
      // The inner advisor sees the conversation grow by an assistant turn and a tool answer per round.
      assert.deepEqual(inner.seen, [1, 3, 5]);
      assert.deepEqual(outer.seen, [1]);
      assert.equal(mode === 'call' ? inner.streams : inner.calls, 0, 'the other path is never taken');
    });

    test('a returnDirect tool ends the loop without another HTTP request', async () => {
      await using server = await startServer([
        { toolCalls: [{ name: 'submit', arguments: { summary: 'all done' } }] },
        { text: 'this turn must never be requested' },
      ]);
      let submitted = 0;
      const submit = Object.assign(
        tool({
          inputSchema: z.object({ summary: z.string() }),
          execute: async ({ summary }) => {
            submitted += 1;
            return summary;
          },
        }),
        { returnDirect: true },
      );
      const { response, events } = await run(client(server, { submit }).prompt('Finish the task'), mode);

      assert.equal(response.text, 'all done');
      assert.equal(server.requests.length, 1);
      assert.equal(submitted, 1);
      assert.equal(response.finishReason, 'stop');
      assert.deepEqual(
        response.messages.map((m) => m.role),
        ['assistant', 'tool'],
      );
      if (mode === 'stream') {
        assert.deepEqual(
          events.filter((e) => e.type === 'tool-result').map((e) => (e as { output: unknown }).output),
          ['all done'],
        );
      }
    });

    test('two parallel tool calls in one turn run concurrently and both results reach the next request in order', async () => {
      await using server = await startServer([
        {
          toolCalls: [
            { name: 'lookup', arguments: { key: 'first' }, id: 'call_first' },
            { name: 'lookup', arguments: { key: 'second' }, id: 'call_second' },
          ],
        },
        { text: 'Both looked up.' },
      ]);
      const started: string[] = [];
      const { promise: bothStarted, resolve: release } = Promise.withResolvers<void>();
      const lookup = tool({
        inputSchema: z.object({ key: z.string() }),
        execute: async ({ key }) => {
          started.push(key);
          if (started.length === 2) release();
          // Neither call can finish before both have started: proves they ran concurrently.
          await bothStarted;
          // The first call finishes last, so the answer order cannot come from completion order.
          if (key === 'first') await new Promise((resolve) => setImmediate(resolve));
          return `value of ${key}`;
        },
      });
      const { response } = await run(client(server, { lookup }).prompt('Look up both'), mode);

      assert.equal(response.text, 'Both looked up.');
      assert.equal(server.requests.length, 2);
      assert.deepEqual(toolCallIdsOfLastAssistant(server, 1), ['call_first', 'call_second']);
      assert.deepEqual(trailingToolMessages(server, 1), [
        { id: 'call_first', content: 'value of first' },
        { id: 'call_second', content: 'value of second' },
      ]);
    });

    test('a throwing tool, an unknown tool and invalid arguments come back to the model as tool messages', async () => {
      await using server = await startServer([
        {
          toolCalls: [
            { name: 'explode', arguments: {}, id: 'call_explode' },
            { name: 'teleport', arguments: { to: 'Mars' }, id: 'call_unknown' },
            { name: 'echo', arguments: '{"q": "unterminated', id: 'call_bad_json' },
            { name: 'echo', arguments: { q: 42 }, id: 'call_bad_type' },
          ],
        },
        { text: 'I could not do any of that.' },
      ]);
      let echoed = 0;
      const explode = tool({
        inputSchema: z.object({}),
        execute: async (): Promise<string> => {
          throw new Error('disk on fire');
        },
      });
      const echo = tool({
        inputSchema: z.object({ q: z.string() }),
        execute: async ({ q }) => {
          echoed += 1;
          return q;
        },
      });
      const { response } = await run(client(server, { explode, echo }).prompt('Try things'), mode);

      assert.equal(response.text, 'I could not do any of that.');
      assert.equal(server.requests.length, 2, 'the call went on to the next round instead of failing');
      assert.equal(echoed, 0, 'a tool never runs with arguments it cannot accept');
      const answers = trailingToolMessages(server, 1);
      assert.deepEqual(
        answers.map((a) => a.id),
        ['call_explode', 'call_unknown', 'call_bad_json', 'call_bad_type'],
      );
      const [thrown, unknown, badJson, badType] = answers.map((a) => String(a.content));
      assert.match(thrown!, /Tool "explode" failed: disk on fire/);
      assert.match(unknown!, /Unknown tool "teleport"\. Available tools: explode, echo/);
      assert.match(badJson!, /Invalid arguments for tool "echo": not valid JSON: \{"q": "unterminated/);
      assert.match(badType!, /Invalid arguments for tool "echo"/);
      assert.doesNotMatch(badType!, /not valid JSON/, 'well-formed JSON of the wrong type is reported as a schema problem');
    });

    test('a per-tool limit throws ToolCallLimitExceededError before the extra call runs', async () => {
      await using server = await startServer([
        { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] },
        { toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }] },
        { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
        { text: 'never reached' },
      ]);
      const cities: string[] = [];
      const counted = recordingWeather(cities);
      const error = await drain(client(server, { weather: counted }, { maxCallsPerTool: { weather: 2 } }).prompt('Weather everywhere'), mode).then(
        () => assert.fail('the limit must end the call'),
        (e: unknown) => e,
      );

      assert.ok(error instanceof ToolCallLimitExceededError, `expected ToolCallLimitExceededError, got ${String(error)}`);
      assert.equal(error.toolName, 'weather');
      assert.equal(error.limit, 2);
      assert.equal(error.code, 'GOVERNOR_TOOL_CALL_LIMIT');
      assert.deepEqual(cities, ['Paris', 'Rome']);
      assert.equal(server.requests.length, 3, 'no request is sent after the limit is hit');
    });

    test('a total limit throws with no tool name, counting calls across tools and rounds', async () => {
      await using server = await startServer([
        {
          toolCalls: [
            { name: 'weather', arguments: { city: 'Paris' } },
            { name: 'lookup', arguments: { key: 'a' } },
          ],
        },
        { toolCalls: [{ name: 'lookup', arguments: { key: 'b' } }] },
        { text: 'never reached' },
      ]);
      const ran: string[] = [];
      const lookup = tool({
        inputSchema: z.object({ key: z.string() }),
        execute: async ({ key }) => {
          ran.push(key);
          return key;
        },
      });
      const countedWeather = recordingWeather(ran);
      const error = await drain(client(server, { weather: countedWeather, lookup }, { maxToolCalls: 2 }).prompt('Go'), mode).then(
        () => assert.fail('the limit must end the call'),
        (e: unknown) => e,
      );

      assert.ok(error instanceof ToolCallLimitExceededError, `expected ToolCallLimitExceededError, got ${String(error)}`);
      assert.equal(error.toolName, undefined);
      assert.equal(error.limit, 2);
      assert.deepEqual(ran.sort(), ['Paris', 'a']);
      assert.equal(server.requests.length, 2);
    });

    test("with onLimitExceeded 'error-result' the extra call is not run and the model is told so", async () => {
      await using server = await startServer([
        {
          toolCalls: [
            { name: 'weather', arguments: { city: 'Paris' } },
            { name: 'weather', arguments: { city: 'Rome' } },
          ],
        },
        { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
        { text: 'Paris is 15°C; I could not check the rest.' },
      ]);
      const cities: string[] = [];
      const counted = recordingWeather(cities);
      const { response } = await run(
        client(server, { weather: counted }, { maxCallsPerTool: 1, onLimitExceeded: 'error-result' }).prompt('Weather everywhere'),
        mode,
      );

      assert.equal(response.text, 'Paris is 15°C; I could not check the rest.');
      assert.deepEqual(cities, ['Paris']);
      assert.equal(server.requests.length, 3);
      const [paris, rome] = trailingToolMessages(server, 1).map((a) => String(a.content));
      assert.equal(paris, '15°C in Paris');
      assert.match(rome!, /exceeded its limit of 1 calls of tool "weather"\. The call was not run/);
      const [oslo] = trailingToolMessages(server, 2).map((a) => String(a.content));
      assert.match(oslo!, /exceeded its limit of 1 calls of tool "weather"/);
    });

    test('a denied approval keeps the tool from running and tells the model why', async () => {
      await using server = await startServer([
        {
          toolCalls: [
            { name: 'delete_file', arguments: { path: '/etc/passwd' }, id: 'call_delete' },
            { name: 'weather', arguments: { city: 'Paris' }, id: 'call_weather' },
          ],
        },
        { text: 'I was not allowed to delete it.' },
      ]);
      let deleted = 0;
      const asked: unknown[] = [];
      const deleteFile = tool({
        inputSchema: z.object({ path: z.string() }),
        execute: async () => {
          deleted += 1;
          return 'deleted';
        },
      });
      const { response } = await run(
        client(
          server,
          { delete_file: deleteFile, weather },
          {
            approve: (call) => {
              asked.push(call.input);
              return call.toolName === 'delete_file' ? { approved: false, reason: 'system files need a human' } : true;
            },
          },
        ).prompt('Clean up'),
        mode,
      );

      assert.equal(response.text, 'I was not allowed to delete it.');
      assert.equal(deleted, 0);
      assert.deepEqual(asked, [{ path: '/etc/passwd' }, { city: 'Paris' }], 'the approver sees parsed arguments of every call');
      assert.deepEqual(trailingToolMessages(server, 1), [
        { id: 'call_delete', content: 'The call of tool "delete_file" was denied by the approver: system files need a human' },
        { id: 'call_weather', content: '15°C in Paris' },
      ]);
    });

    test('usage summed over the rounds equals the sum of the scripted usages', async () => {
      await using server = await startServer([
        { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }], usage: { promptTokens: 120, completionTokens: 9, cachedTokens: 100 } },
        { toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }], usage: { promptTokens: 150, completionTokens: 11, cachedTokens: 120 } },
        { text: 'Paris 15, Rome 15', usage: { promptTokens: 181, completionTokens: 7, cachedTokens: 0 } },
      ]);
      const { response } = await run(client(server, { weather }).prompt('Weather?'), mode);

      assert.deepEqual(response.usage, { inputTokens: 181, outputTokens: 7, cachedInputTokens: 0 }, 'usage is the last round');
      assert.deepEqual(response.totalUsage, { inputTokens: 451, outputTokens: 27, cachedInputTokens: 220 });
      assert.equal(response.rounds, 3);
    });

    test('a 400 from the provider surfaces as an APICallError after exactly one request', async () => {
      await using server = await startServer([
        { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] },
        { error: { status: 400, message: 'context too long' } },
        { text: 'never reached' },
      ]);
      const error = await drain(client(server, { weather }).prompt('Weather?'), mode).then(
        () => assert.fail('a 400 must fail the call'),
        (e: unknown) => e,
      );

      assert.ok(APICallError.isInstance(error), `expected APICallError, got ${String(error)}`);
      assert.equal(error.statusCode, 400);
      assert.equal(error.isRetryable, false);
      assert.match(error.message, /context too long/);
      // A request the provider refused as malformed cannot succeed by sending it again: no retry.
      assert.equal(server.requests.length, 2);
    });
  });
}

describe('ChatClient over HTTP, stream() only', () => {
  test('streamed text arrives in several deltas that join to the answer', async () => {
    const answer = 'The quick brown fox jumps over the lazy dog.';
    await using server = await startServer([{ toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] }, { text: answer }]);
    const deltas: string[] = [];
    for await (const delta of client(server, { weather }).prompt('Tell me').stream().content()) deltas.push(delta);

    assert.equal(deltas.join(''), answer);
    assert.ok(deltas.length >= 5, `expected the answer in several deltas, got ${deltas.length}`);
    assert.equal(server.requests.length, 2);
    assert.ok(
      server.requests.every((r) => r.body.stream === true),
      'stream() asks the provider for a stream every round',
    );
  });

  test('chatResponse() interleaves tool calls, tool results and text, and ends with one finish', async () => {
    await using server = await startServer(threeRounds());
    const events: ChatStreamEvent[] = [];
    for await (const event of client(server, { weather }).prompt('Weather?').stream().chatResponse()) events.push(event);

    const kinds = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
    assert.deepEqual(kinds, ['tool-call', 'tool-result', 'tool-call', 'tool-result', 'text-delta', 'finish']);
    const results = events.filter((e) => e.type === 'tool-result').map((e) => (e as { output: unknown }).output);
    assert.deepEqual(results, ['15°C in Paris', '15°C in Rome']);
  });

  test('call() sends no stream flag', async () => {
    await using server = await startServer([{ text: 'plain' }]);
    assert.equal(await client(server, {}).prompt('Hi').call().content(), 'plain');
    assert.notEqual(server.requests[0]!.body.stream, true);
  });
});

describe('ChatClient over HTTP, structured output', () => {
  const person = z.object({ name: z.string(), age: z.number().int() });

  test('a failed validation is retried with the errors in the next HTTP request', async () => {
    await using server = await startServer([{ text: '{"name": "Ada"}' }, { text: '{"name": "Ada", "age": 36}' }]);
    const chat = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new StructuredOutputValidationAdvisor()).build();
    const ada = await chat.prompt('Who wrote the first program?').call().entity(person);

    assert.deepEqual(ada, { name: 'Ada', age: 36 });
    assert.equal(server.requests.length, 2);
    const first = messagesOf(server, 0);
    const second = messagesOf(server, 1);
    assert.ok(server.requests[0]!.body.response_format !== undefined, 'JSON output is requested from the provider');
    assert.match(String(first[0]!.content), /JSON Schema/, 'the schema is in the system instructions');
    // The retry carries the first attempt's answer and its validation errors.
    assert.equal(second.length, first.length + 2);
    assert.deepEqual(second.at(-2), { role: 'assistant', content: '{"name": "Ada"}' });
    const feedback = second.at(-1)!;
    assert.equal(feedback.role, 'user');
    assert.match(String(feedback.content), /Validation errors:\n- age: /);
  });

  test('the typed StructuredOutputValidationError comes after the last attempt', async () => {
    await using server = await startServer([{ text: 'not json at all' }, { text: '{"name": "Ada", "age": "old"}' }, { text: 'unused' }]);
    const chat = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ maxRepeatAttempts: 1 }))
      .build();
    const error = await chat
      .prompt('Who?')
      .call()
      .entity(person)
      .then(
        () => assert.fail('an invalid answer after the last attempt must throw'),
        (e: unknown) => e,
      );

    assert.ok(error instanceof StructuredOutputValidationError, `expected StructuredOutputValidationError, got ${String(error)}`);
    assert.equal(error.attempts, 2);
    assert.equal(error.text, '{"name": "Ada", "age": "old"}');
    assert.ok(
      error.errors.some((e) => e.startsWith('age:')),
      `errors name the field: ${error.errors.join('; ')}`,
    );
    assert.equal(server.requests.length, 2, 'no request after the last attempt');
    assert.match(String(messagesOf(server, 1).at(-1)!.content), /not valid JSON/);
  });

  test('inside a tool loop, a tool round passes validation untouched and the answer is validated', async () => {
    await using server = await startServer([
      { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] },
      { text: '{"city": "Paris"}' },
      { text: '{"city": "Paris", "celsius": 15}' },
    ]);
    const chat = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor())
      .defaultTools({ weather })
      .build();
    const report = await chat
      .prompt('Weather in Paris as JSON')
      .call()
      .entity(z.object({ city: z.string(), celsius: z.number() }));

    assert.deepEqual(report, { city: 'Paris', celsius: 15 });
    assert.equal(server.requests.length, 3);
    assert.deepEqual(trailingToolMessages(server, 1), [{ id: 'call_1_1', content: '15°C in Paris' }]);
    assert.match(String(messagesOf(server, 2).at(-1)!.content), /celsius/);
  });
});
