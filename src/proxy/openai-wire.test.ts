import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { isStepCount, streamText } from 'ai';
import OpenAI from 'openai';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { startModelProxy, type ModelProxyServer } from './index.ts';
import { flightTools } from './test-support/flight-tools.ts';

/*
 * A hand-written upstream: the stand-in model server streams the role in a
 * chunk of its own and each call in chunks of their own, and these tests need
 * the shapes other servers stream.
 */

type Chunk = Record<string, unknown>;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

interface Call {
  readonly id: string;
  readonly name: string;
  readonly args: string;
}

/**
 * How an answer is streamed: `calls` as OpenAI's API streams it (the role
 * comes with the first call's chunk when there is no text, each call in a
 * chunk of its own, the finish reason alone); `whole` in one chunk, its
 * role, text, calls and finish reason together, as some OpenAI-compatible
 * servers stream a short answer.
 */
type Shape = 'calls' | 'whole';

/** The text of an answer in the shape: only the answer in one chunk has some, with its calls. */
const textOf = (shape: Shape): string | null => (shape === 'whole' ? 'Checking.' : null);

const search = (id: string): Call => ({ id, name: 'search', args: '{"q":"flights to Oslo"}' });
const weather = (id: string, city: string): Call => ({ id, name: 'weather', args: JSON.stringify({ city }) });

/** The second answer asks for the first one's search twice more, and for the weather in two cities. */
const ANSWERS: readonly (readonly Call[])[] = [
  [search('call_1')],
  [search('call_2'), weather('call_3', 'Bergen'), search('call_4'), weather('call_5', 'Tromsø')],
];

/** A breaker that blocks (or stops on) a call the second time it is asked for alike. */
const breakerFor = (verdict: 'block' | 'stop') => new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: [verdict] } });

/**
 * How a streamed answer after the first ends: `finish` as OpenAI's API ends
 * it (the finish reason, the usage chunk, `[DONE]`); `done` and `close`
 * without any finish reason, as a server that cuts its answer short but
 * closes the stream cleanly does, with `[DONE]` or without.
 */
type End = 'finish' | 'done' | 'close';

/**
 * An upstream that answers a request with `ANSWERS[n]`, n the assistant
 * messages it brings, streamed in `shape` when asked to, the first answer
 * finished and the later ones ended as `end` says.
 */
function upstreamOf(shape: Shape, end: End = 'finish'): typeof fetch {
  const upstream = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = JSON.parse(await new Response(init?.body).text()) as { stream?: boolean; messages: Message[] };
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const calls = ANSWERS[Math.min(turn, ANSWERS.length - 1)]!;
    const usage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 };
    const base = { id: `chatcmpl-${turn}`, created: 1_700_000_000, model: 'gpt-test' };
    const wire = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
    if (request.stream !== true) {
      const message = { role: 'assistant', content: textOf(shape), refusal: null, tool_calls: wire };
      return Response.json({ ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }], usage });
    }
    const chunk = (delta: Chunk, finish: string | null = null): Chunk => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    const chunks: Chunk[] = [];
    const finished = end === 'finish' || turn === 0;
    const finish = finished ? 'tool_calls' : null;
    if (shape === 'whole') {
      chunks.push(chunk({ role: 'assistant', content: textOf(shape), tool_calls: wire.map((c, index) => ({ index, ...c })) }, finish));
    } else {
      calls.forEach((c, index) => {
        const head = { index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } };
        chunks.push(chunk(index === 0 ? { role: 'assistant', content: null, tool_calls: [head], refusal: null } : { tool_calls: [head] }));
        const half = Math.floor(c.args.length / 2);
        for (const piece of [c.args.slice(0, half), c.args.slice(half)]) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      });
      if (finished) chunks.push(chunk({}, 'tool_calls'), { ...base, object: 'chat.completion.chunk', choices: [], usage });
    }
    const body = `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}${finished || end === 'done' ? 'data: [DONE]\n\n' : ''}`;
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return upstream as typeof fetch;
}

function client(proxy: ModelProxyServer, session: string): OpenAI {
  return new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0, defaultHeaders: { 'x-governor-session': session } });
}

/**
 * The second answer of a conversation, as the official SDK reads it: through
 * its stream helper, which collects the calls in an array by their index and
 * needs the message's role, or not streamed.
 */
async function secondAnswer(
  proxy: ModelProxyServer,
  session: string,
  stream: boolean,
): Promise<OpenAI.Chat.Completions.ChatCompletionMessage & { finish: string }> {
  const openai = client(proxy, session);
  const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo, and the weather there.' }];
  const ask = async () => {
    const choice = stream
      ? (await openai.chat.completions.stream({ model: 'gpt-test', messages }).finalChatCompletion()).choices[0]!
      : (await openai.chat.completions.create({ model: 'gpt-test', messages })).choices[0]!;
    return { ...choice.message, finish: choice.finish_reason };
  };
  const first = await ask();
  messages.push(first as Message);
  for (const call of first.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: 'No flights found.' });
  const second = await ask();
  // The stream helper adds what it parsed of the message.
  const { parsed: _parsed, ...message } = second as typeof second & { parsed?: unknown };
  return message;
}

/** The calls of a message, a hole in the array read as one. */
const calls = (message: OpenAI.Chat.Completions.ChatCompletionMessage) =>
  Array.from(message.tool_calls ?? [], (c) => (c === undefined ? 'hole' : c.type === 'function' ? `${c.id} ${c.function.name} ${c.function.arguments}` : c.id));

for (const shape of ['calls', 'whole'] as const) {
  describe(`governor proxy with the openai client's stream helper, an answer streamed ${shape === 'calls' ? 'call by call' : 'in one chunk'}`, () => {
    test('calls blocked among kept ones: the kept calls are numbered from 0 with their whole arguments, the message has its role and the explanation, as not streamed', async () => {
      await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: breakerFor('block'), port: 0, fetch: upstreamOf(shape) });
      const streamed = await secondAnswer(proxy, 'block-streamed', true);
      assert.equal(streamed.role, 'assistant');
      assert.deepEqual(calls(streamed), ['call_3 weather {"city":"Bergen"}', 'call_5 weather {"city":"Tromsø"}']);
      // The text that came with the calls once, then the explanation of each call taken out.
      assert.ok(streamed.content?.startsWith(`${textOf(shape) === null ? '' : 'Checking.\n\n'}[governor] The call to search was not run`));
      assert.equal(streamed.content?.match(/Checking\./g)?.length ?? 0, textOf(shape) === null ? 0 : 1);
      assert.equal(streamed.content?.match(/\[governor\] The call to search was not run/g)?.length, 2);
      assert.equal(streamed.finish, 'tool_calls', 'the kept calls are still asked for');
      assert.deepEqual(streamed, await secondAnswer(proxy, 'block-whole', false));
    });

    test('a stop: the message is the stop message alone, with its role, and no call, as not streamed', async () => {
      await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: breakerFor('stop'), port: 0, fetch: upstreamOf(shape) });
      const streamed = await secondAnswer(proxy, 'stop-streamed', true);
      assert.equal(streamed.role, 'assistant');
      assert.equal(streamed.tool_calls, undefined);
      assert.match(streamed.content ?? '', /^\[governor\] This run was stopped by the agent breaker \(tool_spiral\)/);
      assert.equal(streamed.finish, 'stop');
      const whole = await secondAnswer(proxy, 'stop-whole', false);
      // A message without a refusal says `refusal: null`, as the API writes it and the SDK's type has it (`string | null`).
      assert.equal(whole.refusal, null);
      assert.deepEqual(streamed, whole);
    });
  });
}

describe('governor proxy with the AI SDK OpenAI-compatible provider, an answer streamed in one chunk', () => {
  test('streamText: the kept calls run, the blocked ones do not, and the explanation is in the text', async () => {
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: breakerFor('block'), port: 0, fetch: upstreamOf('whole') });
    const provider = createOpenAICompatible({ name: 'proxied', baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    const { ran, tools } = flightTools();
    const result = streamText({
      model: provider('gpt-test'),
      prompt: 'Find me a flight to Oslo, and the weather there.',
      tools,
      stopWhen: isStepCount(2),
    });
    const steps = await result.steps;
    assert.deepEqual(ran, ['search flights to Oslo', 'weather Bergen', 'weather Tromsø']);
    assert.match(steps[1]!.text, /^Checking\.\n\n\[governor\] The call to search was not run/);
    assert.equal(steps[1]!.finishReason, 'tool-calls');
  });
});

/** The first answer of a conversation (not streamed) and its calls' results: what the second answer is asked for with. */
async function afterFirst(openai: OpenAI): Promise<Message[]> {
  const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo, and the weather there.' }];
  const first = (await openai.chat.completions.create({ model: 'gpt-test', messages })).choices[0]!.message;
  messages.push(first);
  for (const call of first.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: 'No flights found.' });
  return messages;
}

/** The second answer of a conversation as its chunks come: its text, its calls (`index id`) and the finish reasons sent. */
async function secondChunks(proxy: ModelProxyServer, session: string): Promise<{ text: string; calls: string[]; finishes: string[] }> {
  const openai = client(proxy, session);
  const messages = await afterFirst(openai);
  let text = '';
  const calls: string[] = [];
  const finishes: string[] = [];
  for await (const chunk of await openai.chat.completions.create({ model: 'gpt-test', messages, stream: true })) {
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    text += choice.delta.content ?? '';
    for (const call of choice.delta.tool_calls ?? []) if (call.id !== undefined) calls.push(`${call.index} ${call.id}`);
    if (choice.finish_reason != null) finishes.push(choice.finish_reason);
  }
  return { text, calls, finishes };
}

for (const shape of ['calls', 'whole'] as const) {
  for (const end of ['done', 'close'] as const) {
    describe(`governor proxy with a Chat Completions stream that ends without a finish reason (${shape === 'calls' ? 'call by call' : 'in one chunk'}, ${end === 'done' ? 'then [DONE]' : 'the connection closed'})`, () => {
      test('a block: the explanation is still sent, after the kept calls, and no finish the upstream did not send', async () => {
        await using proxy = await startModelProxy({
          upstream: 'http://upstream.test/v1',
          breaker: breakerFor('block'),
          port: 0,
          fetch: upstreamOf(shape, end),
        });
        const { text, calls: sent, finishes } = await secondChunks(proxy, 'block-unfinished');
        assert.deepEqual(sent, ['0 call_3', '1 call_5']);
        assert.ok(text.startsWith(`${textOf(shape) === null ? '' : 'Checking.\n\n'}[governor] The call to search was not run`), text);
        assert.equal(text.match(/\[governor\] The call to search was not run/g)?.length, 2);
        assert.deepEqual(finishes, []);
      });

      test("a stop: the stop message is a whole answer of the proxy's own, which the stream helper reads", async () => {
        await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: breakerFor('stop'), port: 0, fetch: upstreamOf(shape, end) });
        const openai = client(proxy, 'stop-unfinished');
        const messages = await afterFirst(openai);
        const [choice] = (await openai.chat.completions.stream({ model: 'gpt-test', messages }).finalChatCompletion()).choices;
        assert.equal(choice?.message.role, 'assistant');
        assert.equal(choice?.message.tool_calls, undefined);
        assert.match(choice?.message.content ?? '', /^\[governor\] This run was stopped by the agent breaker \(tool_spiral\)/);
        assert.equal(choice?.finish_reason, 'stop');
      });
    });
  }
}

describe('governor proxy with the AI SDK OpenAI provider, a stream that ends without a finish reason', () => {
  test('streamText: the blocked calls do not run and the explanation is in the text of the interrupted step', async () => {
    await using proxy = await startModelProxy({
      upstream: 'http://upstream.test/v1',
      breaker: breakerFor('block'),
      port: 0,
      fetch: upstreamOf('calls', 'done'),
    });
    const provider = createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key' }).chat;
    const { ran, tools } = flightTools();
    const result = streamText({
      model: provider('gpt-test'),
      prompt: 'Find me a flight to Oslo, and the weather there.',
      tools,
      stopWhen: isStepCount(2),
    });
    const steps = await result.steps;
    assert.deepEqual(
      ran.filter((what) => what.startsWith('search')),
      ['search flights to Oslo'],
      'the blocked searches are not run',
    );
    assert.match(steps[1]!.text, /^\[governor\] The call to search was not run/);
    assert.equal(steps[1]!.finishReason, 'interrupted', 'the answer still ends as the upstream ended it');
  });
});
