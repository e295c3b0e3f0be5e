import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { generateText, isStepCount, streamText, tool, ToolChoiceViolationError } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { ChatClient, CONVERSATION_ID, InvalidOptionError, ToolCallingAdvisor, type ChatStreamEvent } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { type RecordedRequest, ScriptedModelServer, scriptedModel, type ScriptedTurn } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that streams each round's parts as given, between a stream start and a finish. */
function streamingModel(rounds: ReadonlyArray<readonly LanguageModelV4StreamPart[]>): MockLanguageModelV4 {
  let round = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      const parts = rounds[round++];
      if (parts === undefined) throw new Error(`streaming model script exhausted after ${rounds.length} rounds`);
      const calls = parts.some((p) => p.type === 'tool-call' && p.providerExecuted !== true);
      return {
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
          { type: 'stream-start', warnings: [] },
          ...parts,
          { type: 'finish', usage, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined } },
        ]),
      };
    },
  });
}

const answer = (text: string): LanguageModelV4StreamPart[] => [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: text },
  { type: 'text-end', id: 't' },
];

/** A call whose arguments stream in two pieces before the call itself, as most providers send it. */
const streamedCall = (id: string, toolName: string, input: string): LanguageModelV4StreamPart[] => [
  { type: 'tool-input-start', id, toolName },
  { type: 'tool-input-delta', id, delta: input.slice(0, 5) },
  { type: 'tool-input-delta', id, delta: input.slice(5) },
  { type: 'tool-input-end', id },
  { type: 'tool-call', toolCallId: id, toolName, input },
];

async function drain(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const seen: ChatStreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('toolChoice', () => {
  const echo = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => q });

  for (const mode of MODES) {
    test(`the AI SDK's string form reaches the model as the provider's object form (${mode})`, async () => {
      const echoes = { toolCalls: [{ name: 'echo', input: { q: 'x' } }] };
      const model = mockModel([echoes, { text: 'b' }, { text: 'c' }, echoes]);
      const client = ChatClient.builder(model).defaultTools({ echo }).defaultOptions({ toolChoice: 'required' }).build();
      await runMode(client.prompt('x'), mode);
      await runMode(client.prompt('x').options({ toolChoice: 'none' }), mode);
      await runMode(client.prompt('x').options({ toolChoice: 'auto' }), mode);
      await runMode(client.prompt('x').options({ toolChoice: { type: 'tool', toolName: 'echo' } }), mode);
      const sent = mode === 'call' ? model.doGenerateCalls : model.doStreamCalls;
      assert.deepEqual(
        sent.map((c) => c.toolChoice),
        [{ type: 'required' }, { type: 'none' }, { type: 'auto' }, { type: 'tool', toolName: 'echo' }],
      );
    });
  }

  const VIOLATIONS = [
    { choice: 'required' as const, turn: { text: 'no call' }, message: /did not contain a tool call/ },
    { choice: { type: 'tool' as const, toolName: 'echo' as const }, turn: { toolCalls: [{ name: 'other', input: {} }] }, message: /required tool 'echo'/ },
    { choice: 'none' as const, turn: { toolCalls: [{ name: 'echo', input: { q: 'x' } }] }, message: /even though tool choice was none/ },
  ];
  for (const mode of MODES) {
    for (const { choice, turn, message } of VIOLATIONS) {
      test(`${mode}: a round that ignores toolChoice ${JSON.stringify(choice)} fails with ToolChoiceViolationError, as ${mode === 'call' ? 'generateText' : 'streamText'} does`, async () => {
        const other = tool({ inputSchema: z.object({}), execute: async () => 'other' });
        const ours = mockModel([turn]);
        const client = ChatClient.builder(ours).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ echo, other }).build();
        const isViolation = (e: unknown) => ToolChoiceViolationError.isInstance(e) && message.test(e.message) && e.modelId === ours.modelId;
        await assert.rejects(runMode(client.prompt('go').options({ toolChoice: choice }), mode), isViolation);
        const theirs = mockModel([turn]);
        const tools = { echo, other };
        if (mode === 'call')
          await assert.rejects(generateText({ model: theirs, prompt: 'go', tools, toolChoice: choice, stopWhen: isStepCount(2) }), isViolation);
        else {
          let failed: unknown;
          await streamText({
            model: theirs,
            prompt: 'go',
            tools,
            toolChoice: choice,
            stopWhen: isStepCount(2),
            onError: ({ error }) => void (failed = error),
          }).consumeStream();
          assert.ok(isViolation(failed), String(failed));
        }
        assert.equal(ours.doGenerateCalls.length + ours.doStreamCalls.length, 1, 'no tool ran, no round followed');
      });
    }
  }

  test("after an error-result limit, the loop's 'none' overrides a string toolChoice", async () => {
    const model = mockModel([{ toolCalls: [{ name: 'echo', input: { q: '1' } }] }, { toolCalls: [{ name: 'echo', input: { q: '2' } }] }, { text: 'done' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 1, onLimitExceeded: 'error-result' }))
      .defaultTools({ echo })
      .defaultOptions({ toolChoice: 'required' })
      .build();
    assert.equal(await client.prompt('go').call().content(), 'done');
    assert.deepEqual(
      model.doGenerateCalls.map((c) => c.toolChoice?.type),
      ['required', 'required', 'none'],
    );
  });

  test('a value that is neither form is refused where it is set, naming the setting', () => {
    const client = ChatClient.create(mockModel([]));
    for (const bad of ['sometimes', { type: 'sometimes' }, { type: 'tool' }, { type: 'tool', toolName: '' }, 5]) {
      assert.throws(
        () => client.prompt('x').options({ toolChoice: bad as never }),
        (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'toolChoice',
        JSON.stringify(bad),
      );
    }
  });
});

describe('call(): tool input callbacks', () => {
  test('a tool hears onInputStart, then onInputAvailable, before it runs, as generateText calls them; not for an invalid call', async () => {
    const heard: Record<string, string[]> = {};
    const tools = (side: string) => {
      const log = (heard[side] = [] as string[]);
      return {
        weather: tool({
          inputSchema: z.object({ city: z.string() }),
          onInputStart: ({ toolCallId }) => void log.push(`start ${toolCallId}`),
          onInputAvailable: ({ toolCallId, input }) => void log.push(`available ${toolCallId} ${input.city}`),
          execute: async ({ city }) => {
            log.push(`execute ${city}`);
            return `15C in ${city}`;
          },
        }),
      };
    };
    const turns = () => [
      {
        toolCalls: [
          { name: 'weather', input: { city: 'Paris' }, id: 'c1' },
          { name: 'weather', input: { city: 7 }, id: 'c2' },
        ],
      },
      { text: 'done' },
    ];
    await generateText({ model: mockModel(turns()), tools: tools('generateText'), stopWhen: isStepCount(5), prompt: 'go' });
    await ChatClient.builder(mockModel(turns()))
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools(tools('ChatClient'))
      .build()
      .prompt('go')
      .call()
      .content();
    assert.deepEqual(heard['ChatClient'], heard['generateText']);
    assert.deepEqual(heard['ChatClient'], ['start c1', 'available c1 Paris', 'execute Paris']);
  });
});

describe('stream(): tool input callbacks', () => {
  test("a tool's onInputStart and onInputDelta hear its arguments stream in, as in streamText", async () => {
    const heard: string[] = [];
    const seen: Array<{ toolCallId: string; messages: unknown; abortSignal: unknown; context: unknown }> = [];
    const weather = tool({
      inputSchema: z.object({ city: z.string() }),
      onInputStart: ({ toolCallId, messages, abortSignal, context }) => {
        heard.push(`start ${toolCallId}`);
        seen.push({ toolCallId, messages, abortSignal, context });
      },
      onInputDelta: async ({ inputTextDelta, toolCallId, messages, abortSignal, context }) => {
        heard.push(`delta ${toolCallId} ${inputTextDelta}`);
        seen.push({ toolCallId, messages, abortSignal, context });
      },
      execute: async ({ city }) => {
        heard.push(`execute ${city}`);
        return `15C in ${city}`;
      },
    });
    const model = streamingModel([streamedCall('c1', 'weather', '{"city":"Paris"}'), answer('done')]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build();
    const signal = new AbortController().signal;
    const events = await drain(
      client
        .prompt('go')
        .advisors((a) => a.param(CONVERSATION_ID, 'conv-1'))
        .abortSignal(signal)
        .stream()
        .chatResponse(),
    );

    assert.deepEqual(heard, ['start c1', 'delta c1 {"cit', 'delta c1 y":"Paris"}', 'execute Paris']);
    for (const call of seen) {
      assert.equal(call.toolCallId, 'c1');
      assert.deepEqual(call.messages, [{ role: 'user', content: 'go' }]);
      assert.equal(call.abortSignal, signal);
      // The context the tool loop gives the tool's execute.
      assert.equal((call.context as { conversationId?: unknown }).conversationId, 'conv-1');
      assert.equal((call.context as { sessionId?: unknown }).sessionId, 'conv-1');
    }
    assert.equal(events.at(-1)!.type, 'finish');
  });

  test('a throwing onInputStart or onInputDelta fails the stream with its error, as in streamText, and the tool does not run', async () => {
    for (const hook of ['onInputStart', 'onInputDelta'] as const) {
      let executed = 0;
      const failure = new Error(`${hook} failed`);
      const weather = tool({
        inputSchema: z.object({ city: z.string() }),
        [hook]: () => {
          throw failure;
        },
        execute: async () => {
          executed += 1;
          return 'never';
        },
      });
      const model = streamingModel([streamedCall('c1', 'weather', '{"city":"Paris"}'), answer('done')]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build();
      await assert.rejects(drain(client.prompt('go').stream().chatResponse()), (e: unknown) => e === failure);
      assert.equal(executed, 0, hook);
      assert.equal(model.doStreamCalls.length, 1, `${hook}: a callback's failure is not retried`);
    }
  });

  test('over HTTP, with parallel calls, the callbacks hear what they hear in streamText', async () => {
    const script = (): ScriptedTurn[] => [
      {
        toolCalls: [
          { name: 'weather', arguments: { city: 'Reykjavík' } },
          { name: 'weather', arguments: { city: 'Rome' } },
        ],
      },
      { text: 'Done.' },
    ];
    const listen = (heard: string[]) => {
      const ids: string[] = [];
      // Call ids differ between runs: each call is named by the order its arguments started in.
      const nth = (id: string) => (ids.includes(id) ? ids.indexOf(id) : ids.push(id) - 1);
      return tool({
        inputSchema: z.object({ city: z.string() }),
        onInputStart: ({ toolCallId }) => void heard.push(`start #${nth(toolCallId)}`),
        onInputDelta: ({ toolCallId, inputTextDelta }) => void heard.push(`delta #${nth(toolCallId)} ${inputTextDelta}`),
        execute: async ({ city }) => `15C in ${city}`,
      });
    };

    const bySdk: string[] = [];
    {
      await using server = await new ScriptedModelServer({ script: script() }).start();
      await streamText({ model: scriptedModel(server), prompt: 'Weather?', tools: { weather: listen(bySdk) }, stopWhen: isStepCount(5) }).consumeStream();
    }
    const byClient: string[] = [];
    await using server = await new ScriptedModelServer({ script: script() }).start();
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ weather: listen(byClient) })
      .build();
    await drain(client.prompt('Weather?').stream().chatResponse());

    assert.ok(bySdk.filter((h) => h.startsWith('delta')).length > 2, `the arguments stream in pieces: ${bySdk.join(' | ')}`);
    assert.deepEqual(byClient, bySdk);
  });

  test('a listening tool hears its arguments as they stream, so a stream that fails after they started is not retried', async () => {
    const overloaded = () => new APICallError({ message: 'overloaded', url: 'http://model', requestBodyValues: {}, statusCode: 503, isRetryable: true });
    for (const listening of [true, false]) {
      const heard: string[] = [];
      const weather = tool({
        inputSchema: z.object({ city: z.string() }),
        ...(listening ? { onInputStart: ({ toolCallId }: { toolCallId: string }) => void heard.push(`start ${toolCallId}`) } : {}),
      });
      let attempts = 0;
      const model = new MockLanguageModelV4({
        doStream: async () => {
          attempts += 1;
          const parts: LanguageModelV4StreamPart[] =
            attempts === 1
              ? [
                  { type: 'stream-start', warnings: [] },
                  { type: 'tool-input-start', id: 'c1', toolName: 'weather' },
                  { type: 'error', error: overloaded() },
                ]
              : [{ type: 'stream-start', warnings: [] }, ...answer('fine'), { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } }];
          return { stream: convertArrayToReadableStream(parts) };
        },
      });
      const spec = ChatClient.builder(model).defaultTools({ weather }).defaultOptions({ retryDelayMs: 1 }).build().prompt('go');
      if (listening) {
        await assert.rejects(drain(spec.stream().chatResponse()), (e: unknown) => APICallError.isInstance(e) && e.statusCode === 503);
        assert.deepEqual(heard, ['start c1']);
        assert.equal(attempts, 1);
      } else {
        // Nobody heard the arguments start: the stream is retried as before.
        const text = (await drain(spec.stream().chatResponse())).flatMap((e) => (e.type === 'text-delta' ? [e.text] : []));
        assert.deepEqual(text, ['fine']);
        assert.equal(attempts, 2);
      }
    }
  });

  test('with toolChoice none no callback runs, as streamText offers no tool then; unknown tools are ignored', async () => {
    const heard: string[] = [];
    const weather = tool({
      inputSchema: z.object({ city: z.string() }),
      onInputStart: () => {
        heard.push('start');
      },
      onInputDelta: () => {
        heard.push('delta');
      },
    });
    const model = streamingModel([
      streamedCall('c1', 'weather', '{"city":"Paris"}'),
      [...streamedCall('c2', 'constructor', '{"city":"Rome"}'), ...streamedCall('c3', 'weather', '{"city":"Rome"}')],
    ]);
    const client = ChatClient.builder(model).defaultTools({ weather }).build();
    // A model that calls a tool all the same fails the round, as in streamText.
    await assert.rejects(drain(client.prompt('go').options({ toolChoice: 'none' }).stream().chatResponse()), ToolChoiceViolationError);
    assert.deepEqual(heard, []);
    const events = await drain(client.prompt('go').stream().chatResponse());
    assert.deepEqual(heard, ['start', 'delta', 'delta']);
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'tool-call' ? [e.toolCall.toolName] : [])),
      ['constructor', 'weather'],
    );
  });
});

describe('stream(): hosted tools', () => {
  const hostedRound: LanguageModelV4StreamPart[] = [
    ...answer('searching'),
    { type: 'tool-input-start', id: 'srv_1', toolName: 'web_search', providerExecuted: true },
    { type: 'tool-input-delta', id: 'srv_1', delta: '{"query":"paris"}' },
    { type: 'tool-input-end', id: 'srv_1' },
    { type: 'tool-call', toolCallId: 'srv_1', toolName: 'web_search', input: '{"query":"paris"}', providerExecuted: true },
    { type: 'tool-result', toolCallId: 'srv_1', toolName: 'web_search', result: [{ url: 'https://example.com/p', title: 'Paris' }] },
    { type: 'tool-call', toolCallId: 'srv_2', toolName: 'web_search', input: '{"query":"rome"}', providerExecuted: true },
    { type: 'tool-result', toolCallId: 'srv_2', toolName: 'web_search', result: { error: 'max_uses_exceeded' }, isError: true },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}' },
  ];

  test("a hosted tool's calls and results are streamed as events marked providerExecuted, and the loop runs only the local call", async () => {
    const ran: string[] = [];
    const tools = {
      // A local tool under the hosted tool's name: the provider ran its calls, so the loop must not.
      web_search: tool({
        inputSchema: z.object({ query: z.string() }),
        execute: async ({ query }) => {
          ran.push(`web_search ${query}`);
          return 'local';
        },
      }),
      weather: tool({
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          ran.push(`weather ${city}`);
          return `15C in ${city}`;
        },
      }),
    };
    const model = streamingModel([hostedRound, answer('done')]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(tools).build();
    const events = await drain(client.prompt('go').stream().chatResponse());

    assert.deepEqual(ran, ['weather Paris']);
    const toolEvents = events.flatMap((e): Array<Record<string, unknown>> => {
      if (e.type === 'tool-call') return [{ type: e.type, id: e.toolCall.toolCallId, input: e.toolCall.input, providerExecuted: e.providerExecuted }];
      if (e.type === 'tool-result') return [{ type: e.type, id: e.toolCallId, output: e.output, isError: e.isError, providerExecuted: e.providerExecuted }];
      return [];
    });
    assert.deepEqual(toolEvents, [
      { type: 'tool-call', id: 'srv_1', input: { query: 'paris' }, providerExecuted: true },
      { type: 'tool-result', id: 'srv_1', output: [{ url: 'https://example.com/p', title: 'Paris' }], isError: false, providerExecuted: true },
      { type: 'tool-call', id: 'srv_2', input: { query: 'rome' }, providerExecuted: true },
      { type: 'tool-result', id: 'srv_2', output: { error: 'max_uses_exceeded' }, isError: true, providerExecuted: true },
      { type: 'tool-call', id: 'c1', input: { city: 'Paris' }, providerExecuted: undefined },
      { type: 'tool-result', id: 'c1', output: '15C in Paris', isError: false, providerExecuted: undefined },
    ]);
    // The next round answers only the local call; the hosted ones stay in the assistant turn.
    const last = model.doStreamCalls[1]!.prompt.at(-1)!;
    assert.equal(last.role, 'tool');
    assert.deepEqual(
      last.content.map((p) => (p.type === 'tool-result' ? p.toolCallId : p.type)),
      ['c1'],
    );
  });

  test('over HTTP, an Anthropic hosted web search beside a local call streams the events streamText streams', async () => {
    const script = (request: RecordedRequest): ScriptedTurn => {
      const last = request.body.messages.at(-1)!;
      const answered = Array.isArray(last.content) && last.content.some((p: { type?: string }) => p.type === 'tool_result');
      return answered
        ? { text: 'done' }
        : {
            text: 'looking',
            webSearches: [{ query: 'paris', sources: ['https://example.com/p'] }],
            toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }],
          };
    };
    const run = async (who: 'sdk' | 'client') => {
      await using server = await new ScriptedModelServer({ script }).start();
      const provider = createAnthropic({ baseURL: server.baseURL, apiKey: 'k' });
      const tools = {
        web_search: provider.tools.webSearch_20250305({}),
        weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `15C in ${city}` }),
      };
      const seen: Array<{ type: string; toolName: string; providerExecuted: boolean }> = [];
      if (who === 'sdk') {
        for await (const e of streamText({ model: provider('claude-sonnet-4-5'), tools, prompt: 'go', stopWhen: isStepCount(5) }).fullStream) {
          if (e.type === 'tool-call' || e.type === 'tool-result')
            seen.push({ type: e.type, toolName: e.toolName, providerExecuted: e.providerExecuted === true });
        }
      } else {
        const client = ChatClient.builder(provider('claude-sonnet-4-5')).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(tools).build();
        for await (const e of client.prompt('go').stream().chatResponse()) {
          if (e.type === 'tool-call') seen.push({ type: e.type, toolName: e.toolCall.toolName, providerExecuted: e.providerExecuted === true });
          if (e.type === 'tool-result') seen.push({ type: e.type, toolName: e.toolName, providerExecuted: e.providerExecuted === true });
        }
      }
      return { seen, requests: server.requests.length };
    };
    const sdk = await run('sdk');
    const client = await run('client');
    assert.ok(sdk.seen.some((e) => e.providerExecuted));
    assert.deepEqual(client.seen, sdk.seen);
    assert.equal(client.requests, sdk.requests);
  });
});
