import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, tool as agentTool } from '@openai/agents';
import { generateText, isStepCount, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { createClient } from 'redis';
import { z } from 'zod';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { roundRobinFetch } from '../test-support/round-robin-fetch.ts';
import { requireRedis } from '../test-support/services.ts';
import { CART_FAILURE, CODE_LOOP, type HostedLoop, loopNote, MCP_LOOP, PAGE_LOOP, SHELL_LOOP, searchLoopServer } from '../test-support/hosted-loops.ts';
import { flightTools } from './test-support/flight-tools.ts';
import { ScriptedModelServer, type ScriptedTurn } from '../testing/index.ts';
import { createModelProxy, startModelProxy, type ModelProxyServer } from './index.ts';
import { proxySessionId } from './proxy-session.ts';
import { responsesWire } from './responses-wire.ts';

type InputItem = OpenAI.Responses.ResponseInputItem;

const SEARCH: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'search',
  strict: false,
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
};
/** The model asks for the same search forever: a tool-call spiral. */
const SPIRAL: ScriptedTurn[] = [{ toolCalls: [{ name: 'search', arguments: { q: 'flights to Oslo' } }] }];

async function rig(script: ScriptedTurn[]): Promise<{ upstream: ScriptedModelServer; proxy: ModelProxyServer; close(): Promise<void> }> {
  const upstream = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
  const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0 });
  return {
    upstream,
    proxy,
    async close() {
      await proxy.close();
      await upstream.close();
    },
  };
}

/**
 * One round of a hand-written Responses agent loop: ask (streamed through the
 * client's own accumulating stream helper, which checks every output index),
 * then answer each function call with the same result.
 */
/** What a request may ask for beyond the model's answer. */
interface RoundExtras {
  readonly include?: OpenAI.Responses.ResponseIncludable[];
}

async function agentRound(
  client: OpenAI,
  input: InputItem[],
  stream: boolean,
  extras: RoundExtras = {},
): Promise<{ response: OpenAI.Responses.Response; stopHeader: string | null }> {
  const body = { model: 'm', instructions: 'You book travel.', input, tools: [SEARCH], ...extras };
  let response: OpenAI.Responses.Response;
  let stopHeader: string | null;
  if (stream) {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    const run = client.responses.stream(body);
    for await (const event of run) events.push(event);
    response = await run.finalResponse();
    assert.equal(events.at(-1)?.type, 'response.completed');
    // The items streamed one by one add up to the final output, index for index.
    const added = events.filter((e) => e.type === 'response.output_item.added');
    assert.deepEqual(
      added.map((e) => e.output_index),
      added.map((_, i) => i),
    );
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    stopHeader = null;
  } else {
    const { data, response: raw } = await client.responses.create(body).withResponse();
    response = data;
    stopHeader = raw.headers.get('x-governor-stop');
  }
  for (const item of response.output) {
    input.push(item as InputItem);
    if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: 'No flights found.' });
  }
  if (!response.output.some((item) => item.type === 'function_call')) input.push({ role: 'user', content: 'Keep trying.' });
  return { response, stopHeader };
}

function calls(response: OpenAI.Responses.Response): OpenAI.Responses.ResponseFunctionToolCall[] {
  return response.output.filter((item) => item.type === 'function_call');
}

function text(response: OpenAI.Responses.Response): string {
  return response.output
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content)
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

for (const stream of [false, true]) {
  describe(`governor proxy with the OpenAI Responses API (${stream ? 'streamed' : 'not streamed'})`, () => {
    test('a spiral is steered (on the next upstream request), blocked, stopped, then refused', async () => {
      const r = await rig(SPIRAL);
      try {
        const client = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
        const input: InputItem[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
        for (let i = 0; i < 3; i += 1) {
          const round = await agentRound(client, input, stream);
          assert.equal(calls(round.response).length, 1, `round ${i + 1} passes its tool call`);
        }
        assert.doesNotMatch(JSON.stringify(r.upstream.requests.at(-1)!.body['input']), /\[governor\]/);
        const blocked = await agentRound(client, input, stream);
        // The fourth request went upstream with the breaker's message on the tool result...
        const steered = (r.upstream.requests.at(-1)!.body['input'] as { output?: string }[]).at(-1)!;
        assert.match(steered.output ?? '', /^No flights found\.\n\n\[governor\] .*search/);
        // ... and its repeated call is replaced by a message: the agent has nothing to run.
        assert.equal(calls(blocked.response).length, 0);
        assert.match(text(blocked.response), /The call to search was not run: You have called "search"/);
        assert.doesNotMatch(text(blocked.response), /NOT executed/);
        assert.equal(blocked.response.status, 'completed');
        assert.equal(blocked.stopHeader, null);
        const stopped = await agentRound(client, input, stream);
        assert.equal(calls(stopped.response).length, 0);
        assert.match(text(stopped.response), /stopped by the agent breaker \(tool_spiral\): tool-call spiral — /);
        if (!stream) assert.equal(stopped.stopHeader, 'tool_spiral');
        const upstreamCalls = r.upstream.requests.length;
        await assert.rejects(agentRound(client, input, stream), (error: unknown) => {
          assert.ok(error instanceof OpenAI.PermissionDeniedError);
          assert.equal(error.code, 'breaker_open');
          assert.equal(error.headers.get('x-governor-stop'), 'tool_spiral');
          return true;
        });
        assert.equal(r.upstream.requests.length, upstreamCalls);
        assert.equal(r.upstream.requests[0]!.path, '/v1/responses');
        assert.equal(r.upstream.requests[0]!.headers['authorization'], '[REDACTED]');
      } finally {
        await r.close();
      }
    });

    test("a load balancer's retry of each request: the retry's answer gets the original's verdict, and the spiral climbs as without retries", async () => {
      const r = await rig(SPIRAL);
      try {
        const client = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
        const input: InputItem[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
        const verdict = async (round: ReturnType<typeof agentRound>): Promise<string> => {
          try {
            const { response } = await round;
            if (calls(response).length > 0) return 'call';
            return /stopped by the agent breaker/.test(text(response)) ? 'stop' : /was not run/.test(text(response)) ? 'block' : 'text';
          } catch (error) {
            if (error instanceof OpenAI.PermissionDeniedError) return 'refused';
            throw error;
          }
        };
        const seen: string[] = [];
        for (let i = 0; i < 8 && !seen.at(-1)?.startsWith('stop'); i += 1) {
          // The original's answer never reaches the agent: its input goes on from the retry's.
          const original = await verdict(agentRound(client, [...input], stream));
          seen.push(`${original}/${await verdict(agentRound(client, input, stream))}`);
        }
        assert.deepEqual(seen, ['call/call', 'call/call', 'call/call', 'block/block', 'stop/refused']);
      } finally {
        await r.close();
      }
    });

    test('a round with a repeated call and a new one: only the repeat is taken out, the rest keeps its order', async () => {
      // Each round: the same search again, and the weather in a new city.
      const cities = ['Bergen', 'Tromsø', 'Stavanger', 'Ålesund', 'Bodø'];
      const upstream = await new ScriptedModelServer({
        script: (_request, index) => ({
          text: `Round ${index + 1}.`,
          toolCalls: [
            { name: 'search', arguments: { q: 'flights to Oslo' } },
            { name: 'weather', arguments: { city: cities[index % cities.length] } },
          ],
        }),
      }).start();
      const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0 });
      try {
        const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
        const input: InputItem[] = [{ role: 'user', content: 'Find me a flight.' }];
        let round = await agentRound(client, input, stream);
        while (calls(round.response).length === 2) round = await agentRound(client, input, stream);
        assert.deepEqual(
          calls(round.response).map((c) => JSON.parse(c.arguments) as unknown),
          [{ city: cities[(upstream.requests.length - 1) % cities.length] }],
        );
        assert.deepEqual(
          round.response.output.map((item) => item.type),
          ['message', 'function_call', 'message'],
        );
        assert.match(text(round.response), /^Round \d\.\[governor\] The call to search was not run/);
      } finally {
        await proxy.close();
        await upstream.close();
      }
    });

    test('a productive run with parallel calls passes byte for byte (compared with a direct run)', async () => {
      const script: ScriptedTurn[] = [
        { text: 'Let me look.', toolCalls: [{ name: 'search', arguments: { q: 'Oslo' } }], usage: { promptTokens: 40, completionTokens: 7 } },
        {
          toolCalls: [
            { name: 'search', arguments: { q: 'Bergen' } },
            { name: 'search', arguments: { q: 'Tromsø' } },
          ],
          usage: { promptTokens: 60, completionTokens: 9 },
        },
        { text: 'Three cities checked: fly to Bergen on Tuesday. ✈️', usage: { promptTokens: 90, completionTokens: 12 } },
      ];
      const direct = await new ScriptedModelServer({ script }).start();
      const r = await rig(script);
      try {
        const run = async (baseURL: string): Promise<string[]> => {
          const input: unknown[] = [{ role: 'user', content: 'Where should I fly?' }];
          const bodies: string[] = [];
          for (let i = 0; i < script.length; i += 1) {
            const response = await fetch(`${baseURL}/responses`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-not-a-real-key' },
              body: JSON.stringify({ model: 'm', input, tools: [SEARCH], stream }),
            });
            assert.equal(response.status, 200);
            const body = await response.text();
            bodies.push(body.replace(/"created_at":\d+/g, '"created_at":0'));
            const final = stream
              ? (
                  JSON.parse(
                    body
                      .split('\n')
                      .findLast((line) => line.startsWith('data: '))!
                      .slice(6),
                  ) as { response: OpenAI.Responses.Response }
                ).response
              : (JSON.parse(body) as OpenAI.Responses.Response);
            for (const item of final.output) {
              input.push(item);
              if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `sunny in ${item.call_id}` });
            }
          }
          return bodies;
        };
        const viaProxy = await run(`${r.proxy.url}/v1`);
        const straight = await run(direct.baseURL);
        assert.deepEqual(viaProxy, straight);
        assert.match(viaProxy[2]!, /fly to Bergen on Tuesday/);
        assert.deepEqual(
          r.upstream.requests.map((q) => q.body),
          direct.requests.map((q) => q.body),
        );
      } finally {
        await r.close();
        await direct.close();
      }
    });
  });
}

describe('governor proxy with the AI SDK OpenAI provider (Responses API)', () => {
  for (const mode of ['generate', 'stream'] as const) {
    test(`${mode}Text: the spiral is steered, then its repeated call is not run`, async () => {
      const r = await rig(SPIRAL);
      try {
        const openai = createOpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
        const count = { n: 0 };
        const options = {
          model: openai.responses('m'),
          system: 'You book travel.',
          prompt: 'Find me a flight to Oslo.',
          tools: {
            search: tool({
              inputSchema: z.object({ q: z.string() }),
              execute: async () => {
                count.n += 1;
                return 'No flights found.';
              },
            }),
          },
          stopWhen: isStepCount(10),
        };
        const answer = mode === 'generate' ? (await generateText(options)).text : await streamText(options).text;
        assert.equal(count.n, 3, 'three searches ran; the fourth was refused');
        assert.match(answer, /The call to search was not run/);
        assert.equal(r.upstream.requests.length, 4);
        assert.match(JSON.stringify((r.upstream.requests[3]!.body['input'] as unknown[]).at(-1)), /\[governor\]/);
      } finally {
        await r.close();
      }
    });
  }
});

describe('governor proxy with the OpenAI Agents SDK (its Responses model)', () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: the spiral's repeated call is not run and the run ends with the explanation`, async () => {
      const r = await rig(SPIRAL);
      try {
        const client = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
        const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }), tracingDisabled: true });
        let runs = 0;
        const search = agentTool({
          name: 'search',
          description: 'Search flights',
          parameters: z.object({ q: z.string() }),
          execute: async () => {
            runs += 1;
            return 'No flights found.';
          },
        });
        const agent = new Agent({ name: 'travel', instructions: 'You book travel.', tools: [search], model: 'm' });
        let output: unknown;
        if (stream) {
          const result = await runner.run(agent, 'Find me a flight to Oslo.', { stream: true, maxTurns: 20 });
          for await (const _event of result) {
            // Drained: the run completes once its events are read.
          }
          await result.completed;
          output = result.finalOutput;
        } else {
          output = (await runner.run(agent, 'Find me a flight to Oslo.', { maxTurns: 20 })).finalOutput;
        }
        assert.equal(runs, 3);
        assert.match(String(output), /^\[governor\] The call to search was not run/);
        assert.ok(r.upstream.requests.every((q) => q.path === '/v1/responses'));
      } finally {
        await r.close();
      }
    });
  }
});

describe('governor proxy with Codex-style input: each call followed by its output', () => {
  test('every output of a round is observed once; a replica that did not judge the round takes only the outputs after the last call', async () => {
    const script: ScriptedTurn[] = [
      {
        toolCalls: [
          { name: 'shell', arguments: { cmd: 'ls src' } },
          { name: 'shell', arguments: { cmd: 'ls test' } },
        ],
      },
      {
        toolCalls: [
          { name: 'shell', arguments: { cmd: 'cat src/a.ts' } },
          { name: 'shell', arguments: { cmd: 'cat test/a.ts' } },
        ],
      },
      { text: 'The test imports a file that does not exist.' },
    ];
    const upstream = await new ScriptedModelServer({ script }).start();
    const breaker = new AgentBreaker();
    const replicaA = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    const replicaB = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    try {
      const input: unknown[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Why does the test fail?' }] }];
      const send = (proxy: ModelProxyServer) =>
        fetch(`${proxy.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-governor-session': 'codex-1' },
          body: JSON.stringify({ model: 'm', input, store: false, stream: false }),
        });
      for (let round = 0; round < script.length; round += 1) {
        const response = (await (await send(replicaA)).json()) as OpenAI.Responses.Response;
        for (const item of response.output) {
          input.push(item);
          if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `output of ${item.arguments}` });
        }
      }
      assert.equal((await breaker.snapshot('codex-1')).counters.toolCalls, 4);
      // The last request retried on another replica: only the output after the last call is new to it.
      input.splice(input.length - 1);
      assert.equal((await send(replicaB)).status, 400, 'the stand-in has no turn left');
      assert.equal((await breaker.snapshot('codex-1')).counters.toolCalls, 5);
    } finally {
      await replicaA.close();
      await replicaB.close();
      await upstream.close();
    }
  });
  test('two Codex conversations that open alike are sessions of their own, told apart by their session-id (or older session_id) header', async () => {
    const script: ScriptedTurn[] = [{ toolCalls: [{ name: 'shell', arguments: { cmd: 'npm test' } }] }];
    const upstream = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
    const breaker = new AgentBreaker();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    try {
      // The same preamble and task in two conversations (an evaluation running one task twice at once), their rounds interleaved.
      const inputs = [0, 1].map(() => [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Make the tests pass.' }] }] as unknown[]);
      for (let round = 0; round < 3; round += 1) {
        for (const [i, input] of inputs.entries()) {
          const response = await fetch(`${proxy.url}/v1/responses`, {
            method: 'POST',
            // Codex sends session-id; its earlier versions sent session_id.
            headers: { 'content-type': 'application/json', [i === 0 ? 'session-id' : 'session_id']: `conversation-${i}` },
            body: JSON.stringify({ model: 'm', instructions: 'You are a coding agent.', input, store: false }),
          });
          for (const item of ((await response.json()) as OpenAI.Responses.Response).output) {
            input.push(item);
            if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `${round} failed` });
          }
        }
      }
      // Each ran the tests three times with new results: nothing to steer. Sharing one session, six runs would have looked like a loop.
      assert.equal(upstream.requests.filter((r) => JSON.stringify(r.body).includes('[governor]')).length, 0);
      for (const i of [0, 1]) assert.equal((await breaker.snapshot(`session:conversation-${i}`)).counters.toolCalls, 2);
    } finally {
      await upstream.close();
    }
  });

  test('replicas taking turns: calls one replica remembers from an older response do not make old outputs new', async () => {
    const script: ScriptedTurn[] = ['ls', 'cat a.ts', 'npm test'].map((cmd) => ({ toolCalls: [{ name: 'shell', arguments: { cmd } }] }));
    const upstream = await new ScriptedModelServer({ script: [...script, { text: 'Done.' }] }).start();
    const breaker = new AgentBreaker();
    // Which tool results the replicas observe, in order.
    const observed: unknown[] = [];
    const observe = breaker.observe.bind(breaker);
    breaker.observe = (sessionId, event) => {
      if (event.kind === 'tool_call') observed.push(event.print);
      return observe(sessionId, event);
    };
    const replicas = [
      await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 }),
      await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 }),
    ];
    try {
      const input: unknown[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests.' }] }];
      for (let round = 0; round <= script.length; round += 1) {
        const response = await fetch(`${replicas[round % 2]!.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-governor-session': 'codex-turns' },
          body: JSON.stringify({ model: 'm', input, store: false }),
        });
        for (const item of ((await response.json()) as OpenAI.Responses.Response).output) {
          input.push(item);
          if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `output of ${item.arguments}` });
        }
      }
      // Each replica takes the output after the last call (of parallel calls it could miss one, never take one twice).
      assert.deepEqual(
        observed,
        ['ls', 'cat a.ts', 'npm test'].map((cmd) => breaker.printToolCall({ tool: 'shell', args: { cmd } })),
      );
    } finally {
      for (const replica of replicas) await replica.close();
      await upstream.close();
    }
  });
});

describe('governor proxy with requests that continue a stored response (previous_response_id)', () => {
  test('the session and the tool calls are known from the response continued: the spiral is blocked, stopped, then refused', async () => {
    const r = await rig(SPIRAL);
    try {
      const client = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
      const seen: OpenAI.Responses.Response[] = [];
      let input: InputItem[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const ask = async (): Promise<OpenAI.Responses.Response> => {
        const previous = seen.at(-1);
        const response = await client.responses.create({
          model: 'm',
          instructions: 'You book travel.',
          input,
          tools: [SEARCH],
          ...(previous === undefined ? {} : { previous_response_id: previous.id }),
        });
        seen.push(response);
        // Only what is new goes with the next request: the outputs of this response's calls, or a nudge.
        input = calls(response).map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: 'No flights found.' }));
        if (input.length === 0) input = [{ role: 'user', content: 'Keep trying.' }];
        return response;
      };
      for (let i = 0; i < 3; i += 1) assert.equal(calls(await ask()).length, 1);
      const blocked = await ask();
      assert.equal(calls(blocked).length, 0);
      assert.match(text(blocked), /The call to search was not run/);
      assert.match(JSON.stringify(r.upstream.requests.at(-1)!.body['input']), /\[governor\] .*search/);
      assert.match(text(await ask()), /stopped by the agent breaker \(tool_spiral\)/);
      await assert.rejects(ask(), (error: unknown) => error instanceof OpenAI.PermissionDeniedError && error.code === 'breaker_open');
      // Another conversation (another first message) is a session of its own, and so are the requests that continue it.
      input = [{ role: 'user', content: 'Find me a flight to Bergen.' }];
      seen.length = 0;
      assert.equal(calls(await ask()).length, 1);
      assert.equal(calls(await ask()).length, 1);
    } finally {
      await r.close();
    }
  });
});

describe('two proxies sharing one Redis store, with requests that continue a stored response', () => {
  const stores: RedisBreakerStore[] = [];
  after(async () => {
    for (const store of stores) await store.close();
  });

  test('a continued response is judged in its session on whichever replica gets it; one the API does not store is not noted', async () => {
    const url = await requireRedis();
    const keyPrefix = `governor:test:responses:${randomUUID()}:`;
    const breakers = [0, 1].map(() => {
      const store = new RedisBreakerStore({ url, keyPrefix });
      stores.push(store);
      return new AgentBreaker({ store, checkFreshnessMs: 0, budget: { maxTokens: 250 } });
    });
    const turn: ScriptedTurn = { toolCalls: [{ name: 'search', arguments: { q: 'Oslo' } }], usage: { promptTokens: 50, completionTokens: 10 } };
    const upstream = await new ScriptedModelServer({ script: [turn], onExhausted: 'repeat-last' }).start();
    const replicas = await Promise.all(breakers.map((breaker) => startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 })));
    try {
      const client = new OpenAI({
        baseURL: `${replicas[0]!.url}/v1`,
        apiKey: 'sk-test-not-a-real-key',
        maxRetries: 0,
        // Each request goes to the next replica.
        fetch: roundRobinFetch(replicas),
      });
      const conversation = async (first: string, store: boolean): Promise<{ session: string; answers: OpenAI.Responses.Response[]; refused: boolean }> => {
        const opening = { model: 'm', instructions: 'You book travel.', tools: [SEARCH], store };
        const session = proxySessionId(
          new Headers({ authorization: 'Bearer sk-test-not-a-real-key' }),
          { ...opening, input: [{ role: 'user', content: first }] },
          responsesWire,
        );
        const answers: OpenAI.Responses.Response[] = [];
        let input: InputItem[] = [{ role: 'user', content: first }];
        for (let i = 0; i < 8; i += 1) {
          const previous = answers.at(-1);
          try {
            answers.push(await client.responses.create({ ...opening, input, ...(previous === undefined ? {} : { previous_response_id: previous.id }) }));
          } catch (error) {
            assert.ok(error instanceof OpenAI.PermissionDeniedError && error.code === 'breaker_open', String(error));
            return { session, answers, refused: true };
          }
          input = calls(answers.at(-1)!).map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: `result ${i}` }));
          if (input.length === 0) input = [{ role: 'user', content: 'Go on.' }];
        }
        return { session, answers, refused: false };
      };

      // Each round costs 60 tokens against a budget of 250: wherever the rounds are judged, one session adds them up.
      const kept = await conversation('Find me a flight to Oslo.', true);
      assert.match(text(kept.answers.at(-1)!), /stopped by the agent breaker \(budget\)/);
      assert.equal(kept.refused, true, 'the stopped session is refused on the next replica too');
      const snapshot = await breakers[1]!.snapshot(kept.session);
      assert.equal(snapshot.state, 'OPEN');
      assert.equal(snapshot.counters.modelCalls, upstream.requests.length, 'every round that went upstream counts in the one session');
      assert.equal(upstream.requests.length, 6);

      // Responses the API does not keep cannot be continued: the replicas note none of them.
      const aliases = await stores[0]!.sessionOfAlias(`response:${kept.answers[0]!.id}`);
      assert.equal(aliases, kept.session);
      const unstored = await conversation('Find me a flight to Bergen.', false);
      assert.equal(await stores[0]!.sessionOfAlias(`response:${unstored.answers[0]!.id}`), undefined);
    } finally {
      for (const replica of replicas) await replica.close();
      await upstream.close();
    }
  });
});

describe('two proxies sharing one Redis store: the tool calls of a response one replica judged, on the other', () => {
  const stores: RedisBreakerStore[] = [];
  after(async () => {
    for (const store of stores) await store.close();
  });

  /** Two replicas on one Redis (as `governor proxy --store` runs them) and a stand-in upstream. */
  async function twoReplicas(
    script: ScriptedTurn[],
  ): Promise<{ replicas: ModelProxyServer[]; breakers: AgentBreaker[]; stored(): Promise<string>; close(): Promise<void> }> {
    const url = await requireRedis();
    const keyPrefix = `governor:test:responses:${randomUUID()}:`;
    const breakers = [0, 1].map(() => {
      const store = new RedisBreakerStore({ url, keyPrefix });
      stores.push(store);
      return new AgentBreaker({ store, checkFreshnessMs: 0 });
    });
    const upstream = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
    const replicas = await Promise.all(breakers.map((breaker) => startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 })));
    return {
      replicas,
      breakers,
      /** Everything the replicas keep in Redis, as text. */
      async stored() {
        const raw = createClient({ url });
        await raw.connect();
        try {
          const values: unknown[] = [];
          for (const key of await raw.keys(`${keyPrefix}*`)) {
            const type = await raw.type(key);
            if (type === 'string') values.push(await raw.get(key));
            else if (type === 'hash') values.push(await raw.hGetAll(key));
            else if (type === 'list') values.push(await raw.lRange(key, 0, -1));
            else if (type === 'zset') values.push(await raw.zRange(key, 0, -1));
          }
          return JSON.stringify(values);
        } finally {
          raw.destroy();
        }
      },
      async close() {
        for (const replica of replicas) await replica.close();
        await upstream.close();
      },
    };
  }

  test('requests that continue the response (previous_response_id) take turns: the spiral is blocked, stopped and refused as on one replica', async () => {
    const rig = await twoReplicas(SPIRAL);
    try {
      const client = new OpenAI({
        baseURL: `${rig.replicas[0]!.url}/v1`,
        apiKey: 'sk-test-not-a-real-key',
        maxRetries: 0,
        defaultHeaders: { 'x-governor-session': `continued-${randomUUID()}` },
        // Each request goes to the other replica than the one that judged the response it continues.
        fetch: roundRobinFetch(rig.replicas),
      });
      const rounds: string[] = [];
      let previous: OpenAI.Responses.Response | undefined;
      let input: InputItem[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      for (let i = 0; i < 8 && rounds.at(-1) !== 'refused'; i += 1) {
        try {
          previous = await client.responses.create({
            model: 'm',
            instructions: 'You book travel.',
            input,
            tools: [SEARCH],
            ...(previous === undefined ? {} : { previous_response_id: previous.id }),
          });
        } catch (error) {
          assert.ok(error instanceof OpenAI.PermissionDeniedError && error.code === 'breaker_open', String(error));
          rounds.push('refused');
          continue;
        }
        // Only the outputs go with the next request: their calls are in the response it continues, which the other replica judged.
        input = calls(previous).map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: 'No flights found.' }));
        rounds.push(input.length > 0 ? 'call' : /stopped by the agent breaker \(tool_spiral\)/.test(text(previous)) ? 'stop' : 'blocked');
        if (input.length === 0) input = [{ role: 'user', content: 'Keep trying.' }];
      }
      // What one replica alone does (see the test of previous_response_id above): every output was observed, on whichever replica it came.
      assert.deepEqual(rounds, ['call', 'call', 'call', 'blocked', 'stop', 'refused']);
    } finally {
      await rig.close();
    }
  });

  test('Codex-style input, replicas taking turns: every output of a round of parallel calls is observed once', async () => {
    const round = (a: string, b: string): ScriptedTurn => ({
      toolCalls: [
        { name: 'shell', arguments: { cmd: a } },
        { name: 'shell', arguments: { cmd: b } },
      ],
    });
    const script = [round('ls src', 'ls test'), round('cat src/a.ts', 'cat test/a.ts'), round('npm test', 'git status'), { text: 'Done.' }];
    const rig = await twoReplicas(script);
    try {
      const session = `codex-${randomUUID()}`;
      const input: unknown[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Why does the test fail?' }] }];
      for (let i = 0; i < script.length; i += 1) {
        const response = await fetch(`${rig.replicas[i % 2]!.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-governor-session': session },
          body: JSON.stringify({ model: 'm', input, store: false }),
        });
        // Each call followed by its output, as Codex sends them: the request does not say where the round began.
        for (const item of ((await response.json()) as OpenAI.Responses.Response).output) {
          input.push(item);
          if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: `output of ${item.arguments}` });
        }
      }
      // Six calls, each observed once, though every round's outputs came to the replica that had not judged it.
      assert.equal((await rig.breakers[0]!.snapshot(session)).counters.toolCalls, 6);
      // What the replicas shared of the calls are prints: no argument and no output is kept in Redis.
      const stored = await rig.stored();
      assert.match(stored, /response-calls/);
      assert.doesNotMatch(stored, /src\/a\.ts|git status|output of/);
    } finally {
      await rig.close();
    }
  });
});

describe('governor proxy with the Responses API: the session budget', () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: a wrap-up goes into the next request, then the stop is a complete response`, async () => {
      // Different searches every round (no loop), but 400 tokens a round against a budget of 1,000.
      const upstream = await new ScriptedModelServer({
        script: (_request, index) => ({
          toolCalls: [{ name: 'search', arguments: { q: `city ${index}` } }],
          usage: { promptTokens: 300, completionTokens: 100 },
        }),
      }).start();
      await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker({ budget: { maxTokens: 1000 } }), port: 0 });
      try {
        const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
        const input: InputItem[] = [{ role: 'user', content: 'Compare flights from every city.' }];
        const rounds: string[] = [];
        for (let i = 0; i < 5; i += 1) {
          const { response } = await agentRound(client, input, stream);
          rounds.push(calls(response).length > 0 ? 'call' : text(response));
        }
        assert.deepEqual(rounds.slice(0, 2), ['call', 'call']);
        assert.match(rounds[2]!, /The call to search was not run/);
        // Round 4 went upstream with the wrap-up as a developer message; round 5 never did.
        assert.equal(upstream.requests.length, 4);
        const wrapUp = (upstream.requests[3]!.body['input'] as { role?: string; content?: string }[]).at(-1)!;
        assert.equal(wrapUp.role, 'developer');
        assert.match(wrapUp.content ?? '', /\[governor\] The session budget is spent/);
        assert.match(rounds[4]!, /stopped by the agent breaker \(budget\)/);
      } finally {
        await upstream.close();
      }
    });
  }
});

/**
 * An agent loop through a proxy in front of `upstream`, under the session
 * `sessionId`, until the breaker stops it (at most 8 rounds): each response,
 * and the proxy's breaker.
 */
async function untilStopped(
  upstream: ScriptedModelServer,
  sessionId: string,
  stream: boolean,
  extras: RoundExtras = {},
): Promise<{ responses: OpenAI.Responses.Response[]; breaker: AgentBreaker }> {
  const breaker = new AgentBreaker();
  await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
  const client = new OpenAI({
    baseURL: `${proxy.url}/v1`,
    apiKey: 'sk-test-not-a-real-key',
    maxRetries: 0,
    defaultHeaders: { 'x-governor-session': sessionId },
  });
  const input: InputItem[] = [{ role: 'user', content: 'Find me the cheapest flight to Oslo in March.' }];
  const responses: OpenAI.Responses.Response[] = [];
  for (let i = 0; i < 8; i += 1) {
    const { response } = await agentRound(client, input, stream, extras);
    responses.push(response);
    if (text(response).includes('stopped by the agent breaker')) break;
  }
  return { responses, breaker };
}

describe("governor proxy with the API's hosted tools (web search, code interpreter, remote MCP, shell)", () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: searches the API ran itself are judged; the same search over and over is steered, then stopped`, async () => {
      await using upstream = await searchLoopServer();
      const { responses, breaker } = await untilStopped(upstream, 'fares-1', stream);
      const answers = responses.map(text);
      // The search has run upstream: it reaches the client whatever the verdict.
      for (const response of responses) if (!text(response).includes('stopped')) assert.equal(response.output[0]?.type, 'web_search_call');
      const steeredAt = upstream.requests.findIndex((q) => /\[governor\].*search/s.test(JSON.stringify(q.body['input'])));
      assert.ok(steeredAt > 0, "a later request carried the breaker's note about the searches");
      assert.match(answers.at(-1)!, /stopped by the agent breaker \(rag_fixation\)/);
      assert.equal((await breaker.snapshot('fares-1')).counters.retrievals, answers.length);
    });
  }

  /** Calls the API runs itself, the same in every answer: the first output item of each answer, and what the breaker notes and stops. */
  const loops = [
    {
      what: 'a page the API opened again and again is noted, then stopped as a tool spiral',
      loop: PAGE_LOOP,
      tool: 'open_page',
      extras: {},
      item: (item: OpenAI.Responses.ResponseOutputItem | undefined, i: number) =>
        assert.deepEqual(item, {
          type: 'web_search_call',
          id: `ws_${i + 1}_1`,
          status: 'completed',
          action: { type: 'open_page', url: 'https://fares.example/oslo' },
        }),
    },
    {
      what: 'code the API ran that fails the same way again and again is noted, then stopped as an error loop',
      loop: CODE_LOOP,
      tool: 'code_interpreter',
      extras: { include: ['code_interpreter_call.outputs'] },
      item: (item: OpenAI.Responses.ResponseOutputItem | undefined) => {
        assert.ok(item?.type === 'code_interpreter_call', `expected the code run first, got ${item?.type}`);
        assert.match(item.code ?? '', /sales\['revenue'\]/);
        assert.match(JSON.stringify(item.outputs), /KeyError: 'revenue'/);
      },
    },
    {
      what: 'a remote MCP tool the API called again and again for the same output is noted, then stopped as a tool spiral',
      loop: MCP_LOOP,
      tool: 'get_issue',
      extras: {},
      item: (item: OpenAI.Responses.ResponseOutputItem | undefined) => {
        assert.ok(item?.type === 'mcp_call', `expected the MCP call first, got ${item?.type}`);
        assert.deepEqual(
          [item.server_label, item.name, item.arguments, item.output],
          ['tracker', 'get_issue', '{"id":"ENG-42"}', 'ENG-42: Login fails on Safari. Status: In Progress.'],
        );
      },
    },
    {
      what: 'a command the API ran in its container (a hosted shell) that fails the same way again and again is noted, then stopped as an error loop',
      loop: SHELL_LOOP,
      tool: 'shell',
      extras: {},
      item: (item: OpenAI.Responses.ResponseOutputItem | undefined) => {
        // It ran upstream: neither refused as a repeat nor left waiting for an output from the client.
        assert.ok(item?.type === 'shell_call', `expected the shell call first, got ${item?.type}`);
        assert.deepEqual(item.action.commands, ['npm test']);
      },
    },
  ] satisfies readonly {
    what: string;
    loop: HostedLoop;
    tool: string;
    extras: RoundExtras;
    item: (item: OpenAI.Responses.ResponseOutputItem | undefined, i: number) => void;
  }[];
  for (const { what, loop, tool, extras, item } of loops) {
    for (const stream of [false, true]) {
      test(`${stream ? 'streamed' : 'not streamed'}: ${what}`, async () => {
        await using upstream = await loop.start();
        const sessionId = `${tool}-${stream}`;
        const { responses, breaker } = await untilStopped(upstream, sessionId, stream, extras);
        const answers = responses.map(text);
        // The call has run upstream: it reaches the client whatever the verdict.
        for (const [i, response] of responses.slice(0, -1).entries()) item(response.output[0], i);
        assert.equal(answers.length, 5);
        assert.match(answers.at(-1)!, new RegExp(`stopped by the agent breaker \\(${loop.category}\\)`));
        assert.equal((await breaker.snapshot(sessionId)).counters.toolCalls, 5);
        const notes = upstream.requests.map((q) => [...JSON.stringify(q.body['input']).matchAll(loopNote(loop, 'governor', tool))].map((m) => m[1]));
        assert.deepEqual(notes.slice(0, 5), [[], [], [], [loop.counts[0]], [loop.counts[1]]]);
      });
    }
  }

  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: a productive hosted shell session (new commands, each exiting 0) passes untouched, each run recorded with its output`, async () => {
      const commands = ['git status', 'npm test -- cart', 'sed -n 1,40p src/cart.ts', 'npm test', 'npm run lint'];
      await using upstream = await new ScriptedModelServer({
        script: (_request, index) => ({
          shellRuns: [{ commands: [commands[index % commands.length]!], results: [{ stdout: `output ${index + 1}` }] }],
          text: 'Next step.',
        }),
      }).start();
      const { responses, breaker } = await untilStopped(upstream, `shell-progress-${stream}`, stream);
      assert.equal(responses.length, 8, 'never stopped');
      for (const response of responses) {
        assert.deepEqual(
          response.output.map((item) => item.type),
          ['shell_call', 'shell_call_output', 'message'],
        );
        assert.equal(text(response), 'Next step.');
      }
      for (const request of upstream.requests) assert.doesNotMatch(JSON.stringify(request.body['input']), /\[governor\]/);
      // Each run is one tool call, recorded once: not again when the next request brings it back.
      assert.equal((await breaker.snapshot(`shell-progress-${stream}`)).counters.toolCalls, 8);
    });
  }

  test("a stopping answer keeps the calls the API ran before it (search, code, MCP, hosted shell), in their order, streamed or not; the client's calls are taken out", async () => {
    // Every answer runs the API's hosted tools, the same search each time (the 3rd in a row stops the run), and asks for a new search of the client's.
    const script = (_request: unknown, index: number): ScriptedTurn => ({
      webSearches: [{ query: 'flights to Oslo in March', sources: ['https://fares.example/oslo'] }],
      codeRuns: [{ code: 'print(3 * 49)', output: '147' }],
      mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: { id: 'ENG-42' }, output: 'ENG-42: open.' }],
      shellRuns: [{ commands: ['npm test'], results: [{ stderr: CART_FAILURE, exitCode: 1 }] }],
      text: SHELL_LOOP.answer,
      toolCalls: [{ name: 'search', arguments: { q: `flights on March ${index + 1}` } }],
    });
    const stops = new Map<boolean, OpenAI.Responses.Response>();
    for (const stream of [false, true]) {
      await using upstream = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
      const { responses } = await untilStopped(upstream, `hosted-stop-${stream}`, stream, { include: ['code_interpreter_call.outputs'] });
      const stop = responses.at(-1)!;
      assert.match(text(stop), /stopped by the agent breaker \(rag_fixation\)/);
      // Stopped on the upstream's answer, whose hosted calls had run; each answer asked for a call of the client's.
      assert.equal(upstream.requests.length, responses.length);
      assert.equal(responses[0]!.output.at(-1)?.type, 'function_call');
      stops.set(stream, stop);
    }
    const kinds = (response: OpenAI.Responses.Response): string[] => response.output.map((item) => item.type);
    const ran = (response: OpenAI.Responses.Response): OpenAI.Responses.ResponseOutputItem[] => response.output.filter((item) => item.type !== 'message');
    const [whole, streamed] = [stops.get(false)!, stops.get(true)!];
    // The model's text came after the shell's call, held until its output showed it ran upstream: streamed or not, the stop message stands in for it.
    assert.deepEqual(kinds(streamed), ['web_search_call', 'code_interpreter_call', 'mcp_call', 'shell_call', 'shell_call_output', 'message']);
    assert.deepEqual(kinds(whole), kinds(streamed));
    assert.deepEqual(ran(whole), ran(streamed));
    const shell = ran(whole).find((item) => item.type === 'shell_call_output');
    assert.match(JSON.stringify(shell), /expected 3, got 2/);
    assert.equal(text(whole), text(streamed));
    assert.ok(!text(streamed).includes(SHELL_LOOP.answer));
  });

  test("a hosted shell's call brought back without its environment (@ai-sdk/openai, store: false) is not counted again; a local shell's still is", async () => {
    // The model asks for a lookup of the client's, then the API runs the tests in its container; then it answers.
    const answers: unknown[][] = [
      [
        { type: 'function_call', id: 'fc_1', call_id: 'call_f', name: 'lookup', arguments: '{"q":"cart"}', status: 'completed' },
        {
          type: 'shell_call',
          id: 'sh_1',
          call_id: 'call_s',
          status: 'completed',
          action: { commands: ['npm test'], timeout_ms: null, max_output_length: null },
          environment: { type: 'container_reference', container_id: 'cntr_1' },
        },
        {
          type: 'shell_call_output',
          id: 'sho_1',
          call_id: 'call_s',
          status: 'completed',
          max_output_length: null,
          output: [{ stdout: '', stderr: CART_FAILURE, outcome: { type: 'exit', exit_code: 1 } }],
        },
      ],
      [
        {
          type: 'message',
          id: 'msg_2',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'The cart test fails.', annotations: [] }],
        },
      ],
    ];
    const sent: Record<string, unknown>[] = [];
    const upstreamFetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      sent.push(JSON.parse(await new Response(init?.body).text()) as Record<string, unknown>);
      const output = answers[Math.min(sent.length, answers.length) - 1];
      return Response.json({
        id: `resp_${sent.length}`,
        object: 'response',
        created_at: 0,
        status: 'completed',
        model: 'm',
        store: false,
        output,
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      });
    };
    const breaker = new AgentBreaker();
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamFetch as typeof fetch });
    const openai = createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', headers: { 'x-governor-session': 'shell-stripped' } });
    let lookups = 0;
    const { text: answer } = await generateText({
      model: openai.responses('m'),
      prompt: 'Why does the cart test fail?',
      providerOptions: { openai: { store: false } },
      tools: {
        shell: openai.tools.shell({ environment: { type: 'containerAuto' } }),
        lookup: tool({
          inputSchema: z.object({ q: z.string() }),
          execute: async () => {
            lookups += 1;
            return 'src/cart.ts';
          },
        }),
      },
      stopWhen: isStepCount(3),
    });
    assert.equal(answer, 'The cart test fails.');
    assert.equal(lookups, 1);
    // The client brought the call back without the container it ran in, after the client's own call.
    const input = sent[1]!['input'] as Record<string, unknown>[];
    assert.deepEqual(
      input.map((item) => item['type'] ?? item['role']),
      ['user', 'function_call', 'shell_call', 'shell_call_output', 'function_call_output'],
    );
    assert.equal(input[2]!['environment'], undefined);
    // The run was recorded with the response that brought it, the lookup with the request: two calls, not three.
    assert.equal((await breaker.snapshot('shell-stripped')).counters.toolCalls, 2);

    // A shell call without an environment in a request whose shell tool is the client's own is the client's.
    const local = (tools: unknown[]) =>
      responsesWire
        .requestTail({
          tools,
          input: [
            { role: 'user', content: 'Fix it.' },
            { type: 'shell_call', call_id: 'call_l', status: 'completed', action: { commands: ['ls'] } },
            { type: 'shell_call_output', call_id: 'call_l', output: [{ stdout: 'a.ts', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
          ],
        })
        .toolResults.map((result) => [result.name, result.result]);
    assert.deepEqual(local([{ type: 'shell' }]), [['shell', 'a.ts']]);
    assert.deepEqual(local([{ type: 'shell', environment: { type: 'local' } }]), [['shell', 'a.ts']]);
    assert.deepEqual(local([{ type: 'shell', environment: { type: 'container_auto' } }]), []);
  });

  test("a shell_call answered in its own response ran in the API's container: judged as run, not left to the client; a local one still is", () => {
    const hosted = {
      type: 'shell_call',
      id: 'sh_1',
      call_id: 'call_h',
      status: 'completed',
      action: { commands: ['npm test', 'npm run e2e'], timeout_ms: null, max_output_length: null },
      environment: { type: 'container_reference', container_id: 'cntr_1' },
    };
    const output = {
      type: 'shell_call_output',
      id: 'sho_1',
      call_id: 'call_h',
      status: 'completed',
      max_output_length: null,
      output: [
        { stdout: '', stderr: CART_FAILURE, outcome: { type: 'exit', exit_code: 1 } },
        { stdout: 'running e2e', stderr: '', outcome: { type: 'timeout' } },
      ],
    };
    const local = { type: 'shell_call', id: 'sh_2', call_id: 'call_l', status: 'completed', action: { commands: ['ls'] }, environment: { type: 'local' } };
    const round = responsesWire.roundOf({ id: 'resp_1', output: [hosted, output, local] });
    assert.deepEqual(round.toolCalls, [{ id: 'call_l', name: 'shell', args: { commands: ['ls'] } }]);
    assert.deepEqual(round.hosted, [
      {
        kind: 'tool_call',
        tool: 'shell',
        args: { commands: ['npm test', 'npm run e2e'] },
        result: `exit code 1\n${CART_FAILURE}\ntimed out\nrunning e2e`,
        error: true,
      },
    ]);
    // A request bringing the pair back, with no response to tell where the round began: the hosted output is not a new tool result.
    const tail = responsesWire.requestTail({ input: [{ role: 'user', content: 'Fix it.' }, hosted, output] });
    assert.deepEqual(tail.toolResults, []);
    assert.equal(tail.unmatched, undefined);
    // A local shell's output brought beside its call is.
    const localTail = responsesWire.requestTail({
      input: [
        { role: 'user', content: 'Fix it.' },
        local,
        { type: 'shell_call_output', call_id: 'call_l', output: [{ stdout: 'a.ts', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
      ],
    });
    assert.deepEqual(
      localTail.toolResults.map((r) => [r.name, r.result, r.error]),
      [['shell', 'a.ts', false]],
    );
  });

  test('a completed search is a retrieval with its sources, a file search with its results, a page opened or searched a read-only tool call; a failed one is left out', () => {
    const round = responsesWire.roundOf({
      id: 'resp_1',
      output: [
        {
          type: 'web_search_call',
          id: 'ws_1',
          status: 'completed',
          action: { type: 'search', query: 'oslo fares', sources: [{ type: 'url', url: 'https://a.example' }] },
        },
        { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', queries: ['oslo hotels', 'bergen hotels'] } },
        { type: 'web_search_call', id: 'ws_3', status: 'failed', action: { type: 'search', query: 'oslo fares' } },
        { type: 'web_search_call', id: 'ws_4', status: 'completed', action: { type: 'open_page', url: 'https://a.example' } },
        { type: 'web_search_call', id: 'ws_5', status: 'completed', action: { type: 'find_in_page', url: 'https://a.example', pattern: 'fare' } },
        { type: 'web_search_call', id: 'ws_6', status: 'failed', action: { type: 'open_page', url: 'https://b.example' } },
        {
          type: 'file_search_call',
          id: 'fs_1',
          status: 'completed',
          queries: ['refund policy'],
          results: [{ file_id: 'f1', text: 'Refunds within 30 days.' }],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
      ],
    });
    assert.deepEqual(round.hosted, [
      { kind: 'retrieval', query: 'oslo fares', results: ['https://a.example'] },
      { kind: 'retrieval', query: 'oslo hotels\nbergen hotels' },
      { kind: 'tool_call', tool: 'open_page', args: { url: 'https://a.example' }, result: null },
      { kind: 'tool_call', tool: 'find_in_page', args: { url: 'https://a.example', pattern: 'fare' }, result: null },
      { kind: 'retrieval', query: 'refund policy', results: ['Refunds within 30 days.'] },
    ]);
    assert.deepEqual(responsesWire.roundOf({ output: [{ type: 'message', content: [] }] }).hosted, []);
  });
});

describe("governor proxy with the API's client-run built-in tools (shell, apply_patch)", () => {
  test('a repeated shell_call is blocked like a function call; a failed patch or command is recorded as a failure', async () => {
    // An upstream that asks for the same shell command every time.
    const upstreamFetch = async (): Promise<Response> =>
      Response.json({
        id: `resp_${Math.random().toString(36).slice(2)}`,
        object: 'response',
        created_at: 0,
        status: 'completed',
        model: 'm',
        output: [
          { type: 'shell_call', id: 'sh_1', call_id: `call_${Math.random().toString(36).slice(2)}`, action: { commands: ['npm test'] }, status: 'completed' },
        ],
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      });
    const breaker = new AgentBreaker();
    const app = createModelProxy({ upstream: 'http://upstream.test/v1', breaker, fetch: upstreamFetch as typeof fetch });
    const input: unknown[] = [{ role: 'user', content: 'Make the tests pass.' }];
    const outputs: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await app.request('/v1/responses', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-governor-session': 'shell-1' },
        body: JSON.stringify({ model: 'm', input }),
      });
      const body = (await response.json()) as { output: { type: string; call_id?: string; content?: { text: string }[] }[] };
      outputs.push(body.output.map((item) => item.type).join('+'));
      for (const item of body.output) {
        input.push(item);
        if (item.type === 'shell_call')
          input.push({
            type: 'shell_call_output',
            call_id: item.call_id,
            output: [{ stdout: '1 failing', stderr: '', outcome: { type: 'exit', exit_code: 1 } }],
          });
        if (item.type === 'message') assert.match(item.content![0]!.text, /The call to shell was not run/);
      }
    }
    assert.deepEqual(outputs, ['shell_call', 'shell_call', 'shell_call', 'message']);
    assert.equal((await breaker.snapshot('shell-1')).counters.toolCalls, 3);

    const tail = responsesWire.requestTail({
      input: [
        { role: 'user', content: 'Fix it.' },
        { type: 'apply_patch_call', call_id: 'p1', operation: { type: 'update_file', path: 'a.ts', diff: '-x\n+y' }, status: 'completed' },
        { type: 'apply_patch_call_output', call_id: 'p1', status: 'failed', output: 'context not found' },
        { type: 'local_shell_call', id: 'ls_1', call_id: 'c1', action: { type: 'exec', command: ['ls'] }, status: 'completed' },
        { type: 'local_shell_call_output', id: 'c1', output: '{"output":"a.ts"}' },
      ],
    });
    assert.deepEqual(
      tail.toolResults.map((t) => [t.name, t.error]),
      [['local_shell', false]],
      'without the previous response, only the outputs after the last call',
    );
    const told = responsesWire.requestTail(
      {
        input: [
          { type: 'apply_patch_call_output', call_id: 'p1', status: 'failed', output: 'context not found' },
          { type: 'shell_call_output', call_id: 's1', output: [{ stdout: '1 failing', stderr: 'at cart.test.ts:3', outcome: { type: 'exit', exit_code: 1 } }] },
          { type: 'shell_call_output', call_id: 's2', output: [{ stdout: 'ok', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
          { type: 'shell_call_output', call_id: 's3', output: [{ stdout: '', stderr: '', outcome: { type: 'timeout' } }] },
        ],
      },
      new Map([
        ['p1', { id: 'p1', name: 'apply_patch', args: { type: 'update_file', path: 'a.ts' } }],
        ['s1', { id: 's1', name: 'shell', args: { commands: ['npm test'] } }],
        ['s2', { id: 's2', name: 'shell', args: { commands: ['npm run lint'] } }],
        ['s3', { id: 's3', name: 'shell', args: { commands: ['npm run e2e'] } }],
      ]),
    );
    assert.deepEqual(
      told.toolResults.map((t) => [t.name, t.error, t.result]),
      [
        ['apply_patch', true, 'context not found'],
        // A shell's output is what it printed; a command that did not exit 0 failed.
        ['shell', true, 'exit code 1\n1 failing\nat cart.test.ts:3'],
        ['shell', false, 'ok'],
        ['shell', true, 'timed out'],
      ],
    );
  });
});

describe('governor proxy with the Responses API: a streamed answer with reasoning, a search and text after the calls taken out', () => {
  type Item = Record<string, unknown>;
  const functionCall = (id: string, name: string, args: unknown): Item => ({
    type: 'function_call',
    id: `fc_${id}`,
    call_id: id,
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  });
  const message = (id: string, text: string): Item => ({
    type: 'message',
    id,
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  });
  const reasoning = (id: string): Item => ({ type: 'reasoning', id, summary: [] });
  const webSearch = (id: string): Item => ({ type: 'web_search_call', id, status: 'completed', action: { type: 'search', query: 'Oslo weather' } });
  const repeat = (id: string) => functionCall(id, 'search', { q: 'flights to Oslo' });
  /**
   * The second answer asks for the first one's search again, after some text
   * (sent on at once), between its reasoning, a new call, a search the API ran,
   * and more text (held with the calls).
   */
  const second = [
    message('msg_1', 'Let me look again.'),
    reasoning('rs_1'),
    repeat('call_2'),
    reasoning('rs_2'),
    functionCall('call_3', 'weather', { city: 'Bergen' }),
    webSearch('ws_1'),
    message('msg_2', 'Bergen it is.'),
  ];

  /**
   * An upstream that gives the first answer, then the second to a request
   * bringing a call's output: streamed event by event when asked, the second
   * cut short before its `response.completed` (the stream closed cleanly)
   * unless `ended`.
   */
  const upstreamOf =
    (ended: boolean) =>
    async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = JSON.parse(await new Response(init?.body).text()) as { stream?: boolean; input: Item[] };
      const turn = request.input.filter((item) => item['type'] === 'function_call_output').length;
      const output = turn === 0 ? [repeat('call_1')] : second;
      const response = {
        id: `resp_${turn}`,
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        error: null,
        incomplete_details: null,
        model: 'gpt-test',
        output,
        usage: { input_tokens: 50, output_tokens: 20, total_tokens: 70 },
      };
      if (request.stream !== true) return Response.json(response);
      const events: Item[] = [];
      const push = (type: string, fields: Item) => events.push({ type, sequence_number: events.length, ...fields });
      push('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
      output.forEach((item, output_index) => {
        if (item['type'] === 'message') {
          const text = String((item['content'] as Item[])[0]!['text']);
          const at = { item_id: item['id'], output_index, content_index: 0 };
          push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
          push('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
          push('response.output_text.delta', { ...at, delta: text, logprobs: [] });
          push('response.output_text.done', { ...at, text, logprobs: [] });
          push('response.content_part.done', { ...at, part: { type: 'output_text', text, annotations: [] } });
        } else if (item['type'] === 'function_call') {
          push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
          push('response.function_call_arguments.delta', { item_id: item['id'], output_index, delta: item['arguments'] });
          push('response.function_call_arguments.done', { item_id: item['id'], output_index, arguments: item['arguments'] });
        } else {
          push('response.output_item.added', { output_index, item });
        }
        push('response.output_item.done', { output_index, item });
      });
      if (ended || turn === 0) push('response.completed', { response });
      return new Response(events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`).join(''), {
        headers: { 'content-type': 'text/event-stream' },
      });
    };
  const upstreamFetch = upstreamOf(true);

  /** The second answer, read by the official SDK: through its stream helper (checked event by event), or not streamed. */
  async function secondAnswer(proxy: ModelProxyServer, session: string, stream: boolean): Promise<OpenAI.Responses.Response> {
    const client = new OpenAI({
      baseURL: `${proxy.url}/v1`,
      apiKey: 'sk-test-not-a-real-key',
      maxRetries: 0,
      defaultHeaders: { 'x-governor-session': session },
    });
    const input: InputItem[] = [{ role: 'user', content: 'Find me a flight to Oslo, and the weather there.' }];
    const first = await client.responses.create({ model: 'gpt-test', input });
    for (const item of first.output) {
      input.push(item as InputItem);
      if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: 'No flights found.' });
    }
    if (!stream) return client.responses.create({ model: 'gpt-test', input });
    const run = client.responses.stream({ model: 'gpt-test', input });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of run) events.push(event);
    const response = await run.finalResponse();
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const added = events.filter((e) => e.type === 'response.output_item.added');
    assert.deepEqual(
      added.map((e) => e.output_index),
      added.map((_, i) => i),
    );
    // What the events streamed, item for item, is what the final response says.
    assert.deepEqual(comparable(events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item)), comparable(response.output));
    return response;
  }

  /** Output items as compared: a note's id is the proxy's own, and the stream helper adds what it parsed. */
  const comparable = (output: OpenAI.Responses.ResponseOutputItem[]): unknown =>
    JSON.parse(
      JSON.stringify(output, (key, value: unknown) => {
        if (key === 'parsed' || key === 'parsed_arguments') return undefined;
        return key === 'id' && typeof value === 'string' && value.startsWith('msg_governor_') ? 'msg_governor' : value;
      }),
    );
  const describeItem = (item: OpenAI.Responses.ResponseOutputItem) =>
    item.type === 'function_call' ? `function_call ${item.call_id}` : `${item.type} ${item.id}`;

  for (const verdict of ['block', 'stop'] as const) {
    test(`${verdict}: the items that stay are numbered on in order, the note last; the final response is the answer not streamed, but for the text sent before the calls`, async () => {
      const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: [verdict] } });
      await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamFetch as typeof fetch });
      const streamed = await secondAnswer(proxy, `${verdict}-streamed`, true);
      const stays = verdict === 'block' ? ['function_call call_3', 'web_search_call ws_1', 'message msg_2'] : ['web_search_call ws_1'];
      assert.deepEqual(streamed.output.slice(0, -1).map(describeItem), ['message msg_1', 'reasoning rs_1', 'reasoning rs_2', ...stays]);
      assert.match(
        text({ ...streamed, output: streamed.output.slice(-1) }),
        verdict === 'block' ? /^\[governor\] The call to search was not run/ : /^\[governor\] This run was stopped/,
      );
      // A stop not streamed drops the model's text, which the stop message stands in for; streamed, what had gone out stays.
      const whole = (await secondAnswer(proxy, `${verdict}-whole`, false)).output;
      assert.deepEqual(comparable(whole), comparable(verdict === 'block' ? streamed.output : streamed.output.slice(1)));
    });
  }

  test('block, the answer cut short before response.completed: the note is added, and no completion the upstream did not send', async () => {
    const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['block'] } });
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamOf(false) as typeof fetch });
    const streamed = await secondAnswer(proxy, 'block-cut', true);
    // The stream helper's response is what was streamed, still in progress as the upstream left it.
    assert.equal(streamed.status, 'in_progress');
    assert.deepEqual(streamed.output.slice(0, -1).map(describeItem), [
      'message msg_1',
      'reasoning rs_1',
      'reasoning rs_2',
      'function_call call_3',
      'web_search_call ws_1',
      'message msg_2',
    ]);
    assert.match(text({ ...streamed, output: streamed.output.slice(-1) }), /^\[governor\] The call to search was not run/);
  });

  test("stop, the answer cut short before response.completed: the stop is a completed response of the proxy's own, listing what ran and was streamed", async () => {
    const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['stop'] } });
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamOf(false) as typeof fetch });
    const streamed = await secondAnswer(proxy, 'stop-cut', true);
    assert.equal(streamed.status, 'completed');
    assert.deepEqual(streamed.output.slice(0, -1).map(describeItem), ['message msg_1', 'reasoning rs_1', 'reasoning rs_2', 'web_search_call ws_1']);
    assert.match(text({ ...streamed, output: streamed.output.slice(-1) }), /^\[governor\] This run was stopped/);
  });

  test('@ai-sdk/openai streamText, blocked, the answer cut short before response.completed: the step is interrupted, as without the proxy, and says why search was not run', async () => {
    const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['block'] } });
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamOf(false) as typeof fetch });
    const openai = createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', headers: { 'x-governor-session': 'ai-sdk-cut' } });
    const { ran, result } = flightSearch(openai);
    const steps = await result.steps;
    assert.deepEqual(
      ran.filter((what) => what.startsWith('search')),
      ['search flights to Oslo'],
    );
    assert.equal(steps.length, 2);
    assert.equal(steps[1]!.finishReason, 'interrupted');
    assert.match(steps[1]!.text, /\[governor\] The call to search was not run/);
  });

  test('@ai-sdk/openai streamText, stopped: the text held after the calls goes, the stop message ends the answer; weather is not run', async () => {
    const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['stop'] } });
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamFetch as typeof fetch });
    const openai = createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', headers: { 'x-governor-session': 'ai-sdk' } });
    const { ran, result } = flightSearch(openai);
    const steps = await result.steps;
    assert.deepEqual(ran, ['search flights to Oslo']);
    assert.equal(steps.length, 2);
    assert.match(steps[1]!.text, /^Let me look again\.\[governor\] This run was stopped by the agent breaker \(tool_spiral\)/);
    assert.doesNotMatch(steps[1]!.text, /Bergen it is/);
  });
});

describe('responsesWire: what a request brings', () => {
  test('the outputs after the last message are new, with reasoning between; custom tools keep their raw input', () => {
    const tail = responsesWire.requestTail({
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the build.' }] },
        { type: 'function_call', call_id: 'a', name: 'shell', arguments: '{"cmd":"npm test"}' },
        { type: 'function_call_output', call_id: 'a', output: 'old result' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Patching.' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'custom_tool_call', call_id: 'b', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'function_call', call_id: 'c', name: 'shell', arguments: '{"cmd":"npm test"}' },
        { type: 'custom_tool_call_output', call_id: 'b', output: 'Done!' },
        { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: '1 failing' }] },
      ],
    });
    assert.equal(tail.userText, null);
    assert.deepEqual(
      tail.toolResults.map((t) => [t.id, t.name, t.args, t.result]),
      [
        ['b', 'apply_patch', '*** Begin Patch', 'Done!'],
        ['c', 'shell', { cmd: 'npm test' }, '1 failing'],
      ],
    );
    assert.equal(tail.lastIndex, 8);
    // Told the calls of the previous response, it takes their outputs wherever they stand.
    const told = responsesWire.requestTail(
      {
        input: [
          { role: 'user', content: 'Go.' },
          { type: 'function_call', call_id: 'a', name: 'shell', arguments: '{}' },
          { type: 'function_call_output', call_id: 'a', output: 'A' },
          { type: 'function_call', call_id: 'b', name: 'shell', arguments: '{}' },
          { type: 'function_call_output', call_id: 'b', output: 'B' },
        ],
      },
      new Map([
        ['a', { id: 'a', name: 'shell', args: {} }],
        ['b', { id: 'b', name: 'shell', args: {} }],
      ]),
    );
    assert.deepEqual(
      told.toolResults.map((t) => t.result),
      ['A', 'B'],
    );
  });

  test('a string input and a trailing user message are user turns; sessions fall back on instructions and the first user message', () => {
    assert.equal(responsesWire.requestTail({ input: 'Hello' }).userText, 'Hello');
    const body = { instructions: 'Be brief.', input: [{ role: 'user', content: 'Hi' }] };
    assert.equal(responsesWire.requestTail(body).userText, 'Hi');
    assert.equal(responsesWire.promptSeed(body), responsesWire.promptSeed({ instructions: 'Be brief.', input: 'Hi' }));
    assert.equal(responsesWire.userHint({ input: 'x', safety_identifier: 'u-1' }), 'u-1');
    assert.equal(responsesWire.isRequest({ input: 'x' }), true);
    assert.equal(responsesWire.isRequest({ messages: [] }), false);
  });

  test('a request continuing a response: its session if known, else the user, else a session of its own', () => {
    const none = new Headers();
    const body = { instructions: 'Be brief.', previous_response_id: 'resp_1', input: [{ type: 'function_call_output', call_id: 'a', output: 'x' }] };
    assert.equal(
      proxySessionId(none, body, responsesWire, (id) => (id === 'resp_1' ? 'run-9' : undefined)),
      'run-9',
    );
    assert.equal(
      proxySessionId(none, body, responsesWire, () => undefined),
      'response:resp_1',
    );
    assert.equal(
      proxySessionId(none, { ...body, user: 'u1' }, responsesWire, () => undefined),
      'user:u1',
    );
    assert.equal(
      proxySessionId(new Headers({ 'x-governor-session': 'h' }), body, responsesWire, () => 'run-9'),
      'h',
    );
    // A stored conversation names itself, whichever replica gets the request.
    assert.equal(
      proxySessionId(none, { ...body, conversation: 'conv_7' }, responsesWire, () => 'run-9'),
      'conversation:conv_7',
    );
    assert.equal(proxySessionId(none, { ...body, conversation: { id: 'conv_7' } }, responsesWire), 'conversation:conv_7');
    // The conversation id a client sends in its session_id header (Codex does) names the session; the governor header still wins.
    assert.equal(
      proxySessionId(new Headers({ session_id: ' 0199-ab ' }), { ...body, conversation: 'conv_7' }, responsesWire, () => 'run-9'),
      'session:0199-ab',
    );
    assert.equal(proxySessionId(new Headers({ session_id: '0199-ab', 'x-governor-session': 'h' }), body, responsesWire), 'h');
    assert.equal(proxySessionId(new Headers({ 'session-id': '01a2-cd' }), body, responsesWire), 'session:01a2-cd');
    // opencode names its run in x-session-id: two runs with the same prompt are sessions of their own.
    assert.equal(proxySessionId(new Headers({ 'x-session-id': 'ses_1' }), body, responsesWire), 'session:ses_1');
    assert.notEqual(
      proxySessionId(new Headers({ 'x-session-id': 'ses_2' }), body, responsesWire),
      proxySessionId(new Headers({ 'x-session-id': 'ses_1' }), body, responsesWire),
    );
  });
});

/** The AI SDK asking for a flight and the weather through `openai`, its tools running here: what ran, and the run. */
function flightSearch(openai: ReturnType<typeof createOpenAI>) {
  const { ran, tools } = flightTools();
  const result = streamText({
    model: openai.responses('gpt-test'),
    prompt: 'Find me a flight to Oslo, and the weather there.',
    tools: { ...tools, web_search: openai.tools.webSearch() },
    stopWhen: isStepCount(3),
  });
  return { ran, result };
}
