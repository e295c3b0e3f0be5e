import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerEvent } from '../breaker/breaker-event.ts';
import { limitSends } from './limited-send.ts';
import { McpMessageTooLargeError } from './mcp-message-too-large-error.ts';
import { McpRequestError } from './mcp-request-error.ts';
import { startMcpProxy } from './mcp-proxy.ts';
import { LOOPING, linesOf, logShows, proxiedWithLog, textOf } from './test-support/governor-mcp.ts';
import { startHttpLoopingServer } from './test-support/http-looping-server.ts';

const MiB = 1024 * 1024;
const ANSWER_WITHIN_MS = 10_000;

describe('governor mcp --url: what the stdio client is sent keeps within 10 MiB, the limit of its MCP SDK', { timeout: 60_000 }, () => {
  test("a server's answer over the limit: the call is answered with an error naming it, and logged; the session goes on", async () => {
    const upstream = await startHttpLoopingServer({ sized: true });
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    let closed = false;
    client.onclose = () => (closed = true);
    try {
      const large = (bytes: number) => client.callTool({ name: 'large', arguments: { bytes } }, undefined, { timeout: ANSWER_WITHIN_MS });
      const refused =
        /tools\/call "large" could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
      await assert.rejects(large(11 * MiB), (error: { code?: unknown; message?: string }) => {
        assert.equal(error.code, -32603, error.message);
        assert.match(error.message ?? '', refused);
        return true;
      });
      assert.equal(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: ANSWER_WITHIN_MS })), '3');
      assert.equal(textOf(await large(5 * MiB)), 'x'.repeat(5 * MiB));
      await logShows(log, /could not be served/);
      assert.deepEqual(
        linesOf(log(), /could not be served/).map((line) => line.startsWith('governor mcp: ') && refused.test(line)),
        [true],
        log(),
      );
      assert.equal(closed, false);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test("a server's error answer over the limit: answered with an error naming it instead, and logged; one under it passes unchanged", async () => {
    const upstream = await startHttpLoopingServer({ sized: true });
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    try {
      const refused = (bytes: number) => client.readResource({ uri: `memo://refused/${bytes}` }, { timeout: ANSWER_WITHIN_MS });
      const unserved =
        /^MCP error -32603: resources\/read could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
      await assert.rejects(refused(11 * MiB), (error: { code?: unknown; message?: string; data?: unknown }) => {
        assert.equal(error.code, -32603, error.message);
        assert.match(error.message ?? '', unserved);
        assert.equal(error.data, undefined);
        return true;
      });
      await assert.rejects(refused(10), (error: { code?: unknown; message?: string; data?: unknown }) => {
        // The server's own error answer, as it sent it.
        assert.deepEqual([error.code, error.data], [-32602, { padding: 'r'.repeat(10) }]);
        assert.match(error.message ?? '', /refused$/);
        return true;
      });
      assert.equal(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: ANSWER_WITHIN_MS })), '3');
      await logShows(log, /could not be served/);
      assert.equal(linesOf(log(), /could not be served/).length, 1, log());
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test('a log message or progress notification over the limit is dropped and logged; the call is answered, the session goes on', async () => {
    const upstream = await startHttpLoopingServer({ sized: true });
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    const logged: number[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(String(notification.params.data).length));
    const noisy = async (bytes: number) => {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'noisy', arguments: { bytes } }, undefined, {
        timeout: ANSWER_WITHIN_MS,
        onprogress: (p) => progress.push(p.message?.length ?? -1),
      });
      return { text: textOf(result), progress };
    };
    try {
      // Under the limit, both reach the client (progress: unless it arrives together with the answer, see mcp-proxy.test.ts).
      const small = await noisy(10);
      assert.equal(small.text, 'done');
      assert.ok(small.progress.every((length) => length === 10));
      await logShows(() => String(logged.length), /^1$/);
      assert.deepEqual(logged, [10]);
      const loud = await noisy(11 * MiB);
      assert.equal(loud.text, 'done');
      assert.deepEqual(loud.progress, []);
      assert.equal(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: ANSWER_WITHIN_MS })), '3');
      assert.deepEqual(logged, [10]);
      const dropped = /^governor mcp: the MCP server http:\/\/127\.0\.0\.1:\d+ sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
      await logShows(() => String(linesOf(log(), dropped).length), /^2$/);
      assert.equal(linesOf(log(), dropped).length, 2, log());
      assert.doesNotMatch(log(), /could not be served/);
    } finally {
      await client.close();
      await upstream.close();
    }
  });
});

/** `startMcpProxy` on streams: a client that writes lines and reads answers by id, and what `onError` was told. */
async function proxyOnStreams(upstream: { url: string } | { command: string; args: string[] }, breaker = new AgentBreaker()) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const told: Error[] = [];
  const proxy = await startMcpProxy({ upstream, breaker, downstream: { stdin, stdout }, onError: (error) => told.push(error) });
  type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };
  const waiting = new Map<unknown, (answer: Answer) => void>();
  createInterface({ input: stdout, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
    const answer = JSON.parse(line) as Answer;
    waiting.get(answer.id)?.(answer);
  });
  const send = (line: string | Buffer, id: unknown): Promise<Answer> => {
    const { promise, resolve } = Promise.withResolvers<Answer>();
    waiting.set(id, resolve);
    stdin.write(line);
    stdin.write('\n');
    return Promise.race([promise, proxy.closed.then((by) => assert.fail(`the proxy ended (${by}) before it answered ${String(id)}`))]);
  };
  const request = (id: unknown, method: string, params: object) => send(JSON.stringify({ jsonrpc: '2.0', id, method, params }), id);
  await request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return { proxy, told, send, request };
}

test('startMcpProxy --url: an answer over the limit is a failed call to the breaker, as from a stdio server; one under it is serialized once', {
  timeout: 60_000,
}, async () => {
  const upstream = await startHttpLoopingServer({ sized: true });
  const breaker = new AgentBreaker();
  const observed: BreakerEvent[] = [];
  const observe = breaker.observe.bind(breaker);
  breaker.observe = (sessionId, event, options) => {
    observed.push(event);
    return observe(sessionId, event, options);
  };
  const { proxy, told, request } = await proxyOnStreams({ url: upstream.url }, breaker);
  try {
    const refused = await request('big', 'tools/call', { name: 'large', arguments: { bytes: 11 * MiB } });
    assert.equal(refused.error?.code, -32603);
    assert.match(refused.error?.message ?? '', /^tools\/call "large" could not be served: .* over the limit of 10 MiB for one MCP message$/);
    const recorded = observed.map((event) => event.kind === 'tool_call' && [event.tool, event.error, event.result]);
    assert.deepEqual(recorded, [['large', true, refused.error?.message]]);
    assert.deepEqual(
      told.map((error) => [McpRequestError.isInstance(error), error.message]),
      [[true, refused.error?.message]],
    );

    // The answer is serialized once by the server and once by the proxy, which writes the line it measured.
    const stringify = JSON.stringify;
    let large = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      const json = stringify(...args);
      if (typeof json === 'string' && json.length > MiB) large += 1;
      return json;
    }) as typeof JSON.stringify;
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request('fits', 'tools/call', { name: 'large', arguments: { bytes: 5 * MiB } });
    } finally {
      JSON.stringify = stringify;
    }
    assert.equal(textOf(answer.result), 'x'.repeat(5 * MiB));
    assert.equal(large, 2);
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('startMcpProxy -- <a stdio server>: a request that grows over the limit as it is passed on fails alone; the server is kept', {
  timeout: 60_000,
}, async () => {
  const { proxy, told, send, request } = await proxyOnStreams({ command: process.execPath, args: [LOOPING] });
  try {
    // 4 MiB as read: bytes that are not UTF-8 are read as U+FFFD, 3 bytes each, and passed on as 12 MiB.
    const head = Buffer.from(`{"jsonrpc":"2.0","id":"grown","method":"tools/call","params":{"name":"search","arguments":{"q":"`);
    const line = Buffer.concat([head, Buffer.alloc(4 * MiB, 0xff), Buffer.from('"}}}')]);
    const grown = await send(line, 'grown');
    assert.equal(grown.error?.code, -32603);
    const refused = /^tools\/call "search" could not be served: the MCP client sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
    assert.match(grown.error?.message ?? '', refused);
    const add = await request('next', 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
    assert.deepEqual(add.result, { content: [{ type: 'text', text: '3' }] });
    assert.deepEqual(
      told.map((error) => [error.name, refused.test(error.message)]),
      [['McpRequestError', true]],
    );
  } finally {
    await proxy.close();
  }
});

describe('limitSends', () => {
  type Message = { jsonrpc: '2.0'; id?: string | number | null; method?: string; result?: unknown; error?: unknown; params?: unknown };
  const LIMIT_OF_TEST = 200;

  /** A transport whose sends are limited: what it wrote, what its own send was given, what was told. */
  function limited(options: { stream?: boolean; serialized?: (message: Message) => string | undefined } = {}) {
    const own: Message[] = [];
    const transport = { send: async (message: Message) => void own.push(message) };
    let written = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString();
        done();
      },
    });
    const told: McpMessageTooLargeError[] = [];
    const instead: [McpMessageTooLargeError, Message][] = [];
    limitSends(transport, {
      limit: LIMIT_OF_TEST,
      source: 'the peer',
      stream: () => (options.stream === false ? undefined : stream),
      ...(options.serialized === undefined ? {} : { serialized: options.serialized }),
      answerInstead: (tooLarge, answer) => {
        instead.push([tooLarge, answer]);
        return { jsonrpc: '2.0' as const, id: tooLarge.id, error: { code: -32603, message: tooLarge.message } };
      },
      tell: (tooLarge) => void told.push(tooLarge),
    });
    return { transport, own, written: () => written, told, instead };
  }
  const padded = (bytes: number) => 'p'.repeat(bytes);
  /** A notification whose JSON has exactly `bytes` bytes. */
  const notification = (bytes: number): Message => {
    const message: Message = { jsonrpc: '2.0', method: 'n', params: { p: '' } };
    return { ...message, params: { p: padded(bytes - JSON.stringify(message).length) } };
  };

  test('a message within the limit (its line end not counted) is written as one JSON line; without a stream, the transport sends it', async () => {
    const { transport, written, told, own } = limited();
    await transport.send(notification(LIMIT_OF_TEST));
    assert.equal(written(), `${JSON.stringify(notification(LIMIT_OF_TEST))}\n`);
    assert.deepEqual([told, own], [[], []]);
    const without = limited({ stream: false });
    await without.transport.send(notification(50));
    assert.deepEqual(without.own, [notification(50)]);
  });

  test('the JSON known for a message is written as it is, and measured', async () => {
    const { transport, written, told } = limited({ serialized: (message) => (message.id === 1 ? '{"known":1}' : undefined) });
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(written(), '{"known":1}\n');
    const over = limited({ serialized: (message) => ('result' in message ? `"${padded(LIMIT_OF_TEST)}"` : undefined) });
    await over.transport.send({ jsonrpc: '2.0', id: 2, result: {} });
    assert.equal(over.instead.length, 1);
    assert.equal(told.length + over.told.length, 0);
  });

  test('an answer over the limit: the error answer in its place is sent, for its id', async () => {
    const { transport, written, instead, told } = limited();
    for (const answer of [
      { jsonrpc: '2.0', id: 'a', result: { text: padded(LIMIT_OF_TEST) } },
      { jsonrpc: '2.0', id: 7, error: { code: 1, message: padded(LIMIT_OF_TEST) } },
    ] as Message[]) {
      await transport.send(answer);
    }
    assert.deepEqual(
      instead.map(([tooLarge, answer]) => [tooLarge.id, tooLarge.method, tooLarge.limit, tooLarge.bytes === JSON.stringify(answer).length]),
      [
        ['a', undefined, LIMIT_OF_TEST, true],
        [7, undefined, LIMIT_OF_TEST, true],
      ],
    );
    assert.deepEqual(
      written()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Message),
      instead.map(([tooLarge]) => ({ jsonrpc: '2.0', id: tooLarge.id, error: { code: -32603, message: tooLarge.message } })),
    );
    assert.match(instead[0]![0].message, /^the peer sent a message of \d+ bytes, over the limit of 200 bytes for one MCP message$/);
    assert.deepEqual(told, []);
  });

  test('a notification over the limit is dropped and told of; a request fails its send, not told (its sender says so)', async () => {
    const { transport, written, told, instead } = limited();
    await transport.send(notification(LIMIT_OF_TEST + 1));
    assert.deepEqual(
      told.map((tooLarge) => [tooLarge.id, tooLarge.method, tooLarge.bytes]),
      [[undefined, 'n', LIMIT_OF_TEST + 1]],
    );
    await assert.rejects(
      transport.send({ jsonrpc: '2.0', id: 3, method: 'sampling/createMessage', params: { p: padded(LIMIT_OF_TEST) } }),
      (error: unknown) => McpMessageTooLargeError.isInstance(error) && error.id === 3 && error.method === 'sampling/createMessage',
    );
    // An error answer of no request (id null) cannot be answered in its place.
    await transport.send({ jsonrpc: '2.0', id: null, error: { code: 1, message: padded(LIMIT_OF_TEST) } });
    assert.equal(told.length, 2);
    assert.deepEqual([written(), instead], ['', []]);
  });

  test('an error answer in place of one that is over the limit too is dropped and told of', async () => {
    const own: Message[] = [];
    const transport = { send: async (message: Message) => void own.push(message) };
    const told: McpMessageTooLargeError[] = [];
    limitSends(transport, {
      limit: LIMIT_OF_TEST,
      source: 'the peer',
      stream: () => undefined,
      answerInstead: (tooLarge) => ({ jsonrpc: '2.0' as const, id: tooLarge.id, error: { code: -32603, message: padded(LIMIT_OF_TEST) } }),
      tell: (tooLarge) => void told.push(tooLarge),
    });
    await transport.send({ jsonrpc: '2.0', id: 1, result: { p: padded(LIMIT_OF_TEST) } });
    assert.deepEqual(own, []);
    assert.deepEqual(
      told.map((tooLarge) => tooLarge.id),
      [1],
    );
  });

  test('a burst of messages to a reader slower than them waits for one drain, not one listener per message', async () => {
    const transport = { send: async (_message: Message) => {} };
    let written = 0;
    // A reader that takes each line later: the stream's buffer (16 bytes) is full after the first.
    const stream = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        setTimeout(done, 1);
      },
    });
    limitSends(transport, { limit: LIMIT_OF_TEST, source: 'the peer', stream: () => stream, answerInstead: (_t, answer) => answer, tell: () => {} });
    const sends = Array.from({ length: 50 }, (_, i) => transport.send({ jsonrpc: '2.0', method: 'n', params: { i } }));
    assert.ok(stream.listenerCount('drain') <= 1, `${stream.listenerCount('drain')} drain listeners`);
    await Promise.all(sends);
    assert.equal(stream.listenerCount('drain'), 0);
    const lines = sends.map((_, i) => `${JSON.stringify({ jsonrpc: '2.0', method: 'n', params: { i } })}\n`);
    assert.equal(written, Buffer.byteLength(lines.join('')), 'every line written');
  });
});
