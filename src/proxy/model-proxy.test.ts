import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, type ModelMessage, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerStore } from '../breaker/breaker-store.ts';
import { InMemoryBreakerStore } from '../breaker/in-memory-breaker-store.ts';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { roundRobinFetch } from '../test-support/round-robin-fetch.ts';
import { requireRedis } from '../test-support/services.ts';
import { CODE_LOOP, loopNote, MCP_LOOP, PAGE_LOOP, SEARCH_LOOP_ANSWER, searchLoopServer } from '../test-support/hosted-loops.ts';
import { ScriptedModelServer, type ScriptedTurn } from '../testing/index.ts';
import { anthropicWire } from './anthropic-wire.ts';
import { createModelProxy, startModelProxy, UpstreamUnreachableError, type ModelProxyServer } from './index.ts';
import { openaiWire } from './openai-wire.ts';
import { proxySessionId } from './proxy-session.ts';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const SEARCH: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'search', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
};
/** The model asks for the same search forever: a tool-call spiral. */
const SPIRAL: ScriptedTurn[] = [{ toolCalls: [{ name: 'search', arguments: { q: 'flights to Oslo' } }] }];

interface Rig {
  upstream: ScriptedModelServer;
  proxy: ModelProxyServer;
  close(): Promise<void>;
}

async function rig(script: ScriptedTurn[], breaker = new AgentBreaker()): Promise<Rig> {
  const upstream = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
  const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
  return {
    upstream,
    proxy,
    async close() {
      await proxy.close();
      await upstream.close();
    },
  };
}

function openaiClient(proxy: ModelProxyServer, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0, defaultHeaders: headers });
}

/** One round of a hand-written agent loop: ask, then answer each tool call with the same result. */
async function agentRound(
  client: OpenAI,
  messages: Message[],
  stream: boolean,
  model = 'm',
  seen?: OpenAI.Chat.Completions.ChatCompletionChunk[],
): Promise<{ message: OpenAI.Chat.Completions.ChatCompletionMessage; finish: string | null; stopHeader: string | null }> {
  if (stream) {
    const { data, response } = await client.chat.completions.create({ model, messages, tools: [SEARCH], stream: true }).withResponse();
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of data) chunks.push(chunk);
    seen?.push(...chunks);
    const { message, finish } = assemble(chunks);
    answerTools(messages, message);
    return { message, finish, stopHeader: response.headers.get('x-governor-stop') };
  }
  const { data, response } = await client.chat.completions.create({ model, messages, tools: [SEARCH] }).withResponse();
  const message = data.choices[0]!.message;
  answerTools(messages, message);
  return { message, finish: data.choices[0]!.finish_reason, stopHeader: response.headers.get('x-governor-stop') };
}

function answerTools(messages: Message[], message: OpenAI.Chat.Completions.ChatCompletionMessage): void {
  messages.push(message as Message);
  for (const call of message.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: 'No flights found.' });
  if (message.tool_calls === undefined || message.tool_calls.length === 0) messages.push({ role: 'user', content: 'Keep trying.' });
}

function lastUpstreamText(upstream: ScriptedModelServer): string {
  return JSON.stringify(upstream.requests.at(-1)!.body.messages.at(-1));
}

/** What an answer to an agent round was: its call passed, was blocked, the run stopped, or the request was refused (403). */
async function verdictOf(round: ReturnType<typeof agentRound>): Promise<string> {
  try {
    const { message } = await round;
    if ((message.tool_calls?.length ?? 0) > 0) return 'call';
    if (/stopped by the agent breaker/.test(message.content ?? '')) return 'stop';
    return /was not run/.test(message.content ?? '') ? 'block' : 'text';
  } catch (error) {
    if (error instanceof OpenAI.PermissionDeniedError) return 'refused';
    throw error;
  }
}

/**
 * Agent rounds in which every request is sent twice, as a retrying load
 * balancer would (the second time through `retry`); the retry's answer is the
 * one the agent goes on with. Each round's verdicts, original and retry,
 * until the run stops.
 */
async function retriedRounds(original: OpenAI, retry: OpenAI, messages: Message[], stream: boolean): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 8 && !seen.at(-1)?.startsWith('stop'); i += 1) {
    // The original's answer never reaches the agent: its conversation goes on from the retry's.
    const first = await verdictOf(agentRound(original, [...messages], stream));
    seen.push(`${first}/${await verdictOf(agentRound(retry, messages, stream))}`);
  }
  return seen;
}

for (const stream of [false, true]) {
  describe(`governor proxy with the openai client (${stream ? 'streamed' : 'not streamed'})`, () => {
    test('a spiral is steered (on the next upstream request), blocked, stopped, then refused', async () => {
      const r = await rig(SPIRAL);
      try {
        const client = openaiClient(r.proxy);
        const messages: Message[] = [
          { role: 'system', content: 'You book travel.' },
          { role: 'user', content: 'Find me a flight to Oslo.' },
        ];
        // Three identical searches: the third is steered but still reaches the agent.
        for (let i = 0; i < 3; i += 1) {
          const round = await agentRound(client, messages, stream);
          assert.equal(round.message.tool_calls?.length, 1, `round ${i + 1} passes its tool call`);
          assert.equal(round.finish, 'tool_calls');
        }
        assert.doesNotMatch(lastUpstreamText(r.upstream), /\[governor\]/);
        // The fourth request goes upstream with the breaker's message added to the tool result.
        const blocked = await agentRound(client, messages, stream);
        assert.match(lastUpstreamText(r.upstream), /No flights found\.\\n\\n\[governor\] .*search/);
        // ... and its repeated call is replaced by text: the agent has nothing to run.
        assert.equal(blocked.message.tool_calls?.length ?? 0, 0);
        assert.equal(blocked.finish, 'stop');
        assert.match(blocked.message.content ?? '', /The call to search was not run/);
        assert.equal(blocked.stopHeader, null);
        // The agent insists: the run is stopped with a final answer and the stop header.
        const stopped = await agentRound(client, messages, stream);
        assert.equal(stopped.finish, 'stop');
        assert.equal(stopped.message.tool_calls?.length ?? 0, 0);
        assert.match(stopped.message.content ?? '', /stopped by the agent breaker \(tool_spiral\)/);
        if (!stream) assert.equal(stopped.stopHeader, 'tool_spiral');
        const upstreamCalls = r.upstream.requests.length;
        // Further requests of the session are refused in OpenAI's error format, without reaching upstream.
        await assert.rejects(agentRound(client, messages, stream), (error: unknown) => {
          assert.ok(error instanceof OpenAI.PermissionDeniedError);
          assert.equal(error.status, 403);
          assert.equal(error.code, 'breaker_open');
          assert.match(error.message, /OPEN for this session \(.+\); calls are refused until \d{4}-\d\d-\d\dT[\d:.]+Z\.$/);
          assert.doesNotMatch(error.message, /reset/);
          assert.equal(error.headers.get('x-governor-stop'), 'tool_spiral');
          return true;
        });
        assert.equal(r.upstream.requests.length, upstreamCalls);
        // The key went upstream (the stand-in redacts it in its records) and nowhere else.
        assert.equal(r.upstream.requests[0]!.headers['authorization'], '[REDACTED]');
      } finally {
        await r.close();
      }
    });

    test("a load balancer's retry of each request: the retry's answer gets the original's verdict, and the spiral climbs as without retries", async () => {
      const r = await rig(SPIRAL);
      try {
        const client = openaiClient(r.proxy, { 'x-governor-session': `retried-${randomUUID()}` });
        const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
        // As without retries: the third search steered (it passes), the fourth blocked, the fifth stopped; a retry
        // of the stopped request is refused, the session being open.
        assert.deepEqual(await retriedRounds(client, client, messages, stream), ['call/call', 'call/call', 'call/call', 'block/block', 'stop/refused']);
        // The steer decided on the third search reaches the model with the request that brings its result (each
        // original request is followed by its retry upstream).
        assert.match(JSON.stringify(r.upstream.requests[6]!.body.messages), /No flights found\.\\n\\n\[governor\] .*search/);
      } finally {
        await r.close();
      }
    });

    test('a productive run passes byte for byte (compared with a direct run)', async () => {
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
          const messages: Message[] = [{ role: 'user', content: 'Where should I fly?' }];
          const bodies: string[] = [];
          for (let i = 0; i < script.length; i += 1) {
            const response = await fetch(`${baseURL}/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-not-a-real-key' },
              body: JSON.stringify({ model: 'm', messages, tools: [SEARCH], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }),
            });
            assert.equal(response.status, 200);
            const text = await response.text();
            // `created` is the answering second; everything else must match exactly.
            bodies.push(text.replace(/"created":\d+/g, '"created":0'));
            const { message } = stream
              ? { message: reassemble(text) }
              : (JSON.parse(text) as { choices: [{ message: OpenAI.Chat.Completions.ChatCompletionMessage }] }).choices[0];
            messages.push(message as Message);
            for (const call of message.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: `sunny in ${call.id}` });
          }
          return bodies;
        };
        const viaProxy = await run(`${r.proxy.url}/v1`);
        const straight = await run(direct.baseURL);
        assert.deepEqual(viaProxy, straight);
        assert.match(viaProxy[2]!, stream ? /Bergen/ : /fly to Bergen on Tuesday/);
        // Upstream saw the very requests the client sent.
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

/** The assistant message of an OpenAI SSE body. */
function reassemble(sse: string): OpenAI.Chat.Completions.ChatCompletionMessage {
  const chunks = sse
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as OpenAI.Chat.Completions.ChatCompletionChunk);
  return assemble(chunks).message;
}

/** The assistant message and the finish reason that streamed chunks add up to. */
function assemble(chunks: readonly OpenAI.Chat.Completions.ChatCompletionChunk[]): {
  message: OpenAI.Chat.Completions.ChatCompletionMessage;
  finish: string | null;
} {
  let content = '';
  let finish: string | null = null;
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for (const chunk of chunks) {
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    content += choice.delta.content ?? '';
    for (const d of choice.delta.tool_calls ?? []) {
      const call = (calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (d.id) call.id = d.id;
      call.function.name += d.function?.name ?? '';
      call.function.arguments += d.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  const message = { role: 'assistant', content, refusal: null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  return { message: message as OpenAI.Chat.Completions.ChatCompletionMessage, finish };
}

describe('governor proxy with AI SDK providers', () => {
  const searchTool = (count: { n: number }) =>
    tool({
      description: 'Search flights',
      inputSchema: z.object({ q: z.string() }),
      execute: async () => {
        count.n += 1;
        return 'No flights found.';
      },
    });

  for (const mode of ['generate', 'stream'] as const) {
    test(`OpenAI-compatible provider (${mode}Text): the spiral is steered, then its repeated call is not run`, async () => {
      const r = await rig(SPIRAL);
      try {
        const provider = createOpenAICompatible({ name: 'proxied', baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', includeUsage: true });
        const count = { n: 0 };
        const options = {
          model: provider('m'),
          system: 'You book travel.',
          prompt: 'Find me a flight to Oslo.',
          tools: { search: searchTool(count) },
          stopWhen: isStepCount(10),
        };
        const text = mode === 'generate' ? (await generateText(options)).text : await streamText(options).text;
        assert.equal(count.n, 3, 'three searches ran; the fourth was refused');
        assert.match(text, /The call to search was not run/);
        assert.match(JSON.stringify(r.upstream.requests[3]!.body.messages.at(-1)), /\[governor\]/);
        assert.equal(r.upstream.requests.length, 4);
      } finally {
        await r.close();
      }
    });

    test(`Anthropic provider (${mode}Text) through /v1/messages: steered, blocked, then stopped and refused`, async () => {
      const r = await rig(SPIRAL);
      try {
        const anthropic = createAnthropic({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-ant-test-not-a-real-key' });
        const count = { n: 0 };
        const options = {
          model: anthropic('claude-test'),
          maxOutputTokens: 256,
          system: 'You book travel.',
          prompt: 'Find me a flight to Oslo.',
          tools: { search: searchTool(count) },
          stopWhen: isStepCount(10),
        };
        const text = mode === 'generate' ? (await generateText(options)).text : await streamText(options).text;
        assert.equal(count.n, 3);
        assert.match(text, /The call to search was not run/);
        assert.equal(r.upstream.requests[0]!.path, '/v1/messages');
        assert.equal(r.upstream.requests[0]!.headers['x-api-key'], '[REDACTED]');
        const steered = r.upstream.requests[3]!.body.messages.at(-1) as { content: { type: string; text?: string }[] };
        assert.ok(steered.content.some((part) => part.type === 'text' && /^\[governor\] .*search/.test(part.text ?? '')));
        // The same conversation goes on: the breaker stops it, with a final answer.
        const again = mode === 'generate' ? (await generateText(options)).text : await streamText(options).text;
        assert.match(again, /stopped by the agent breaker \(tool_spiral\)/);
        assert.equal(count.n, 3);
        // Then the session is refused, in Anthropic's error format.
        const refused = await fetch(`${r.proxy.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key' },
          body: JSON.stringify({
            model: 'claude-test',
            max_tokens: 100,
            system: 'You book travel.',
            messages: [{ role: 'user', content: 'Find me a flight to Oslo.' }],
          }),
        });
        assert.equal(refused.status, 403);
        assert.equal(refused.headers.get('x-governor-stop'), 'tool_spiral');
        const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error.type, 'permission_error');
        assert.doesNotMatch(JSON.stringify(body), /sk-ant/);
      } finally {
        await r.close();
      }
    });
  }
});

/**
 * A chat through a proxy in front of `upstream`, under the session
 * `sessionId`, with the hosted `tools`, until the breaker stops it (at most 8
 * rounds): each answer's text, and the proxy's breaker.
 */
async function untilStopped(
  upstream: ScriptedModelServer,
  sessionId: string,
  mode: 'generate' | 'stream',
  tools: (anthropic: ReturnType<typeof createAnthropic>) => Parameters<typeof generateText>[0]['tools'],
): Promise<{ answers: string[]; breaker: AgentBreaker }> {
  const breaker = new AgentBreaker();
  await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
  const anthropic = createAnthropic({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-ant-test-not-a-real-key', headers: { 'x-governor-session': sessionId } });
  const messages: ModelMessage[] = [];
  const answers: string[] = [];
  for (let i = 0; i < 8 && !answers.at(-1)?.includes('stopped by the agent breaker'); i += 1) {
    messages.push({ role: 'user', content: i === 0 ? 'Find me the cheapest flight to Oslo in March.' : 'Keep looking.' });
    const options = { model: anthropic('claude-test'), maxOutputTokens: 256, messages, tools: tools(anthropic) };
    const result = mode === 'generate' ? await generateText(options) : streamText(options);
    answers.push(await result.text);
    messages.push(...(await result.response).messages);
  }
  return { answers, breaker };
}

describe("governor proxy with Anthropic's server tools (web search, web fetch, code execution, MCP connector)", () => {
  for (const mode of ['generate', 'stream'] as const) {
    test(`${mode}Text: searches the API ran itself are judged; the same search over and over is steered, then stopped`, async () => {
      await using upstream = await searchLoopServer();
      const { answers, breaker } = await untilStopped(upstream, 'fares-2', mode, (anthropic) => ({
        web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }),
      }));
      assert.match(answers.at(-1)!, /stopped by the agent breaker \(rag_fixation\)/);
      assert.ok(answers.slice(0, -1).every((a) => a === SEARCH_LOOP_ANSWER));
      const snapshot = await breaker.snapshot('fares-2');
      assert.equal(snapshot.counters.retrievals, answers.length);
      // The request after the steer carried the breaker's note about the searches.
      assert.ok(upstream.requests.some((q) => /\[governor\].*search/s.test(JSON.stringify(q.body.messages.at(-1)))));
    });
  }

  for (const mode of ['generate', 'stream'] as const) {
    test(`${mode}Text: four alike searches in one answer are steered once; the next answer that searches again is stopped, its searches kept`, async () => {
      const upstream = await searchLoopServer({ perAnswer: 4 });
      const breaker = new AgentBreaker();
      await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
      try {
        const anthropic = createAnthropic({
          baseURL: `${proxy.url}/v1`,
          apiKey: 'sk-ant-test-not-a-real-key',
          headers: { 'x-governor-session': `fares-one-answer-${mode}` },
        });
        const tools = { web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }) };
        const ask = (messages: ModelMessage[]) => {
          const options = { model: anthropic('claude-test'), maxOutputTokens: 256, messages, tools };
          return mode === 'generate' ? generateText(options) : streamText(options);
        };
        const messages: ModelMessage[] = [{ role: 'user', content: 'Find me the cheapest flight to Oslo in March.' }];
        const first = await ask(messages);
        assert.equal(await first.text, SEARCH_LOOP_ANSWER);
        messages.push(...(await first.response).messages, { role: 'user', content: 'Keep looking.' });
        const second = await ask(messages);
        assert.match(await second.text, /stopped by the agent breaker \(rag_fixation\)/);
        // Every search that ran is counted, those of the stopped answer too.
        assert.equal((await breaker.snapshot(`fares-one-answer-${mode}`)).counters.retrievals, 8);
        assert.equal(JSON.stringify(upstream.requests[1]!.body.messages).match(/\[governor\]/g)?.length, 1, 'one steer, in the second request');
        // The stopped answer still shows the searches that ran in it, streamed or not.
        const ran = (await second.response).messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : []));
        assert.equal(ran.filter((p) => p.type === 'tool-call' && p.toolName === 'web_search' && p.providerExecuted === true).length, 4);
        assert.equal(ran.filter((p) => p.type === 'tool-result' && p.toolName === 'web_search').length, 4);
      } finally {
        await upstream.close();
      }
    });
  }

  /** Calls the API runs itself, the same in every answer, with the tools that let it and the name the breaker judges them under. */
  const loops = [
    {
      what: 'a page the API fetched again and again (web_fetch) is noted, then stopped as a tool spiral',
      loop: PAGE_LOOP,
      tool: 'web_fetch',
      tools: (anthropic: ReturnType<typeof createAnthropic>) => ({ fetch: anthropic.tools.webFetch_20250910({ maxUses: 5 }) }),
    },
    {
      what: 'code the API ran (bash_code_execution) that fails the same way again and again is noted, then stopped as an error loop',
      loop: CODE_LOOP,
      tool: 'bash_code_execution',
      tools: (anthropic: ReturnType<typeof createAnthropic>) => ({ code_execution: anthropic.tools.codeExecution_20250825() }),
    },
    {
      what: 'a remote MCP tool the API called again and again for the same output (mcp_tool_use) is noted, then stopped as a tool spiral',
      loop: MCP_LOOP,
      tool: 'get_issue',
      tools: () => ({}),
    },
  ];
  for (const { what, loop, tool, tools } of loops) {
    for (const mode of ['generate', 'stream'] as const) {
      test(`${mode}Text: ${what}`, async () => {
        await using upstream = await loop.start();
        const sessionId = `${tool}-${mode}`;
        const { answers, breaker } = await untilStopped(upstream, sessionId, mode, tools);
        assert.deepEqual(answers.slice(0, -1), [loop.answer, loop.answer, loop.answer, loop.answer]);
        assert.match(answers.at(-1)!, new RegExp(`stopped by the agent breaker \\(${loop.category}\\)`));
        assert.equal((await breaker.snapshot(sessionId)).counters.toolCalls, 5);
        const notes = upstream.requests.map((q) => [...JSON.stringify(q.body.messages).matchAll(loopNote(loop, 'governor', tool))].map((m) => m[1]));
        assert.deepEqual(notes.slice(0, 5), [[], [], [], [loop.counts[0]], [loop.counts[1]]]);
      });
    }
  }

  test('each web search with the addresses its result found, each web fetch with its page or its failure, each code run with what it printed; a failed search, a call without a result or another server tool is left out', () => {
    const round = anthropicWire.roundOf({
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'oslo fares' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://a.example', title: 'A' }] },
        { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'oslo hotels' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
        { type: 'server_tool_use', id: 'srvtoolu_3', name: 'web_fetch', input: { url: 'https://a.example' } },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_3',
          content: {
            type: 'web_fetch_result',
            url: 'https://a.example',
            retrieved_at: null,
            content: { type: 'document', title: 'A', source: { type: 'text', media_type: 'text/plain', data: 'Fares from 49 EUR.' } },
          },
        },
        { type: 'server_tool_use', id: 'srvtoolu_4', name: 'web_fetch', input: { url: 'https://b.example' } },
        { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_4', content: { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' } },
        { type: 'server_tool_use', id: 'srvtoolu_5', name: 'web_fetch', input: { url: 'https://c.example' } },
        { type: 'server_tool_use', id: 'srvtoolu_6', name: 'code_execution', input: { code: 'print(1)' } },
        { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_6', content: { type: 'code_execution_result', stdout: '1', stderr: '', return_code: 0 } },
        { type: 'server_tool_use', id: 'srvtoolu_7', name: 'tool_search_tool_regex', input: { pattern: 'weather' } },
        {
          type: 'tool_search_tool_result',
          tool_use_id: 'srvtoolu_7',
          content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }] },
        },
        { type: 'text', text: 'Done.' },
      ],
    });
    assert.deepEqual(round.hosted, [
      { kind: 'retrieval', query: 'oslo fares', results: ['https://a.example'] },
      { kind: 'tool_call', tool: 'web_fetch', args: { url: 'https://a.example' }, result: 'Fares from 49 EUR.' },
      { kind: 'tool_call', tool: 'web_fetch', args: { url: 'https://b.example' }, result: 'web_fetch failed: url_not_accessible', error: true },
      { kind: 'tool_call', tool: 'code_execution', args: { code: 'print(1)' }, result: '1' },
    ]);
  });
});

describe('governor proxy with the Anthropic Messages API: a productive run passes byte for byte', () => {
  for (const stream of [false, true]) {
    test(stream ? 'streamed' : 'not streamed', async () => {
      const script: ScriptedTurn[] = [
        {
          text: 'Checking.',
          toolCalls: [
            { name: 'search', arguments: { q: 'Oslo' } },
            { name: 'search', arguments: { q: 'Bergen' } },
          ],
        },
        { text: 'Bergen it is. ✈️' },
      ];
      const direct = await new ScriptedModelServer({ script }).start();
      const r = await rig(script);
      try {
        const run = async (baseURL: string): Promise<string[]> => {
          const bodies: string[] = [];
          const messages: unknown[] = [{ role: 'user', content: 'Where should I fly?' }];
          for (let i = 0; i < script.length; i += 1) {
            const response = await fetch(`${baseURL}/messages`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key', 'anthropic-version': '2023-06-01' },
              body: JSON.stringify({ model: 'claude-test', max_tokens: 256, system: 'You book travel.', messages, stream }),
            });
            assert.equal(response.status, 200);
            const text = await response.text();
            bodies.push(text);
            const ids = [...text.matchAll(/"id":"(call_[^"]+)"/g)].map((m) => m[1]!);
            messages.push({ role: 'assistant', content: ids.map((id) => ({ type: 'tool_use', id, name: 'search', input: {} })) });
            messages.push({ role: 'user', content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: `sunny at ${id}` })) });
          }
          return bodies;
        };
        const viaProxy = await run(`${r.proxy.url}/v1`);
        assert.deepEqual(viaProxy, await run(direct.baseURL));
        assert.match(viaProxy[1]!, /Bergen/);
        assert.deepEqual(
          r.upstream.requests.map((q) => q.body),
          direct.requests.map((q) => q.body),
        );
      } finally {
        await r.close();
        await direct.close();
      }
    });
  }
});

describe('governor proxy: usage counts against the session budget', () => {
  test('crossing the token budget steers a wrap-up into the next request, then the run is stopped', async () => {
    // Different searches every round (no loop), but 400 tokens a round against a budget of 1,000.
    const script = (_request: unknown, index: number): ScriptedTurn => ({
      toolCalls: [{ name: 'search', arguments: { q: `city ${index}` } }],
      usage: { promptTokens: 300, completionTokens: 100 },
    });
    const upstream = await new ScriptedModelServer({ script }).start();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker({ budget: { maxTokens: 1000 } }), port: 0 });
    try {
      const client = openaiClient(proxy);
      const messages: Message[] = [{ role: 'user', content: 'Compare flights from every city.' }];
      const rounds: { finish: string | null; stop: string | null }[] = [];
      for (let i = 0; i < 5; i += 1) {
        const round = await agentRound(client, messages, false);
        rounds.push({ finish: round.finish, stop: round.stopHeader });
        if (round.stopHeader !== null) break;
      }
      // Rounds 1-2 run; round 3 crosses the budget (1,200 tokens): its tool call is not run.
      assert.deepEqual(rounds, [
        { finish: 'tool_calls', stop: null },
        { finish: 'tool_calls', stop: null },
        { finish: 'stop', stop: null },
        { finish: 'stop', stop: null },
        { finish: 'stop', stop: 'budget' },
      ]);
      // Round 4 is the wrap-up round: it went upstream with the breaker's message.
      assert.equal(upstream.requests.length, 4);
      assert.match(JSON.stringify(upstream.requests[3]!.body.messages.at(-1)), /\[governor\] The session budget is spent \(1200 of 1000 tokens\)/);
      // Round 5 never reached upstream: the final answer says why the run ended.
      assert.match(messages.at(-2)!.content as string, /stopped by the agent breaker \(budget\)/);
    } finally {
      await upstream.close();
    }
  });
});

describe('governor proxy: usage counts against the session budget, streamed or not', () => {
  /** Different searches every round (no loop), 300 + 100 tokens a round; `model` is the model the upstream says answered. */
  async function budgetRun(breaker: AgentBreaker, stream: boolean, model: string) {
    const script = (_request: unknown, index: number): ScriptedTurn => ({
      toolCalls: [{ name: 'search', arguments: { q: `city ${index}` } }],
      usage: { promptTokens: 300, completionTokens: 100 },
    });
    const upstream = await new ScriptedModelServer({ script, modelId: model }).start();
    const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    try {
      const client = openaiClient(proxy);
      const messages: Message[] = [{ role: 'user', content: 'Compare flights from every city.' }];
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      const rounds: { finish: string | null; stop: string | null }[] = [];
      for (let i = 0; i < 6; i += 1) {
        const round = await agentRound(client, messages, stream, 'm', chunks);
        rounds.push({ finish: round.finish, stop: round.stopHeader });
        if (round.stopHeader !== null) break;
      }
      return { rounds, chunks, sent: upstream.requests.map((r) => r.body), health: await (await fetch(`${proxy.url}/health`)).json() };
    } finally {
      await proxy.close();
      await upstream.close();
    }
  }
  const BUDGET_ROUNDS = [
    { finish: 'tool_calls', stop: null },
    { finish: 'tool_calls', stop: null },
    { finish: 'stop', stop: null },
    { finish: 'stop', stop: null },
    { finish: 'stop', stop: 'budget' },
  ];

  test('a streamed request that did not ask for usage is counted: the proxy asks for it, and keeps the usage chunk from the client', async () => {
    const run = await budgetRun(new AgentBreaker({ budget: { maxTokens: 1000 } }), true, 'm');
    assert.deepEqual(run.rounds, BUDGET_ROUNDS);
    for (const body of run.sent) assert.deepEqual(body.stream_options, { include_usage: true });
    assert.ok(run.chunks.length > 0);
    assert.deepEqual(
      run.chunks.filter((chunk) => chunk.choices.length === 0),
      [],
      'a client that did not ask for usage gets no chunk without choices',
    );
  });

  test('a streamed request that asked for usage still gets its usage chunk', async () => {
    const upstream = await new ScriptedModelServer({ script: [{ text: 'Hello.', usage: { promptTokens: 12, completionTokens: 3 } }] }).start();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0 });
    try {
      const stream = await openaiClient(proxy).chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const usage = [];
      for await (const chunk of stream) if (chunk.usage) usage.push(chunk.usage);
      assert.deepEqual(usage, [{ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 }]);
    } finally {
      await upstream.close();
    }
  });

  for (const stream of [false, true]) {
    test(`a cost cap is enforced on the model the upstream says answered (${stream ? 'streamed' : 'not streamed'})`, async () => {
      // gpt-4o: 300 × $2.50 + 100 × $10 per million tokens = $0.00175 a round; the third crosses $0.004.
      const run = await budgetRun(new AgentBreaker({ budget: { maxCostUsd: 0.004 } }), stream, 'gpt-4o');
      assert.deepEqual(run.rounds, BUDGET_ROUNDS);
    });
  }

  for (const api of ['messages', 'responses'] as const) {
    for (const stream of [false, true]) {
      test(`the ${api === 'messages' ? 'Anthropic Messages' : 'Responses'} API: a round is priced by the model that answered (${stream ? 'streamed' : 'not streamed'})`, async () => {
        const modelId = api === 'messages' ? 'claude-sonnet-4-5' : 'gpt-4o';
        const script: ScriptedTurn[] = [{ text: 'Looking.', usage: { promptTokens: 3000, completionTokens: 1000 } }];
        const upstream = await new ScriptedModelServer({ script, modelId, onExhausted: 'repeat-last' }).start();
        // Any priced round crosses a cap this small: the next request carries the wrap-up.
        await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker({ budget: { maxCostUsd: 0.000001 } }), port: 0 });
        try {
          const headers = {
            'content-type': 'application/json',
            'x-api-key': 'sk-ant-test-not-a-real-key',
            'anthropic-version': '2023-06-01',
            'x-governor-session': 's',
          };
          for (const question of ['Where should I fly?', 'And then?']) {
            const body =
              api === 'messages'
                ? { model: 'any', max_tokens: 256, messages: [{ role: 'user', content: question }], stream }
                : { model: 'any', input: question, stream };
            const response = await fetch(`${proxy.url}/v1/${api}`, { method: 'POST', headers, body: JSON.stringify(body) });
            assert.equal(response.status, 200);
            await response.text();
          }
          assert.equal(upstream.requests.length, 2);
          assert.match(JSON.stringify(upstream.requests[1]!.body), /The session budget is spent/);
        } finally {
          await upstream.close();
        }
      });
    }
  }

  test('a model without a price is named in health, and its rounds are not stopped by the cost cap', async () => {
    const run = await budgetRun(new AgentBreaker({ budget: { maxCostUsd: 0.004 } }), false, 'house-model-7b');
    assert.deepEqual(run.rounds.at(-1), { finish: 'tool_calls', stop: null });
    assert.equal(run.rounds.length, 6);
    assert.match(JSON.stringify(run.health), /house-model-7b/);
  });
});

describe('governor proxy: sessions, pass-through and options', () => {
  test('sessions are told apart by header, by user, else by system prompt and first user message', async () => {
    const openaiBody = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'm', messages, ...extra });
    const first = [
      { role: 'system', content: 'You book travel.' },
      { role: 'user', content: 'Oslo?' },
    ];
    const later = [...first, { role: 'assistant', content: 'Looking.' }, { role: 'user', content: 'And Bergen?' }];
    const none = new Headers();
    assert.equal(proxySessionId(new Headers({ 'x-governor-session': 'run-7' }), openaiBody(first, { user: 'u1' }), openaiWire), 'run-7');
    assert.equal(proxySessionId(none, openaiBody(first, { user: 'u1' }), openaiWire), 'user:u1');
    assert.equal(proxySessionId(none, { model: 'c', messages: first.slice(1), metadata: { user_id: 'u2' } }, anthropicWire), 'user:u2');
    // One conversation keeps its session as it grows; another first message is another session.
    const hashed = proxySessionId(none, openaiBody(first), openaiWire);
    assert.match(hashed, /^prompt:[0-9a-f]{32}$/);
    assert.equal(proxySessionId(none, openaiBody(later), openaiWire), hashed);
    // A system note the client adds along the way (a reminder) is not the conversation's opening.
    const reminded = [...later, { role: 'system', content: 'Reminder: 3 tool calls left.' }, { role: 'developer', content: 'Be brief.' }];
    assert.equal(proxySessionId(none, openaiBody(reminded), openaiWire), hashed);
    assert.notEqual(proxySessionId(none, openaiBody([first[0], { role: 'user', content: 'Paris?' }]), openaiWire), hashed);
    assert.notEqual(proxySessionId(none, openaiBody([{ role: 'system', content: 'You sell trains.' }, first[1]]), openaiWire), hashed);
    // The user id and the hash are the client's: another key is another client, whatever the header it sends the key in.
    const keyed = (name: string, key: string) => new Headers({ [name]: key });
    const mine = proxySessionId(keyed('authorization', 'Bearer sk-a'), openaiBody(first), openaiWire);
    assert.match(mine, /^prompt:[0-9a-f]{32}$/);
    assert.notEqual(mine, hashed);
    assert.equal(proxySessionId(keyed('authorization', 'Bearer sk-a'), openaiBody(later), openaiWire), mine);
    assert.notEqual(proxySessionId(keyed('authorization', 'Bearer sk-b'), openaiBody(first), openaiWire), mine);
    assert.notEqual(
      proxySessionId(keyed('x-api-key', 'sk-ant-b'), openaiBody(first), anthropicWire),
      proxySessionId(keyed('x-api-key', 'sk-ant-a'), openaiBody(first), anthropicWire),
    );
    const userOf = (key: string) => proxySessionId(keyed('api-key', key), openaiBody(first, { user: 'u1' }), openaiWire);
    assert.match(userOf('azure-a'), /^user:u1@[0-9a-f]{12}$/);
    assert.notEqual(userOf('azure-a'), userOf('azure-b'));
    assert.ok(!userOf('azure-a').includes('azure-a'), 'the key itself is not in the session id');
  });

  test("two clients with their own keys, the same prompt and no session header: a steer quoting one's answers never goes into the other's request", async () => {
    const secret = 'Your recovery phrase is lunar-otter-93-quartz, keep it safe.';
    const upstream = await new ScriptedModelServer({
      script: (request): ScriptedTurn => ({
        text: request.headers['x-tenant'] === 'a' ? `${secret} ${secret} ${secret}` : 'Booked.',
      }),
    }).start();
    const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker({ telemetry: false }), port: 0 });
    try {
      // The stand-in server records keys redacted: the tenant also names itself in a header the proxy passes on.
      const tenant = (name: string) =>
        new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: `sk-tenant-${name}`, maxRetries: 0, defaultHeaders: { 'x-tenant': name } });
      const opening: Message[] = [
        { role: 'system', content: 'You are the assistant of a booking app.' },
        { role: 'user', content: 'Hello' },
      ];
      const a = tenant('a');
      const reply = (await a.chat.completions.create({ model: 'm', messages: opening })).choices[0]!.message as Message;
      await a.chat.completions.create({ model: 'm', messages: [...opening, reply, { role: 'user', content: 'Again?' }] });
      const steered = upstream.requests.filter((r) => JSON.stringify(r.body).includes('[governor]'));
      assert.equal(steered.length, 1, "tenant A's own next request carries the steer");
      await tenant('b').chat.completions.create({
        model: 'm',
        messages: [...opening, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Book Oslo' }],
      });
      const last = upstream.requests.at(-1)!;
      assert.equal(last.headers['x-tenant'], 'b');
      assert.ok(!JSON.stringify(last.body).includes('lunar-otter'), "tenant B's request holds nothing of tenant A's answers");
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  test('a store outage with fail-closed refuses the call with a retryable 503 that does not say where the store is; the retry goes through', async () => {
    const inner = new InMemoryBreakerStore();
    let failures = 1;
    const down = (): Promise<never> => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:6379'));
    const store: BreakerStore = {
      read: (id) => (failures-- > 0 ? down() : inner.read(id)),
      apply: (id, op, reducer) => inner.apply(id, op, reducer),
      delete: (id) => inner.delete(id),
    };
    const warnings: string[] = [];
    const breaker = new AgentBreaker({ store, onStoreError: 'fail-closed', checkFreshnessMs: 0 });
    breaker.on((event) => {
      if (event.type === 'warning') warnings.push(event.message ?? '');
    });
    const r = await rig([{ text: 'Here are flights to Oslo.' }], breaker);
    try {
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const refused = await openaiClient(r.proxy)
        .chat.completions.create({ model: 'm', messages })
        .then(
          () => assert.fail('the call was not refused'),
          (error: unknown) => error,
        );
      assert.ok(refused instanceof OpenAI.InternalServerError, String(refused));
      assert.equal(refused.status, 503);
      assert.equal(refused.headers?.get('x-governor-stop'), 'store_unavailable');
      assert.match(refused.message, /cannot reach its store, so this call was refused unjudged/);
      assert.doesNotMatch(refused.message, /10\.1\.2\.3|ECONNREFUSED/);
      assert.equal(r.upstream.requests.length, 0);
      // The operator still learns why.
      assert.match(warnings.join('\n'), /ECONNREFUSED 10\.1\.2\.3:6379/);
      // Once the store answers again, the client's own retry goes through.
      failures = 1;
      const retried = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 1 });
      const answer = await retried.chat.completions.create({ model: 'm', messages });
      assert.equal(answer.choices[0]!.message.content, 'Here are flights to Oslo.');
    } finally {
      await r.close();
    }
  });

  test('a stopped session does not stop another session with the same prompt', async () => {
    const r = await rig(SPIRAL);
    try {
      const messages = (): Message[] => [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const stopped = openaiClient(r.proxy, { 'x-governor-session': 'agent-1' });
      const m1 = messages();
      let header: string | null = null;
      for (let i = 0; i < 6 && header === null; i += 1) header = (await agentRound(stopped, m1, false)).stopHeader;
      assert.equal(header, 'tool_spiral');
      await assert.rejects(agentRound(stopped, m1, false), OpenAI.PermissionDeniedError);
      const round = await agentRound(openaiClient(r.proxy, { 'x-governor-session': 'agent-2' }), messages(), false);
      assert.equal(round.finish, 'tool_calls');
    } finally {
      await r.close();
    }
  });

  test('a server that gives every tool call the same id: the spiral is still stopped', async () => {
    const r = await rig([{ toolCalls: [{ id: 'call_0', name: 'search', arguments: { q: 'flights to Oslo' } }] }]);
    try {
      const client = openaiClient(r.proxy, { 'x-governor-session': 'same-ids' });
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      let header: string | null = null;
      let rounds = 0;
      for (; rounds < 8 && header === null; rounds += 1) header = (await agentRound(client, messages, false)).stopHeader;
      assert.equal(header, 'tool_spiral');
      // As with ids of its own per call (see the spiral test above): steered, blocked, stopped.
      assert.equal(rounds, 5);
    } finally {
      await r.close();
    }
  });

  test('an agent that starts each task afresh: a new user turn where the last one was is a new turn', async () => {
    const breaker = new AgentBreaker();
    const r = await rig([{ toolCalls: [{ name: 'search', arguments: { q: 'status of db-1' } }] }], breaker);
    try {
      const client = openaiClient(r.proxy, { 'x-governor-session': 'fresh-tasks' });
      const events: string[] = [];
      breaker.on((e) => {
        if (e.type === 'escalation') events.push(`${e.action} ${e.category}`);
      });
      for (const task of ['Is db-1 up?', 'I restarted db-1. Check it again.', 'I replaced its disk. Check db-1 once more.']) {
        // The same context every time: system prompt and the task, then two rounds of the same lookup.
        const messages: Message[] = [
          { role: 'system', content: 'You run checks.' },
          { role: 'user', content: task },
        ];
        for (let i = 0; i < 2; i += 1) assert.equal((await agentRound(client, messages, false)).finish, 'tool_calls');
      }
      assert.deepEqual(events, []);
      // A retried request (the very same body again) is still observed once.
      const messages: Message[] = [
        { role: 'system', content: 'You run checks.' },
        { role: 'user', content: 'One more: is db-2 up?' },
      ];
      await agentRound(client, messages, false);
      const before = (await breaker.snapshot('fresh-tasks')).counters;
      for (let i = 0; i < 3; i += 1) await client.chat.completions.create({ model: 'm', messages, tools: [SEARCH] });
      const after = (await breaker.snapshot('fresh-tasks')).counters;
      assert.equal(after.toolCalls - before.toolCalls, 1);
      assert.equal(after.userEvents, before.userEvents);
    } finally {
      await r.close();
    }
  });

  test('a request sent with Expect: 100-continue (as curl does for a large body) is answered', async () => {
    const r = await rig([{ text: 'hello' }]);
    try {
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = http.request(`${r.proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
        });
        request.on('continue', () => request.end(body));
        request.on('response', (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        });
        request.on('error', reject);
      });
      assert.equal(status, 200, text);
      assert.match(text, /hello/);
      assert.equal(r.upstream.requests[0]!.headers['expect'], undefined);
    } finally {
      await r.close();
    }
  });

  test('a request body over maxRequestBytes is a 413 in the API format, unread and not sent upstream; other routes stream any size', async () => {
    const upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }] }).start();
    // Counts what reaches it on a route the proxy does not judge.
    const files = http.createServer((request, response) => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      request.on('end', () => response.end(JSON.stringify({ bytes, transfer: request.headers['transfer-encoding'] ?? null })));
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const { port } = files.address() as import('node:net').AddressInfo;
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0, maxRequestBytes: 4096 });
    await using uploads = await startModelProxy({ upstream: `http://127.0.0.1:${port}/v1`, breaker: new AgentBreaker(), port: 0, maxRequestBytes: 4096 });
    try {
      const big = 'x'.repeat(5000);
      await assert.rejects(openaiClient(proxy).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: big }] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 413);
        assert.equal(error.code, 'request_too_large');
        assert.match(error.message, /larger than 4096 bytes/);
        return true;
      });
      // A chunked body has no Content-Length: it is counted as it is read.
      const chunked = await fetch(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Blob([JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: big }] })]).stream(),
        duplex: 'half',
      } as RequestInit);
      assert.equal(chunked.status, 413);
      assert.deepEqual(((await chunked.json()) as { error: { type: string } }).error.type, 'request_too_large');
      assert.equal(upstream.requests.length, 0);
      // Under the limit the same request is answered.
      const small = await openaiClient(proxy).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(small.choices[0]!.message.content, 'hello');
      // 1 MiB to a route the proxy only passes on reaches the upstream whole, streamed.
      const upload = await fetch(`${uploads.url}/v1/files`, {
        method: 'POST',
        body: new Blob([new Uint8Array(1 << 20)]).stream(),
        duplex: 'half',
      } as RequestInit);
      assert.deepEqual(await upload.json(), { bytes: 1 << 20, transfer: 'chunked' });
    } finally {
      await upstream.close();
      files.closeAllConnections();
      await new Promise((resolve) => files.close(resolve));
    }
  });

  test('/health answers, /v1/models passes through, unknown paths get the upstream answer', async () => {
    const r = await rig(SPIRAL);
    try {
      const health = await fetch(`${r.proxy.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string }).status, 'UP');
      const models = await fetch(`${r.proxy.url}/v1/models`, { headers: { authorization: 'Bearer sk-test-not-a-real-key' } });
      assert.equal(models.status, 200);
      assert.deepEqual(await models.json(), await (await fetch(`${r.upstream.baseURL}/models`)).json());
      const missing = await fetch(`${r.proxy.url}/v1/embeddings`, { method: 'POST', body: '{}' });
      assert.equal(missing.status, 404);
      assert.match(await missing.text(), /does not serve \/v1\/embeddings/);
    } finally {
      await r.close();
    }
  });

  test("an unreachable upstream is a 502 in the API's error format, naming no secret", async () => {
    const breaker = new AgentBreaker();
    const gone = await new ScriptedModelServer({ script: [] }).start();
    const upstream = gone.baseURL;
    await gone.close();
    const told: Error[] = [];
    await using proxy = await startModelProxy({ upstream, breaker, port: 0, onError: (e) => told.push(e) });
    const client = openaiClient(proxy);
    await assert.rejects(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.match(error.message, /did not answer \(ECONNREFUSED\)/);
      assert.ok(UpstreamUnreachableError.isInstance(told[0]));
      assert.doesNotMatch(error.message, /sk-test/);
      return true;
    });
    const anthropic = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(anthropic.status, 502);
    assert.equal(((await anthropic.json()) as { error: { type: string } }).error.type, 'api_error');
  });

  test("an upstream on a port fetch refuses (one of the fetch standard's bad ports) is named so, not as an error class", async () => {
    // fetch refuses the port before connecting: nothing needs to listen there.
    await using proxy = await startModelProxy({ upstream: 'http://127.0.0.1:6666/v1', breaker: new AgentBreaker(), port: 0, onError: () => {} });
    await assert.rejects(openaiClient(proxy).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.match(error.message, /did not answer \(fetch refuses this port: serve the upstream on another one\)/);
      return true;
    });
  });

  test("an upstream that breaks off its answer: a 502, or in a stream the API's error event, and onError is told", async () => {
    // Answers 200, sends part of the body, then drops the connection.
    const upstream = http.createServer((request, response) => {
      const stream = request.url?.includes('stream') === true;
      response.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', ...(stream ? {} : { 'content-length': '500' }) });
      response.write(
        stream
          ? `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] })}\n\n`
          : '{"id":"c1","choi',
      );
      setTimeout(() => response.socket?.destroy(), 20);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as import('node:net').AddressInfo;
    const told: Error[] = [];
    const breaker = new AgentBreaker();
    const proxies = await Promise.all(
      ['plain', 'stream'].map((path) => startModelProxy({ upstream: `http://127.0.0.1:${port}/${path}`, breaker, port: 0, onError: (e) => told.push(e) })),
    );
    try {
      const messages: Message[] = [{ role: 'user', content: 'hi' }];
      await assert.rejects(openaiClient(proxies[0]!).chat.completions.create({ model: 'm', messages }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 502);
        assert.match(error.message, /broke off its answer/);
        return true;
      });
      const deltas: string[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of await openaiClient(proxies[1]!).chat.completions.create({ model: 'm', messages, stream: true })) {
            deltas.push(chunk.choices[0]?.delta.content ?? '');
          }
        })(),
        (error: unknown) => error instanceof OpenAI.APIError && /broke off its answer/.test(error.message),
      );
      assert.deepEqual(deltas, ['Hel']);
      assert.equal(told.length, 2);
      for (const error of told) assert.match(error.message, new RegExp(`upstream http://127.0.0.1:${port} broke off its answer`));
    } finally {
      await Promise.all(proxies.map((p) => p.close()));
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  test('a stopped session is refused on every spelling of a judged path: a trailing slash, doubled slashes, percent-escapes', async () => {
    const r = await rig(SPIRAL);
    try {
      const client = openaiClient(r.proxy, { 'x-governor-session': 'spellings' });
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      for (let i = 0; i < 5; i += 1) await agentRound(client, messages, false);
      const sent = r.upstream.requests.length;
      for (const path of ['/v1/chat/completions/', '/v1//chat/completions', '/v1/chat/%63ompletions', '/chat/completions/']) {
        const response = await fetch(`${r.proxy.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-governor-session': 'spellings' },
          body: JSON.stringify({ model: 'm', messages }),
        });
        assert.equal(response.status, 403, `${path} is refused like /v1/chat/completions`);
      }
      assert.equal(r.upstream.requests.length, sent, 'none of them reached the upstream');
    } finally {
      await r.close();
    }
  });

  test('a stop decided on an observed event (the same reply again and again) is answered once; the next request is refused', async () => {
    const reply = 'I could not find any flights to Oslo in March. The airline sites did not answer; please try again later.';
    const r = await rig([{ text: reply }]);
    try {
      const outcomes: string[] = [];
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      for (let i = 0; i < 10 && !outcomes.includes('403'); i += 1) {
        const response = await fetch(`${r.proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-governor-session': 'same-reply' },
          body: JSON.stringify({ model: 'm', messages }),
        });
        outcomes.push(response.headers.get('x-governor-stop') !== null && response.status === 200 ? 'stop' : String(response.status));
        messages.push({ role: 'assistant', content: reply }, { role: 'user', content: 'Keep trying.' });
      }
      assert.equal(outcomes.filter((o) => o === 'stop').length, 1, `one stopping answer, then refusals: ${outcomes.join(' ')}`);
      assert.deepEqual(outcomes.slice(-2), ['stop', '403']);
    } finally {
      await r.close();
    }
  });

  test('an upstream URL with a query (an api-version) keeps it on every request, before the request’s own', async () => {
    const seen: string[] = [];
    const upstreamFetch = async (url: string | URL | Request): Promise<Response> => {
      seen.push(String(url));
      return Response.json({ data: [] });
    };
    const app = createModelProxy({
      upstream: 'http://upstream.test/openai/v1?api-version=2024-10-21',
      breaker: new AgentBreaker(),
      fetch: upstreamFetch as typeof fetch,
    });
    await app.request('/v1/models?limit=2');
    await app.request('/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    assert.deepEqual(seen, [
      'http://upstream.test/openai/v1/models?api-version=2024-10-21&limit=2',
      'http://upstream.test/openai/v1/chat/completions?api-version=2024-10-21',
    ]);
  });

  test('a tool call the breaker cannot fingerprint as usual (nested thousands deep, or without a name) passes, streamed or not', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const told: Error[] = [];
    const upstream = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'read_file', arguments: deep }] }, { toolCalls: [{ name: 'read_file', arguments: deep }] }, { text: 'Done.' }],
    }).start();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    try {
      const client = openaiClient(proxy);
      const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Read it.' }] });
      assert.equal(plain.choices[0]!.message.tool_calls?.[0]?.type === 'function' && plain.choices[0]!.message.tool_calls[0].function.arguments, deep);
      let streamedArgs = '';
      for await (const chunk of await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Read it.' }], stream: true })) {
        streamedArgs += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      }
      assert.equal(streamedArgs, deep);
      // A history holding a call without a name goes upstream like any other.
      const unnamed = await client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'user', content: 'Read it.' },
          { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: '', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 't1', content: 'r' },
        ],
      });
      assert.equal(unnamed.choices[0]!.message.content, 'Done.');
      assert.deepEqual(told, [], 'nothing failed');
    } finally {
      await upstream.close();
    }
  });

  test('a client that gives up before the upstream answers is not reported as an upstream failure', async () => {
    const told: Error[] = [];
    const upstream = await new ScriptedModelServer({ script: [{ text: 'Late.', delayMs: 2_000 }] }).start();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0, timeout: 200 });
      await assert.rejects(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), OpenAI.APIConnectionTimeoutError);
      // The proxy sees the abort after the client has gone: give it a moment to (not) report.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        told.map((e) => e.message),
        [],
      );
    } finally {
      await upstream.close();
    }
  });

  test('close() lets an answer in flight finish, and drops it after closeGraceMs', async () => {
    const upstream = await new ScriptedModelServer({ script: [{ text: 'Slow answer.', delayMs: 300 }], onExhausted: 'repeat-last' }).start();
    try {
      const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0 });
      const answer = openaiClient(proxy).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
      while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await proxy.close();
      assert.equal((await answer).choices[0]!.message.content, 'Slow answer.');
      await assert.rejects(fetch(`${proxy.url}/health`), 'no new connection after close');

      const hurried = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0, closeGraceMs: 20 });
      const cut = openaiClient(hurried).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
      while (upstream.requests.length === 1) await new Promise((resolve) => setTimeout(resolve, 5));
      await hurried.close();
      await assert.rejects(cut, (error: unknown) => error instanceof OpenAI.APIConnectionError);
    } finally {
      await upstream.close();
    }
  });

  test('bad options are refused with InvalidOptionError', () => {
    assert.throws(
      () => createModelProxy({ upstream: 'not a url', breaker: new AgentBreaker() }),
      (e: unknown) => InvalidOptionError.isInstance(e) && /upstream/.test((e as Error).message),
    );
    assert.throws(() => createModelProxy({ upstream: 'ftp://x', breaker: new AgentBreaker() }), InvalidOptionError);
    assert.throws(
      () => createModelProxy({ upstream: 'http://127.0.0.1:1/v1', breaker: new AgentBreaker(), maxRequestBytes: 0 }),
      (e: unknown) => InvalidOptionError.isInstance(e) && /maxRequestBytes/.test((e as Error).message),
    );
    // fetch cannot send a URL with credentials: refused at once, and the password is not repeated.
    for (const upstream of ['http://user:s3cretUP-42@127.0.0.1:1/v1', 'http://user:s3cretUP-42@[bad/v1']) {
      assert.throws(
        () => createModelProxy({ upstream, breaker: new AgentBreaker() }),
        (e: unknown) => InvalidOptionError.isInstance(e) && /upstream/.test((e as Error).message) && !(e as Error).message.includes('s3cretUP'),
      );
    }
    assert.throws(
      () => createModelProxy({ upstream: 'http://127.0.0.1:1/v1', breaker: {} as AgentBreaker }),
      (e: unknown) => GovernorError.isInstance(e) && /breaker/.test((e as Error).message),
    );
  });
});

describe('governor proxy: compressed request bodies', () => {
  /** A fetch that sends every body compressed, as Codex sends zstd. */
  const compressing =
    (encoding: string, compress: (body: Buffer) => Buffer): typeof fetch =>
    (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('content-encoding', encoding);
      const body = typeof init?.body === 'string' ? compress(Buffer.from(init.body)) : init?.body;
      return fetch(input, { ...init, headers, body: body as RequestInit['body'] });
    };
  const encodings: Array<[string, (body: Buffer) => Buffer]> = [
    ['gzip', (b) => zlib.gzipSync(b)],
    ['br', (b) => zlib.brotliCompressSync(b)],
    ['deflate', (b) => zlib.deflateSync(b)],
  ];
  const zstd = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
  if (zstd !== undefined) encodings.push(['zstd', zstd]);

  async function verdicts(client: OpenAI): Promise<string[]> {
    const messages: Message[] = [
      { role: 'system', content: 'You book travel.' },
      { role: 'user', content: 'Find me a flight to Oslo.' },
    ];
    const seen: string[] = [];
    for (let i = 0; i < 7; i += 1) seen.push(await verdictOf(agentRound(client, messages, false)));
    return seen;
  }

  test('a looping client that compresses what it sends is judged as one that does not: steered, blocked, stopped, refused', async () => {
    const plain = await rig(SPIRAL);
    const expected = await verdicts(openaiClient(plain.proxy)).finally(() => plain.close());
    assert.ok(expected.includes('stop') && expected.at(-1) === 'refused', expected.join(' '));
    for (const [encoding, compress] of encodings) {
      const r = await rig(SPIRAL);
      try {
        const client = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0, fetch: compressing(encoding, compress) });
        assert.deepEqual(await verdicts(client), expected, encoding);
      } finally {
        await r.close();
      }
    }
  });

  test('a body the proxy cannot decode is refused in the API format, not passed on unjudged', async () => {
    const upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }] }).start();
    await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0, maxRequestBytes: 4096 });
    try {
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const send = (encoding: string, bytes: Uint8Array) =>
        fetch(`${proxy.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          body: bytes,
        });
      const unknown = await send('compress', Buffer.from(body));
      assert.equal(unknown.status, 415);
      assert.match(((await unknown.json()) as { error: { message: string } }).error.message, /Content-Encoding "compress" is not one that can be decoded/);
      const corrupt = await send('gzip', Buffer.from('not gzip at all'));
      assert.equal(corrupt.status, 400);
      // Small on the wire, past the limit once decoded.
      const bomb = await send('gzip', zlib.gzipSync(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] })));
      assert.equal(bomb.status, 413);
      assert.equal(upstream.requests.length, 0);
      const fine = await send('gzip', zlib.gzipSync(body));
      assert.equal(fine.status, 200);
    } finally {
      await upstream.close();
    }
  });
});

describe('two proxies sharing one Redis store', () => {
  let url: string;
  const clients: RedisBreakerStore[] = [];
  before(async () => {
    url = await requireRedis();
  });
  after(async () => {
    for (const store of clients) await store.close();
  });

  test('trip together on one session', async () => {
    const keyPrefix = `governor:test:proxy:${randomUUID()}:`;
    const breaker = (): AgentBreaker => {
      const store = new RedisBreakerStore({ url, keyPrefix });
      clients.push(store);
      // As `governor proxy --store` sets it: replicas behind one balancer read the shared state on every check.
      return new AgentBreaker({ store, checkFreshnessMs: 0 });
    };
    const upstream = await new ScriptedModelServer({ script: SPIRAL, onExhausted: 'repeat-last' }).start();
    const a = await startModelProxy({ upstream: upstream.baseURL, breaker: breaker(), port: 0 });
    const b = await startModelProxy({ upstream: upstream.baseURL, breaker: breaker(), port: 0 });
    try {
      const session = { 'x-governor-session': `trip-${randomUUID()}` };
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const replicas = [openaiClient(a, session), openaiClient(b, session)];
      const seen: string[] = [];
      let stoppedOn = -1;
      for (let i = 0; i < 8 && stoppedOn < 0; i += 1) {
        const round = await agentRound(replicas[i % 2]!, messages, false);
        seen.push(round.message.tool_calls?.length ? 'call' : round.stopHeader ? `stop:${round.stopHeader}` : 'text');
        if (round.stopHeader !== null) stoppedOn = i;
      }
      // Alternating replicas see one session: the same escalation as one proxy would.
      assert.deepEqual(seen, ['call', 'call', 'call', 'text', 'stop:tool_spiral']);
      // The steer replica a decided on the third call reached the next request, which went through b.
      const notes = upstream.requests.map((r) => JSON.stringify(r.body).includes('[governor]'));
      assert.deepEqual(notes.slice(0, 4), [false, false, false, true]);
      // Both replicas now refuse the session.
      for (const client of replicas) {
        await assert.rejects(client.chat.completions.create({ model: 'm', messages }), (e: unknown) => e instanceof OpenAI.PermissionDeniedError);
      }
      // Another session on the same store is untouched.
      const other = await openaiClient(b, { 'x-governor-session': `other-${randomUUID()}` }).chat.completions.create({ model: 'm', messages });
      assert.equal(other.choices[0]!.finish_reason, 'tool_calls');
    } finally {
      await a.close();
      await b.close();
      await upstream.close();
    }
  });

  test('what the store has forgotten of a session, every replica has forgotten: a user turn asked again long after is observed on either', async () => {
    const keyPrefix = `governor:test:proxy:${randomUUID()}:`;
    const stores = [new RedisBreakerStore({ url, keyPrefix }), new RedisBreakerStore({ url, keyPrefix })];
    clients.push(...stores);
    const breakers = stores.map((store) => new AgentBreaker({ store, checkFreshnessMs: 0 }));
    const upstream = await new ScriptedModelServer({ script: [{ text: 'Noted.' }], onExhausted: 'repeat-last' }).start();
    const [a, b] = await Promise.all(breakers.map((breaker) => startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 })));
    try {
      const user = `user-${randomUUID()}`;
      const ask = (replica: ModelProxyServer, messages: Message[]) => openaiClient(replica).chat.completions.create({ model: 'm', messages, user });
      const question: Message = { role: 'user', content: 'What does src/a.py do?' };
      await ask(a!, [question]);
      // A long conversation of the same user on the other replica: far more new turns than a session's seen keys.
      const messages: Message[] = [];
      for (let i = 0; i < 40; i += 1) {
        messages.push({ role: 'user', content: `Step ${i}: and the next file?` });
        messages.push((await ask(b!, messages)).choices[0]!.message as Message);
      }
      const session = proxySessionId(new Headers({ authorization: 'Bearer sk-test-not-a-real-key' }), { model: 'm', messages: [question], user }, openaiWire);
      assert.match(session, new RegExp(`^user:${user}@[0-9a-f]{12}$`));
      const before = (await breakers[0]!.snapshot(session)).counters.userEvents;
      assert.equal(before, 41);
      // The first question again, in a fresh conversation, on the replica that saw it first.
      await ask(a!, [question]);
      assert.equal((await breakers[0]!.snapshot(session)).counters.userEvents, 42);
    } finally {
      await a!.close();
      await b!.close();
      await upstream.close();
    }
  });

  test("a load balancer's retry sent to the other replica gets the original's verdict, not the next rung", async () => {
    const keyPrefix = `governor:test:proxy:${randomUUID()}:`;
    const stores = [new RedisBreakerStore({ url, keyPrefix }), new RedisBreakerStore({ url, keyPrefix })];
    clients.push(...stores);
    const breakers = stores.map((store) => new AgentBreaker({ store, checkFreshnessMs: 0 }));
    const upstream = await new ScriptedModelServer({ script: SPIRAL, onExhausted: 'repeat-last' }).start();
    const [a, b] = await Promise.all(breakers.map((breaker) => startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 })));
    try {
      const session = { 'x-governor-session': `retried-${randomUUID()}` };
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      assert.deepEqual(await retriedRounds(openaiClient(a!, session), openaiClient(b!, session), messages, false), [
        'call/call',
        'call/call',
        'call/call',
        'block/block',
        'stop/refused',
      ]);
      assert.match(JSON.stringify(upstream.requests[6]!.body.messages), /No flights found\.\\n\\n\[governor\] .*search/);
    } finally {
      await a!.close();
      await b!.close();
      await upstream.close();
    }
  });

  test("a client's retry that lands on the other replica is observed once", async () => {
    const keyPrefix = `governor:test:proxy:${randomUUID()}:`;
    const stores = [new RedisBreakerStore({ url, keyPrefix }), new RedisBreakerStore({ url, keyPrefix })];
    clients.push(...stores);
    const breakers = stores.map((store) => new AgentBreaker({ store, checkFreshnessMs: 0 }));
    // Each request is first refused upstream (rate limited), and the client retries it; the balancer sends the retry to the other replica.
    const busy: ScriptedTurn = { error: { status: 429, retryAfterMs: 1 } };
    const runTests: ScriptedTurn = { toolCalls: [{ name: 'run_tests', arguments: { path: 'tests/' } }] };
    const upstream = await new ScriptedModelServer({ script: [busy, runTests, busy, runTests, busy, { text: 'All green now.' }] }).start();
    const replicas = await Promise.all(breakers.map((breaker) => startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 })));
    try {
      const session = `retry-${randomUUID()}`;
      const client = new OpenAI({
        baseURL: `${replicas[0]!.url}/v1`,
        apiKey: 'sk-test-not-a-real-key',
        maxRetries: 2,
        defaultHeaders: { 'x-governor-session': session },
        // Every attempt, a retry too, goes to the next replica.
        fetch: roundRobinFetch(replicas),
      });
      const messages: Message[] = [{ role: 'user', content: 'Make the test suite pass.' }];
      for (let round = 0; round < 3; round += 1) {
        const { choices } = await client.chat.completions.create({
          model: 'm',
          messages,
          tools: [{ type: 'function', function: { name: 'run_tests', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
        });
        const message = choices[0]!.message;
        messages.push(message as Message);
        for (const call of message.tool_calls ?? [])
          messages.push({ role: 'tool', tool_call_id: call.id, content: round === 0 ? '3 failed, 41 passed' : '44 passed' });
      }
      assert.equal(messages.at(-1)!.content, 'All green now.');
      assert.equal(upstream.requests.length, 6, 'every request was retried once, on the other replica');
      // Two test runs with different results and one user turn: nothing to steer, and the session counts each once.
      assert.equal(upstream.requests.filter((r) => JSON.stringify(r.body).includes('[governor]')).length, 0);
      const { counters } = await breakers[0]!.snapshot(session);
      assert.equal(counters.userEvents, 1);
      assert.equal(counters.toolCalls, 2);
    } finally {
      for (const replica of replicas) await replica.close();
      await upstream.close();
    }
  });
});
