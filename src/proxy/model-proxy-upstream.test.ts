import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { createModelProxy, startModelProxy, UpstreamUnreachableError } from './index.ts';

const MESSAGES: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

function chunk(content: string, finish: string | null = null): string {
  const delta = finish === null ? { content } : {};
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A local upstream answering every request with `handle`; closed (connections and all) by `await using`. */
async function upstreamServer(handle: http.RequestListener): Promise<{ url: string } & AsyncDisposable> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An answer streamed in `parts`, each after `gapMs` of silence (the first one too, before the headers). */
function slowStream(parts: number, gapMs: number): http.RequestListener {
  return async (_request, response) => {
    await sleep(gapMs);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < parts; i += 1) {
      response.write(chunk(`p${i} `));
      await sleep(gapMs);
    }
    response.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
  };
}

function client(url: string, fetch?: typeof globalThis.fetch): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0, ...(fetch === undefined ? {} : { fetch }) });
}

async function streamedText(openai: OpenAI): Promise<string> {
  let text = '';
  for await (const part of await openai.chat.completions.create({ model: 'm', messages: MESSAGES, stream: true })) {
    text += part.choices[0]?.delta.content ?? '';
  }
  return text;
}

describe('governor proxy: how long it waits for the upstream', () => {
  test("upstreamTimeoutMs: an upstream that does not answer in time is a 502 in the API's format saying it timed out", async () => {
    // Takes the request and never answers.
    await using upstream = await upstreamServer(() => {});
    const told: Error[] = [];
    await using proxy = await startModelProxy({
      upstream: upstream.url,
      breaker: new AgentBreaker(),
      port: 0,
      upstreamTimeoutMs: 300,
      onError: (e) => told.push(e),
    });
    await assert.rejects(client(proxy.url).chat.completions.create({ model: 'm', messages: MESSAGES }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.match(error.message, /did not answer: timed out after 0\.3 s \(UND_ERR_HEADERS_TIMEOUT\)/);
      return true;
    });
    const models = await fetch(`${proxy.url}/v1/models`);
    assert.equal(models.status, 502);
    assert.equal(told.length, 2);
    for (const error of told) {
      assert.ok(UpstreamUnreachableError.isInstance(error));
      assert.match(error.message, /^governor proxy: the upstream http:\/\/127\.0\.0\.1:\d+ did not answer: timed out after 0\.3 s/);
    }
  });

  test("upstreamTimeoutMs: a stream silent for longer ends with the API's error event, and onError says it timed out", async () => {
    await using upstream = await upstreamServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk('Hel'));
    });
    const told: Error[] = [];
    await using proxy = await startModelProxy({
      upstream: upstream.url,
      breaker: new AgentBreaker(),
      port: 0,
      upstreamTimeoutMs: 300,
      onError: (e) => told.push(e),
    });
    await assert.rejects(streamedText(client(proxy.url)), (error: unknown) => error instanceof OpenAI.APIError && /broke off its answer/.test(error.message));
    assert.equal(told.length, 1);
    assert.match(told[0]!.message, /broke off its answer: timed out after 0\.3 s of silence \(UND_ERR_BODY_TIMEOUT\)/);
  });

  test('upstreamTimeoutMs bounds each wait, not the whole answer: a slow but steady stream passes whole', async () => {
    await using upstream = await upstreamServer(slowStream(5, 150));
    const told: Error[] = [];
    await using proxy = await startModelProxy({
      upstream: upstream.url,
      breaker: new AgentBreaker(),
      port: 0,
      upstreamTimeoutMs: 400,
      onError: (e) => told.push(e),
    });
    assert.equal(await streamedText(client(proxy.url)), 'p0 p1 p2 p3 p4 ');
    assert.deepEqual(told, []);
  });

  test("by default nothing is cut off, not even by limits on Node's own fetch (its 300 s, here 100 ms)", async (t) => {
    const before = getGlobalDispatcher();
    // What the proxy used to inherit: Node's fetch takes its limits from the global dispatcher.
    setGlobalDispatcher(new Agent({ headersTimeout: 100, bodyTimeout: 100 }));
    t.after(() => setGlobalDispatcher(before));
    // The client's own requests are not to be cut off either.
    const unlimited = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
    const clientFetch = ((url: string, init: RequestInit) =>
      undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: unlimited })) as unknown as typeof fetch;
    // undici checks these limits about once a second: waits of 1.5 s are well past them.
    await using streamUpstream = await upstreamServer(slowStream(1, 1_500));
    await using jsonUpstream = await upstreamServer(async (_request, response) => {
      await sleep(1_500);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(COMPLETION);
    });
    const told: Error[] = [];
    await using streamProxy = await startModelProxy({ upstream: streamUpstream.url, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    await using jsonProxy = await startModelProxy({ upstream: jsonUpstream.url, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    assert.equal(await streamedText(client(streamProxy.url, clientFetch)), 'p0 ');
    const answer = await client(jsonProxy.url, clientFetch).chat.completions.create({ model: 'm', messages: MESSAGES });
    assert.equal(answer.choices[0]!.message.content, 'Done.');
    assert.deepEqual(
      told.map((e) => e.message),
      [],
    );
  });

  test("with NODE_USE_ENV_PROXY=1, upstream requests go through HTTP_PROXY, as Node's own fetch's would", async (t) => {
    const saved = { NODE_USE_ENV_PROXY: process.env.NODE_USE_ENV_PROXY, HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
    t.after(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    await using upstream = await upstreamServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: request.url }] }));
    });
    // An HTTP proxy that tunnels every CONNECT to the upstream, whatever host it names.
    const asked: string[] = [];
    const egress = http.createServer();
    egress.on('connect', (request: http.IncomingMessage, socket: Duplex) => {
      asked.push(request.url ?? '');
      const tunnel = net.connect(Number(new URL(upstream.url).port), '127.0.0.1', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        socket.pipe(tunnel).pipe(socket);
      });
      tunnel.on('error', () => socket.destroy());
      socket.on('error', () => tunnel.destroy());
    });
    await new Promise<void>((resolve) => egress.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      egress.closeAllConnections();
      egress.close();
    });
    process.env.NODE_USE_ENV_PROXY = '1';
    process.env.HTTP_PROXY = `http://127.0.0.1:${(egress.address() as AddressInfo).port}`;
    // The client's own requests to the proxy stay direct.
    process.env.NO_PROXY = '127.0.0.1';
    await using proxy = await startModelProxy({ upstream: 'http://models.example/v1', breaker: new AgentBreaker(), port: 0 });
    const models = await fetch(`${proxy.url}/v1/models`);
    assert.deepEqual(await models.json(), { object: 'list', data: [{ id: '/v1/models' }] });
    assert.deepEqual(asked, ['models.example:80']);
  });

  test('upstreamTimeoutMs is a whole number of ms (0: no limit), and belongs to the built-in fetch, not to one of your own', () => {
    const breaker = new AgentBreaker();
    for (const upstreamTimeoutMs of [-1, 1.5, 2 ** 31]) {
      assert.throws(
        () => createModelProxy({ upstream: 'http://127.0.0.1:1/v1', breaker, upstreamTimeoutMs }),
        (e: unknown) => InvalidOptionError.isInstance(e) && /upstreamTimeoutMs/.test((e as Error).message),
      );
    }
    createModelProxy({ upstream: 'http://127.0.0.1:1/v1', breaker, upstreamTimeoutMs: 0 });
    assert.throws(
      () => createModelProxy({ upstream: 'http://127.0.0.1:1/v1', breaker, fetch, upstreamTimeoutMs: 1000 }),
      (e: unknown) => InvalidOptionError.isInstance(e) && /upstreamTimeoutMs/.test((e as Error).message),
    );
  });
});

describe('governor proxy: an upstream that breaks off an answer passed through', () => {
  test('the client gets the body cut off as directly; onError is told once and nothing reaches the console', async (t) => {
    const consoleError = t.mock.method(console, 'error', () => {});
    const consoleInfo = t.mock.method(console, 'info', () => {});
    // Sends part of the answer (a model list, or an error answer 500), then drops the connection.
    await using upstream = await upstreamServer((request, response) => {
      response.writeHead(request.method === 'GET' ? 200 : 500, { 'content-type': 'application/json' });
      response.write('{"object":"list","data":[{"id":"m1"');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const told: Error[] = [];
    await using proxy = await startModelProxy({ upstream: upstream.url, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    const models = await fetch(`${proxy.url}/v1/models`);
    assert.equal(models.status, 200);
    await assert.rejects(models.text());
    const failed = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: MESSAGES }) });
    assert.equal(failed.status, 500);
    await assert.rejects(failed.text());
    // The proxy's side of it ends just after the client's.
    await sleep(100);
    assert.equal(told.length, 2);
    for (const error of told) {
      assert.ok(UpstreamUnreachableError.isInstance(error));
      assert.match(error.message, /^governor proxy: the upstream http:\/\/127\.0\.0\.1:\d+ broke off its answer \(/);
    }
    assert.equal(consoleError.mock.callCount(), 0);
    assert.equal(consoleInfo.mock.callCount(), 0);
  });

  test('served by another fetch-style server, the body passed through ends with an error, as a broken-off body does', async () => {
    await using upstream = await upstreamServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"object":"list","data":[');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const told: Error[] = [];
    const app = createModelProxy({ upstream: upstream.url, breaker: new AgentBreaker(), onError: (e) => told.push(e) });
    const models = await app.fetch(new Request('http://proxy.test/v1/models'));
    assert.equal(models.status, 200);
    await assert.rejects(models.text());
    assert.equal(told.length, 1);
    assert.match(told[0]!.message, /broke off its answer/);
  });

  test('a client that stops reading a body passed through is not reported as an upstream failure', async () => {
    await using upstream = await upstreamServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"object":"list","data":[');
    });
    const told: Error[] = [];
    await using proxy = await startModelProxy({ upstream: upstream.url, breaker: new AgentBreaker(), port: 0, onError: (e) => told.push(e) });
    const controller = new AbortController();
    const models = await fetch(`${proxy.url}/v1/models`, { signal: controller.signal });
    await models.body!.getReader().read();
    controller.abort();
    await sleep(100);
    assert.deepEqual(
      told.map((e) => e.message),
      [],
    );
  });
});

describe('governor proxy: what a stream carries besides its events', () => {
  test("an upstream's keep-alive comments and retry field reach the client, in their places", async () => {
    await using upstream = await upstreamServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`: keep-alive\n\nretry: 3000\n\n${chunk('Hel')}: still thinking\n\n${chunk('lo')}`);
      response.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
    });
    await using proxy = await startModelProxy({ upstream: upstream.url, breaker: new AgentBreaker(), port: 0 });
    const answer = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: MESSAGES, stream: true }),
    });
    const text = await answer.text();
    const lines = text.split('\n').filter((line) => line !== '');
    assert.deepEqual(lines.slice(0, 2), [': keep-alive', 'retry: 3000']);
    assert.ok(lines.indexOf(': still thinking') > lines.findIndex((line) => line.includes('"Hel"')), text);
    assert.ok(lines.indexOf(': still thinking') < lines.findIndex((line) => line.includes('"lo"')), text);
    assert.equal(await streamedText(client(proxy.url)), 'Hello');
  });
});
