import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { anthropicWire } from './anthropic-wire.ts';
import { startModelProxy, type ModelProxyServer } from './index.ts';

/*
 * A hand-written upstream: the stand-in model server puts an answer's server
 * tool blocks before its client calls, and these tests need them after.
 */

type Block = Record<string, unknown>;

const SOURCES = ['https://fares.example/oslo', 'https://air.example/osl'];

/** A web search the API ran: its call, then what it found. */
function webSearch(id: string, query: string): Block[] {
  return [
    { type: 'server_tool_use', id, name: 'web_search', input: { query } },
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: SOURCES.map((url) => ({ type: 'web_search_result', url, title: url, encrypted_content: 'enc', page_age: null })),
    },
  ];
}

function clientCall(id: string, name: string, input: Block): Block {
  return { type: 'tool_use', id, name, input };
}

/** The body of a Messages answer with `content`. */
function message(content: readonly Block[]): Block {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: content.some((b) => b['type'] === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 50, output_tokens: 20 },
  };
}

function sse(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * How a stream ends: as the API ends it (`message_delta`, then
 * `message_stop`), without the `message_delta` (as some servers of the API's
 * format do), or cut short before both.
 */
type Ending = 'complete' | 'no message_delta' | 'cut short';

/** The same answer as the API streams it: each block started empty, filled by its deltas, stopped; then its end. */
function streamOf(answer: Block, ending: Ending = 'complete'): string {
  const content = answer['content'] as Block[];
  const events = [sse('message_start', { type: 'message_start', message: { ...answer, content: [], stop_reason: null } })];
  for (const [index, block] of content.entries()) {
    let start = block;
    const deltas: Block[] = [];
    if (block['type'] === 'text') {
      start = { type: 'text', text: '' };
      deltas.push({ type: 'text_delta', text: block['text'] });
    } else if (block['type'] === 'thinking') {
      start = { type: 'thinking', thinking: '' };
      deltas.push({ type: 'thinking_delta', thinking: block['thinking'] }, { type: 'signature_delta', signature: block['signature'] });
    } else if (block['type'] === 'tool_use' || block['type'] === 'server_tool_use') {
      start = { ...block, input: {} };
      const json = JSON.stringify(block['input']);
      const half = Math.floor(json.length / 2);
      for (const piece of [json.slice(0, half), json.slice(half)]) deltas.push({ type: 'input_json_delta', partial_json: piece });
    }
    events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: start }));
    for (const delta of deltas) events.push(sse('content_block_delta', { type: 'content_block_delta', index, delta }));
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  }
  if (ending === 'complete') {
    events.push(
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: answer['stop_reason'], stop_sequence: null }, usage: { output_tokens: 20 } }),
    );
  }
  if (ending !== 'cut short') events.push(sse('message_stop', { type: 'message_stop' }));
  return events.join('');
}

/**
 * An upstream that answers a request with `answers[n]`, n the assistant
 * messages it brings (the last again after), streamed when asked to: the last
 * of them ending as `ending` says.
 */
function upstreamOf(answers: readonly (readonly Block[])[], ending: Ending = 'complete'): typeof fetch {
  const upstream = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = JSON.parse(await new Response(init?.body).text()) as { stream?: boolean; messages: { role: string }[] };
    const turn = Math.min(request.messages.filter((m) => m.role === 'assistant').length, answers.length - 1);
    const answer = message(answers[turn]!);
    if (request.stream !== true) return Response.json(answer);
    return new Response(streamOf(answer, turn === answers.length - 1 ? ending : 'complete'), { headers: { 'content-type': 'text/event-stream' } });
  };
  return upstream as typeof fetch;
}

interface StreamEvent {
  readonly type: string;
  readonly index?: number;
  readonly content_block?: Block;
  readonly delta?: Record<string, string>;
  readonly usage?: Record<string, number>;
}

/** A streamed answer as a client reads it (see {@link readStream}). */
interface ReadAnswer {
  readonly content: Block[];
  /** The `message_delta`'s, when one came. */
  readonly stopReason: unknown;
  /** The `message_delta`'s `usage.output_tokens`, when one came. */
  readonly outputTokens: unknown;
  /** Whether `message_stop` came: Anthropic's SDK has a final message only then. */
  readonly ended: boolean;
}

/**
 * The message a client reads from a streamed answer, read as Anthropic's own
 * SDK reads it (a block is pushed when it starts, a delta goes to the block
 * at its index, the message is final at `message_stop`) and checked on the
 * way: blocks are numbered 0, 1, 2… in order, one open at a time, each
 * started, filled and stopped, nothing after `message_stop`.
 */
function readStream(body: string): ReadAnswer {
  const content: Block[] = [];
  const json = new Map<number, string>();
  let open: number | undefined;
  let stopReason: unknown;
  let outputTokens: unknown;
  let ended = false;
  for (const chunk of body.split('\n\n')) {
    const data = chunk.split('\n').find((line) => line.startsWith('data: '));
    if (data === undefined) continue;
    const event = JSON.parse(data.slice('data: '.length)) as StreamEvent;
    // The SDK's final message is the one message_stop ended: whatever came after is not in it.
    assert.equal(ended, false, `nothing comes after message_stop (${event.type} did)`);
    if (event.type === 'content_block_start') {
      assert.equal(open, undefined, 'a block starts after the one before stopped');
      assert.equal(event.index, content.length, 'blocks are numbered in order, from 0, without a gap');
      content.push(structuredClone(event.content_block!));
      open = event.index;
    } else if (event.type === 'content_block_delta') {
      assert.equal(event.index, open, 'a delta belongs to the open block');
      const block = content[event.index!]!;
      const delta = event.delta!;
      if (delta['type'] === 'text_delta') block['text'] = String(block['text']) + delta['text'];
      if (delta['type'] === 'thinking_delta') block['thinking'] = String(block['thinking']) + delta['thinking'];
      if (delta['type'] === 'signature_delta') block['signature'] = delta['signature'];
      if (delta['type'] === 'input_json_delta') json.set(event.index!, (json.get(event.index!) ?? '') + delta['partial_json']);
    } else if (event.type === 'content_block_stop') {
      assert.equal(event.index, open, 'the open block stops');
      const input = json.get(open!);
      if (input !== undefined) content[open!]!['input'] = JSON.parse(input) as unknown;
      open = undefined;
    } else if (event.type === 'message_delta') {
      stopReason = event.delta!['stop_reason'];
      // The SDK reads it unguarded: a message_delta without usage throws there.
      outputTokens = event.usage!['output_tokens'];
    } else if (event.type === 'message_stop') {
      ended = true;
    }
  }
  assert.equal(open, undefined, 'every block stopped');
  return { content, stopReason, outputTokens, ended };
}

function ask(proxy: ModelProxyServer, session: string, stream: boolean): Promise<Response> {
  return fetch(`${proxy.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key', 'x-governor-session': session },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 256,
      stream,
      messages: [{ role: 'user', content: 'Book me the cheapest flight to Oslo in March.' }],
      tools: [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
        { name: 'book', input_schema: { type: 'object', properties: { flight: { type: 'string' } } } },
      ],
    }),
  });
}

const notText = (block: Block) => block['type'] !== 'text';

/** A client-side tool that counts its runs (a stopped or blocked answer must leave it unrun), answering `answer`. */
function countedTool(argument: 'flight' | 'q', answer: string) {
  const counted = {
    runs: 0,
    tool: tool({
      inputSchema: z.object({ [argument]: z.string() }),
      execute: async () => {
        counted.runs += 1;
        return answer;
      },
    }),
  };
  return counted;
}

describe('governor proxy with the Anthropic Messages API: a stop keeps what ran after a client call', () => {
  /**
   * The model asks for the client's `book`, then thinks and runs the same web
   * search twice (a breaker that stops the second alike search), then says
   * more: the searches ran and were judged, the booking never will.
   */
  const answer: Block[] = [
    { type: 'text', text: 'Let me book it.' },
    clientCall('toolu_book', 'book', { flight: 'OS 123' }),
    { type: 'thinking', thinking: 'The fare may have changed since.', signature: 'sig_1' },
    ...webSearch('srvtoolu_1', 'cheapest flight to Oslo in March'),
    ...webSearch('srvtoolu_2', 'cheapest flights Oslo March'),
    { type: 'text', text: 'The fares are unchanged.' },
  ];
  const ran = answer.filter((block) => block['type'] !== 'text' && block['type'] !== 'tool_use');
  const stopsSecondSearch = () => new AgentBreaker({ ragFixation: { consecutive: 2, escalation: ['stop'] } });

  test('raw SSE: the thinking and the searches after the client call stay, in order and numbered on; the call and the later text go; as in the answer not streamed', async () => {
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: stopsSecondSearch(), port: 0, fetch: upstreamOf([answer]) });
    const streamed = await ask(proxy, 'stop-streamed', true);
    assert.equal(streamed.status, 200);
    const { content, stopReason } = readStream(await streamed.text());
    assert.deepEqual(
      content.map((b) => b['type']),
      ['text', 'thinking', 'server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'],
    );
    // The text before the call had gone out before the call was seen; the stop message ends the answer.
    assert.equal(content[0]!['text'], 'Let me book it.');
    assert.match(String(content.at(-1)!['text']), /^\[governor\] This run was stopped by the agent breaker \(rag_fixation\)/);
    assert.equal(stopReason, 'end_turn');
    assert.deepEqual(content.filter(notText), ran);

    const whole = await ask(proxy, 'stop-whole', false);
    assert.equal(whole.headers.get('x-governor-stop'), 'rag_fixation');
    const body = (await whole.json()) as { content: Block[]; stop_reason: string };
    assert.deepEqual(body.content.slice(0, -1), ran);
    assert.deepEqual(body.content.filter(notText), content.filter(notText), 'the same blocks kept, streamed or not');
    assert.equal(body.stop_reason, 'end_turn');
  });

  test('@ai-sdk/anthropic: streamText shows the searches, their results and the reasoning of the stopped answer, as generateText does; book is not run', async () => {
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: stopsSecondSearch(), port: 0, fetch: upstreamOf([answer]) });
    const parts = async (mode: 'generate' | 'stream') => {
      const anthropic = createAnthropic({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-ant-test-not-a-real-key', headers: { 'x-governor-session': `sdk-${mode}` } });
      const booking = countedTool('flight', 'booked');
      const options = {
        model: anthropic('claude-test'),
        maxOutputTokens: 256,
        prompt: 'Book me the cheapest flight to Oslo in March.',
        tools: { web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }), book: booking.tool },
      };
      const result = mode === 'generate' ? await generateText(options) : streamText(options);
      assert.match(await result.text, /stopped by the agent breaker \(rag_fixation\)/);
      assert.equal(booking.runs, 0);
      const [assistant] = (await result.response).messages;
      assert.equal(assistant?.role, 'assistant');
      assert.ok(Array.isArray(assistant.content));
      // A streamed answer also brings the provider's `custom` part of its message start.
      return assistant.content
        .filter((p) => p.type !== 'text' && p.type !== 'custom')
        .map((p) => (p.type === 'tool-call' || p.type === 'tool-result' ? `${p.type} ${p.toolName} ${p.toolCallId}` : p.type));
    };
    const expected = [
      'reasoning',
      'tool-call web_search srvtoolu_1',
      'tool-result web_search srvtoolu_1',
      'tool-call web_search srvtoolu_2',
      'tool-result web_search srvtoolu_2',
    ];
    assert.deepEqual(await parts('stream'), expected);
    assert.deepEqual(await parts('generate'), expected);
  });

  test('raw SSE: calls blocked before a kept call and a search leave the blocks numbered in order, the explanation where the first stood', async () => {
    // The second identical search is blocked, not stopped: the first answer asks it once, the second answer twice more.
    const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['block'] } });
    const search = (id: string) => clientCall(id, 'lookup', { q: 'fares to Oslo' });
    const second: Block[] = [
      { type: 'text', text: 'Once more.' },
      search('toolu_2'),
      search('toolu_3'),
      clientCall('toolu_book', 'book', { flight: 'OS 123' }),
      ...webSearch('srvtoolu_1', 'Oslo airport transfer'),
    ];
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker, port: 0, fetch: upstreamOf([[search('toolu_1')], second]) });
    const request = (messages: unknown[]) =>
      fetch(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key', 'x-governor-session': 'blocked' },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 256, stream: true, messages }),
      });
    const messages: unknown[] = [{ role: 'user', content: 'Find fares to Oslo and book the cheapest.' }];
    const first = readStream(await (await request(messages)).text());
    assert.deepEqual(first.content, [search('toolu_1')]);
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'OS 123: 49 EUR' }] },
    );
    const { content, stopReason } = readStream(await (await request(messages)).text());
    assert.deepEqual(
      content.map((b) => (b['type'] === 'tool_use' ? `tool_use ${String(b['id'])}` : b['type'])),
      ['text', 'text', 'tool_use toolu_book', 'server_tool_use', 'web_search_tool_result'],
    );
    assert.match(String(content[1]!['text']), /^\[governor\] The call to lookup was not run.*\n\n\[governor\] The call to lookup was not run/s);
    assert.deepEqual(content.slice(2), second.slice(3));
    assert.equal(stopReason, 'tool_use', 'the kept call is still asked for');
  });
});

describe('governor proxy with the Anthropic Messages API: a stream that ends without its message_delta', () => {
  /*
   * Some servers of the API's format end a stream with message_stop alone,
   * and a stream cut short has neither. A stop is the proxy's own answer: it
   * ends as the API ends one, whatever the upstream left out. A block changes
   * the upstream's answer and keeps its end, or its lack of one.
   */
  const answer: Block[] = [
    { type: 'text', text: 'Let me book it.' },
    clientCall('toolu_book', 'book', { flight: 'OS 123' }),
    ...webSearch('srvtoolu_1', 'cheapest flight to Oslo in March'),
    ...webSearch('srvtoolu_2', 'cheapest flights Oslo March'),
  ];
  const stopsSecondSearch = () => new AgentBreaker({ ragFixation: { consecutive: 2, escalation: ['stop'] } });

  for (const ending of ['no message_delta', 'cut short'] as const) {
    test(`raw SSE, a stop, the upstream's stream with ${ending}: the stop ends with a message_delta (end_turn, the output tokens known), then message_stop`, async () => {
      await using proxy = await startModelProxy({
        upstream: 'http://upstream.test/v1',
        breaker: stopsSecondSearch(),
        port: 0,
        fetch: upstreamOf([answer], ending),
      });
      const read = readStream(await (await ask(proxy, 'stop', true)).text());
      assert.deepEqual(
        read.content.map((b) => b['type']),
        ['text', 'server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text'],
      );
      assert.match(String(read.content.at(-1)!['text']), /^\[governor\] This run was stopped by the agent breaker \(rag_fixation\)/);
      assert.equal(read.stopReason, 'end_turn');
      assert.equal(read.outputTokens, 20, 'as the message_start counted them');
      assert.equal(read.ended, true);
    });

    test(`@ai-sdk/anthropic streamText, a stop, the upstream's stream with ${ending}: the answer finishes as stopped, with its usage, not as interrupted`, async () => {
      await using proxy = await startModelProxy({
        upstream: 'http://upstream.test/v1',
        breaker: stopsSecondSearch(),
        port: 0,
        fetch: upstreamOf([answer], ending),
      });
      const anthropic = createAnthropic({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-ant-test-not-a-real-key', headers: { 'x-governor-session': 'sdk' } });
      const booking = countedTool('flight', 'booked');
      const result = streamText({
        model: anthropic('claude-test'),
        maxOutputTokens: 256,
        prompt: 'Book me the cheapest flight to Oslo in March.',
        tools: { web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }), book: booking.tool },
      });
      assert.equal(await result.finishReason, 'stop');
      assert.match(await result.text, /\[governor\] This run was stopped by the agent breaker \(rag_fixation\)/);
      const usage = await result.usage;
      assert.deepEqual([usage.inputTokens, usage.outputTokens], [50, 20]);
      assert.equal(booking.runs, 0);
    });
  }

  for (const [ending, finishReason] of [
    ['no message_delta', 'other'],
    ['cut short', 'interrupted'],
  ] as const) {
    test(`raw SSE and @ai-sdk/anthropic streamText, a block of every client call, the stream with ${ending}: the explanation ends the message, which ends as the upstream's did (${finishReason})`, async () => {
      const lookup = (id: string) => clientCall(id, 'lookup', { q: 'fares to Oslo' });
      const breaker = new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: ['block'] } });
      await using proxy = await startModelProxy({
        upstream: 'http://upstream.test/v1',
        breaker,
        port: 0,
        fetch: upstreamOf([[lookup('toolu_1')], [lookup('toolu_2')]], ending),
      });
      const request = (messages: unknown[]) =>
        fetch(`${proxy.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key', 'x-governor-session': 'raw' },
          body: JSON.stringify({ model: 'claude-test', max_tokens: 256, stream: true, messages }),
        });
      const messages: unknown[] = [{ role: 'user', content: 'Find fares to Oslo.' }];
      messages.push(
        { role: 'assistant', content: readStream(await (await request(messages)).text()).content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'OS 123: 49 EUR' }] },
      );
      const read = readStream(await (await request(messages)).text());
      assert.equal(read.content.length, 1);
      assert.match(String(read.content[0]!['text']), /^\[governor\] The call to lookup was not run/);
      assert.equal(read.stopReason, undefined);
      assert.equal(read.ended, ending === 'no message_delta');

      const anthropic = createAnthropic({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-ant-test-not-a-real-key', headers: { 'x-governor-session': 'sdk' } });
      const fares = countedTool('q', 'OS 123: 49 EUR');
      const result = streamText({
        model: anthropic('claude-test'),
        maxOutputTokens: 256,
        prompt: 'Find fares to Oslo.',
        tools: {
          lookup: fares.tool,
        },
        stopWhen: isStepCount(5),
      });
      const steps = await result.steps;
      assert.equal(fares.runs, 1);
      assert.equal(steps.length, 2);
      assert.equal(steps[1]!.finishReason, finishReason);
      assert.match(steps[1]!.text, /^\[governor\] The call to lookup was not run/);
    });
  }
});

describe('governor proxy with the Anthropic Messages API: a server tool call waiting on a client call goes with the last of them', () => {
  /*
   * In a turn that also calls one of the client's tools, the API sends a
   * server tool's call without its result: it runs it once the client sends
   * the tool_result back. A stop, or a block of every client call, leaves
   * the client nothing to answer, so the server call never runs.
   */
  const lookup = (id: string) => clientCall(id, 'lookup', { q: 'fares to Oslo' });
  const pending: Block = { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'Oslo airport transfer' } };
  /** A search that ran, the client's lookup asked for a second time alike, and a search that waits on the lookup's result. */
  const second: Block[] = [...webSearch('srvtoolu_1', 'fares to Oslo'), lookup('toolu_2'), pending];
  /** The same with the waiting search before the client call, where a code run that calls a client tool always stands. */
  const pendingFirst: Block[] = [...webSearch('srvtoolu_1', 'fares to Oslo'), pending, lookup('toolu_2')];
  const orders = [
    ['after', second],
    ['before', pendingFirst],
  ] as const;
  const breakerFor = (verdict: 'block' | 'stop') => new AgentBreaker({ toolSpiral: { maxRepeats: 2, maxIdenticalRepeats: 2, escalation: [verdict] } });

  const request = (proxy: ModelProxyServer, session: string, stream: boolean, messages: unknown[]) =>
    fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test-not-a-real-key', 'x-governor-session': session },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 256, stream, messages }),
    });

  test('raw, nothing judged: a search that ran goes on as its result starts, and the text after it before the answer ends; one still waiting at the end goes on whole', async () => {
    const ran = [...webSearch('srvtoolu_1', 'fares to Oslo'), { type: 'text', text: 'Found two fares.' }];
    const whole = streamOf(message([...ran, pending]));
    // The upstream holds the end of its answer until the client has read the text (or a second has passed).
    const cut = whole.indexOf('event: content_block_start\ndata: {"type":"content_block_start","index":3');
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, 1000).unref();
    });
    let endSent = false;
    const upstream = async (): Promise<Response> => {
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(whole.slice(0, cut)));
          await released;
          endSent = true;
          controller.enqueue(new TextEncoder().encode(whole.slice(cut)));
          controller.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    await using proxy = await startModelProxy({ upstream: 'http://upstream.test/v1', breaker: new AgentBreaker(), port: 0, fetch: upstream as typeof fetch });
    const response = await request(proxy, 'pending-unjudged', true, [{ role: 'user', content: 'Find fares to Oslo.' }]);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let read = '';
    let textBeforeEnd = false;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      read += chunk.value;
      if (!textBeforeEnd && read.includes('Found two fares.')) {
        textBeforeEnd = !endSent;
        release();
      }
    }
    assert.equal(textBeforeEnd, true, 'the text after the search was not held to the end');
    const { content, stopReason, ended } = readStream(read);
    assert.deepEqual(content, [...ran, pending]);
    assert.equal(stopReason, 'end_turn');
    assert.equal(ended, true);
  });

  /** The second answer of a conversation, read from the stream or the body. */
  async function secondAnswer(proxy: ModelProxyServer, session: string, stream: boolean): Promise<{ content: Block[]; stopReason: unknown }> {
    const messages: unknown[] = [{ role: 'user', content: 'Find fares to Oslo.' }];
    const first = (await (await request(proxy, session, false, messages)).json()) as { content: Block[] };
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'OS 123: 49 EUR' }] },
    );
    const response = await request(proxy, session, stream, messages);
    if (stream) return readStream(await response.text());
    const body = (await response.json()) as { content: Block[]; stop_reason: string };
    return { content: body.content, stopReason: body.stop_reason };
  }

  for (const [order, answer] of orders) {
    for (const verdict of ['stop', 'block'] as const) {
      test(`raw, streamed or not, ${verdict === 'stop' ? 'a stop' : 'a block of every client call'}, the waiting search ${order} the client call: the search that ran stays, the one waiting goes`, async () => {
        await using proxy = await startModelProxy({
          upstream: 'http://upstream.test/v1',
          breaker: breakerFor(verdict),
          port: 0,
          fetch: upstreamOf([[lookup('toolu_1')], answer]),
        });
        for (const stream of [true, false]) {
          const { content, stopReason } = await secondAnswer(proxy, `pending-${verdict}-${stream ? 'streamed' : 'whole'}`, stream);
          assert.deepEqual(content.filter(notText), webSearch('srvtoolu_1', 'fares to Oslo'), stream ? 'streamed' : 'not streamed');
          assert.match(
            String(content.at(-1)!['text']),
            verdict === 'stop' ? /^\[governor\] This run was stopped/ : /^\[governor\] The call to lookup was not run/,
          );
          assert.equal(stopReason, 'end_turn');
        }
      });
    }
  }

  const book = clientCall('toolu_book', 'book', { flight: 'OS 123' });
  for (const [order, withBooking, streamed, whole] of [
    [
      'after',
      [...webSearch('srvtoolu_1', 'fares to Oslo'), lookup('toolu_2'), book, pending],
      ['server_tool_use srvtoolu_1', 'web_search_tool_result srvtoolu_1', 'text', 'tool_use toolu_book', 'server_tool_use srvtoolu_2'],
      ['server_tool_use srvtoolu_1', 'web_search_tool_result srvtoolu_1', 'tool_use toolu_book', 'server_tool_use srvtoolu_2', 'text'],
    ],
    [
      'before',
      [...webSearch('srvtoolu_1', 'fares to Oslo'), pending, lookup('toolu_2'), book],
      ['server_tool_use srvtoolu_1', 'web_search_tool_result srvtoolu_1', 'server_tool_use srvtoolu_2', 'text', 'tool_use toolu_book'],
      ['server_tool_use srvtoolu_1', 'web_search_tool_result srvtoolu_1', 'server_tool_use srvtoolu_2', 'tool_use toolu_book', 'text'],
    ],
  ] as const) {
    test(`raw, streamed or not, a block that keeps a client call, the waiting search ${order} the calls: it stays, for the API to run once it has the result`, async () => {
      await using proxy = await startModelProxy({
        upstream: 'http://upstream.test/v1',
        breaker: breakerFor('block'),
        port: 0,
        fetch: upstreamOf([[lookup('toolu_1')], withBooking]),
      });
      for (const stream of [true, false]) {
        const { content, stopReason } = await secondAnswer(proxy, `pending-kept-${stream ? 'streamed' : 'whole'}`, stream);
        assert.deepEqual(
          content.map((b) => (b['type'] === 'text' ? 'text' : `${String(b['type'])} ${String(b['id'] ?? b['tool_use_id'])}`)),
          stream ? streamed : whole,
        );
        assert.equal(stopReason, 'tool_use');
      }
    });
  }

  for (const [mode, verdict, [order, answer]] of [
    ['generate', 'stop', orders[0]],
    ['stream', 'stop', orders[0]],
    ['generate', 'block', orders[0]],
    ['stream', 'block', orders[0]],
    ['generate', 'stop', orders[1]],
    ['stream', 'stop', orders[1]],
    ['generate', 'block', orders[1]],
    ['stream', 'block', orders[1]],
  ] as const) {
    test(`@ai-sdk/anthropic ${mode}Text, ${verdict === 'stop' ? 'a stop' : 'a block of every client call'}, the waiting search ${order} the client call: the run ends on the governor's message, with no server call left waiting for a result`, async () => {
      const requests: unknown[] = [];
      const answers = upstreamOf([[lookup('toolu_1')], answer]);
      const upstream = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
        requests.push(init?.body);
        return answers(url, init);
      };
      await using proxy = await startModelProxy({
        upstream: 'http://upstream.test/v1',
        breaker: breakerFor(verdict),
        port: 0,
        fetch: upstream as typeof fetch,
      });
      const anthropic = createAnthropic({
        baseURL: `${proxy.url}/v1`,
        apiKey: 'sk-ant-test-not-a-real-key',
        headers: { 'x-governor-session': `pending-${verdict}-${mode}-${order}` },
      });
      const fares = countedTool('q', 'OS 123: 49 EUR');
      const options = {
        model: anthropic('claude-test'),
        maxOutputTokens: 256,
        prompt: 'Find fares to Oslo.',
        tools: {
          web_search: anthropic.tools.webSearch_20250305({ maxUses: 5 }),
          lookup: fares.tool,
        },
        // The SDK goes on while a server call of its answer waits for its result.
        stopWhen: isStepCount(5),
      };
      const result = mode === 'generate' ? await generateText(options) : streamText(options);
      const steps = await result.steps;
      assert.equal(fares.runs, 1);
      assert.equal(steps.length, 2);
      assert.equal(requests.length, 2, 'no request went upstream for the server call');
      assert.match(steps[1]!.text, verdict === 'stop' ? /stopped by the agent breaker \(tool_spiral\)/ : /\[governor\] The call to lookup was not run/);
      assert.deepEqual(
        steps[1]!.content.filter((p) => p.type === 'tool-call').map((p) => p.toolCallId),
        ['srvtoolu_1'],
      );
    });
  }
});

describe('the Anthropic Messages wire: a request that ends with system messages after its tool results', () => {
  // As Claude Code sends one after a few silent tool rounds.
  const body = {
    model: 'claude-test',
    messages: [
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: [clientCall('toolu_1', 'Bash', { command: 'npm test' })] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '1 failing', is_error: true }] },
      { role: 'system', content: "The user hasn't heard from you in a while." },
    ],
  };

  test('its tool results are the tail the breaker observes', () => {
    const tail = anthropicWire.requestTail(body);
    assert.deepEqual(tail.toolResults, [{ id: 'toolu_1', name: 'Bash', args: { command: 'npm test' }, result: '1 failing', error: true }]);
    assert.equal(tail.lastIndex, 2);
  });

  test('a steer goes with the tool results, before the system message', () => {
    const messages = anthropicWire.withSteers(body, '[governor] steer').messages as Block[];
    assert.equal(messages.length, 4);
    assert.deepEqual((messages[2]!['content'] as Block[]).at(-1), { type: 'text', text: '[governor] steer' });
    assert.equal(messages[3]!['role'], 'system');
  });
});
