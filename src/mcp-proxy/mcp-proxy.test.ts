import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { linesOf, logShows, proxiedWithLog } from './test-support/governor-mcp.ts';
import { exitOf, killAll, pidIn, pidsIn, stillRunning } from './test-support/processes.ts';
import { startHttpLoopingServer, startStatefulHttpLoopingServer } from './test-support/http-looping-server.ts';
import { startMcpProxy } from './mcp-proxy.ts';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { requireRedis, unusedPort } from '../test-support/services.ts';
import { stallingServer } from '../test-support/stalling-server.ts';

const MAIN = fileURLToPath(new URL('../cli/bin.ts', import.meta.url));
const LOOPING = fileURLToPath(new URL('./test-support/looping-server.ts', import.meta.url));
const REFUSING = fileURLToPath(new URL('./test-support/refusing-server.ts', import.meta.url));
const LINGERING = fileURLToPath(new URL('./test-support/lingering-server.ts', import.meta.url));
const WITHOUT_PACKAGES = fileURLToPath(new URL('../cli/test-support/without-packages.ts', import.meta.url));
const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
const execFileAsync = promisify(execFile);

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'pipe' }));
  return client;
}

/** A client of an in-process proxy, speaking over the streams given to it as its `downstream`. */
async function clientOf(downstream: { stdin: PassThrough; stdout: PassThrough }): Promise<Client> {
  const buffer = new ReadBuffer();
  const transport: Transport = {
    async start() {
      downstream.stdout.on('data', (chunk: Buffer) => {
        buffer.append(chunk);
        for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) transport.onmessage?.(message);
      });
    },
    async send(message) {
      downstream.stdin.write(serializeMessage(message));
    },
    async close() {
      downstream.stdin.end();
      transport.onclose?.();
    },
  };
  const client = new Client({ name: 'test-client', version: '1' });
  await client.connect(transport);
  return client;
}

/** A client of `governor mcp -- <server>`, and one of the server itself. */
function pair(server: string[]): { proxied: () => Promise<Client>; direct: () => Promise<Client> } {
  return {
    proxied: () => connect(process.execPath, [MAIN, 'mcp', '--', process.execPath, ...server]),
    direct: () => connect(process.execPath, server),
  };
}

interface ToolResult {
  content: { type: string; text?: string }[];
  isError?: boolean;
}

function text(result: ToolResult): string {
  return result.content.map((c) => c.text ?? '').join('\n');
}

describe('governor mcp -- node <a looping test server>', { timeout: 60_000 }, () => {
  const servers = pair([LOOPING]);
  let proxied: Client;
  let direct: Client;
  before(async () => {
    [proxied, direct] = await Promise.all([servers.proxied(), servers.direct()]);
  });
  after(async () => {
    await Promise.all([proxied?.close(), direct?.close()]);
  });

  test('mirrors the server: identity, instructions, tools, resources and prompts unchanged', async () => {
    assert.deepEqual(proxied.getServerVersion(), direct.getServerVersion());
    assert.equal(proxied.getInstructions(), 'Search before you book.');
    assert.deepEqual(await proxied.listTools(), await direct.listTools());
    assert.deepEqual(await proxied.listResources(), await direct.listResources());
    assert.deepEqual(await proxied.readResource({ uri: 'memo://readme' }), await direct.readResource({ uri: 'memo://readme' }));
    assert.deepEqual(await proxied.listPrompts(), await direct.listPrompts());
    assert.deepEqual(
      await proxied.getPrompt({ name: 'plan', arguments: { city: 'Oslo' } }),
      await direct.getPrompt({ name: 'plan', arguments: { city: 'Oslo' } }),
    );
  });

  test("the server's errors reach the client as a direct client gets them", async () => {
    const failure = async (request: Promise<unknown>): Promise<{ message: string; code: unknown }> => {
      try {
        await request;
      } catch (error) {
        return { message: (error as Error).message, code: (error as { code?: unknown }).code };
      }
      return assert.fail('the request succeeded');
    };
    const expected = await failure(direct.readResource({ uri: 'memo://missing' }));
    assert.equal(expected.code, -32602);
    assert.match(expected.message, /Resource memo:\/\/missing not found$/);
    assert.deepEqual(await failure(proxied.readResource({ uri: 'memo://missing' })), expected);
    assert.deepEqual(await failure(proxied.getPrompt({ name: 'nope' })), await failure(direct.getPrompt({ name: 'nope' })));
  });

  test('a repeated identical call is steered, blocked, then stopped; different calls pass untouched until the stop', async () => {
    const search = () => proxied.callTool({ name: 'search', arguments: { q: 'Oslo' } }) as Promise<ToolResult>;
    // Different calls are answered exactly as the server answers them.
    for (let i = 0; i < 3; i += 1) {
      assert.deepEqual(await proxied.callTool({ name: 'add', arguments: { a: i, b: 2 } }), await direct.callTool({ name: 'add', arguments: { a: i, b: 2 } }));
    }
    const results: ToolResult[] = [];
    for (let i = 0; i < 3; i += 1) results.push(await search());
    assert.deepEqual(results[0], { content: [{ type: 'text', text: 'No flights found for Oslo.' }] });
    assert.deepEqual(results[1], results[0]);
    // The third identical call runs, with the breaker's note for the model.
    assert.equal(results[2]!.isError, undefined);
    assert.equal(results[2]!.content[0]!.text, 'No flights found for Oslo.');
    assert.match(text(results[2]!), /\[governor\] .*"search"/);
    // The fourth is not run: an error result says why.
    const blocked = await search();
    assert.equal(blocked.isError, true);
    // Said once: the breaker's own "This call was NOT executed" is left out.
    assert.match(text(blocked), /^\[governor\] The call to search was not run: You have called "search" 4 times/);
    assert.doesNotMatch(text(blocked), /No flights found|NOT executed/);
    // The fifth stops the session; from then on every call is refused the same way.
    const stopped = await search();
    assert.equal(stopped.isError, true);
    assert.match(text(stopped), /^\[governor\] This run was stopped by the agent breaker \(tool_spiral\): tool-call spiral — /);
    const refused = (await proxied.callTool({ name: 'add', arguments: { a: 1, b: 1 } })) as ToolResult;
    assert.equal(refused.isError, true);
    assert.match(text(refused), /OPEN for this session \(.+\); calls are refused until \d{4}-\d\d-\d\dT[\d:.]+Z\.$/);
    // The client has no reset to make: it is not offered one.
    assert.doesNotMatch(text(refused), /reset/);
    assert.doesNotMatch(text(stopped), /No flights found/);
  });

  test("the server's progress on a long call reaches the client, under the client's own token", async () => {
    const client = await servers.proxied();
    try {
      const progress: { progress: number; total?: number; message?: string }[] = [];
      const result = (await client.callTool({ name: 'build', arguments: { steps: 3 } }, undefined, { onprogress: (p) => progress.push(p) })) as ToolResult;
      assert.equal(text(result), 'built in 3 steps');
      // The SDK handles a notification a tick after it reads it, and a response at once: a last notification
      // that arrives together with the answer can be dropped by any client, proxied or not. The others arrive.
      const expected = [
        [1, 3, 'step 1'],
        [2, 3, 'step 2'],
        [3, 3, 'step 3'],
      ];
      assert.ok(progress.length >= 2, JSON.stringify(progress));
      assert.deepEqual(
        progress.map((p) => [p.progress, p.total, p.message]),
        expected.slice(0, progress.length),
      );
    } finally {
      await client.close();
    }
  });

  test('a call the client cancels is not a failed call: cancelling the same call again and again is never stopped', async () => {
    const client = await servers.proxied();
    try {
      for (let i = 0; i < 4; i += 1) {
        const abort = new AbortController();
        const call = client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, { signal: abort.signal });
        setTimeout(() => abort.abort(), 50);
        await assert.rejects(call);
      }
      const done = (await client.callTool({ name: 'wait', arguments: { ms: 1 } })) as ToolResult;
      assert.equal(done.isError, undefined);
      assert.equal(text(done), 'waited 1 ms');
    } finally {
      await client.close();
    }
  });

  test("a call the client stopped waiting for (its SDK's request timeout) failed as an outage: a hanging tool retried again and again is refused", async () => {
    const client = await servers.proxied();
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 8 && !outcomes.includes('refused'); i += 1) {
        try {
          const result = (await client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, { timeout: 100 })) as ToolResult;
          outcomes.push(result.isError === true && /\[governor\].*not run/s.test(text(result)) ? 'refused' : 'answered');
        } catch (error) {
          assert.match(String(error), /Request timed out/);
          outcomes.push('timed out');
          // The proxy records the call once the server's side of it is cancelled too: the next attempt comes after.
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      // The fifth attempt repeats an outage four times over (errorLoop.maxTransientRepeats): it is steered and runs; the sixth is refused.
      assert.deepEqual(outcomes, ['timed out', 'timed out', 'timed out', 'timed out', 'timed out', 'refused']);
    } finally {
      await client.close();
    }
  });

  test('a result of structured content alone is judged by it: a status polled while it changes is never a repeat', async () => {
    const client = await servers.proxied();
    try {
      for (let i = 1; i <= 6; i += 1) {
        const result = (await client.callTool({ name: 'status', arguments: {} })) as ToolResult & { structuredContent?: unknown };
        assert.deepEqual(result.structuredContent, { done: i });
        assert.equal(result.isError, undefined, `poll ${i}`);
        assert.deepEqual(result.content, [], `poll ${i} has no note of the breaker`);
      }
    } finally {
      await client.close();
    }
  });

  test('one session per client connection: a new connection starts clean', async () => {
    const fresh = await servers.proxied();
    try {
      const result = (await fresh.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as ToolResult;
      assert.equal(result.isError, undefined);
      assert.equal(text(result), '5');
    } finally {
      await fresh.close();
    }
  });
});

describe('governor mcp -- node @modelcontextprotocol/server-everything', { timeout: 60_000 }, () => {
  const servers = pair([EVERYTHING, 'stdio']);
  let proxied: Client;
  let direct: Client;
  before(async () => {
    [proxied, direct] = await Promise.all([servers.proxied(), servers.direct()]);
  });
  after(async () => {
    await Promise.all([proxied?.close(), direct?.close()]);
  });

  test('tools, resources and prompts listed unchanged', async () => {
    const tools = await proxied.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'echo'));
    assert.deepEqual(tools, await direct.listTools());
    assert.deepEqual(await proxied.listResources(), await direct.listResources());
    assert.deepEqual(await proxied.listPrompts(), await direct.listPrompts());
  });

  test('repeated identical echo calls are blocked then stopped; different calls are untouched', async () => {
    const sums: ToolResult[] = [];
    for (let i = 0; i < 4; i += 1) sums.push((await proxied.callTool({ name: 'get-sum', arguments: { a: i, b: 10 } })) as ToolResult);
    assert.deepEqual(sums.map(text), ['The sum of 0 and 10 is 10.', 'The sum of 1 and 10 is 11.', 'The sum of 2 and 10 is 12.', 'The sum of 3 and 10 is 13.']);
    assert.ok(sums.every((s) => s.isError === undefined));
    const echoes: ToolResult[] = [];
    for (let i = 0; i < 5; i += 1) echoes.push((await proxied.callTool({ name: 'echo', arguments: { message: 'again' } })) as ToolResult);
    assert.deepEqual(echoes.slice(0, 2), [
      await direct.callTool({ name: 'echo', arguments: { message: 'again' } }),
      await direct.callTool({ name: 'echo', arguments: { message: 'again' } }),
    ]);
    assert.equal(echoes[3]!.isError, true);
    assert.match(text(echoes[3]!), /The call to echo was not run/);
    assert.equal(echoes[4]!.isError, true);
    assert.match(text(echoes[4]!), /stopped by the agent breaker/);
  });
});

describe('governor mcp --url <a Streamable HTTP server>', { timeout: 60_000 }, () => {
  test('mirrors the tools and judges the calls the same way', async () => {
    const upstream = await startHttpLoopingServer();
    const proxied = await connect(process.execPath, [MAIN, 'mcp', '--url', upstream.url]);
    try {
      const tools = await proxied.listTools();
      assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['add', 'build', 'search', 'status', 'wait']);
      assert.equal(text((await proxied.callTool({ name: 'add', arguments: { a: 20, b: 22 } })) as ToolResult), '42');
      const results: ToolResult[] = [];
      for (let i = 0; i < 5; i += 1) results.push((await proxied.callTool({ name: 'search', arguments: { q: 'Oslo' } })) as ToolResult);
      assert.deepEqual(
        results.map((r) => r.isError === true),
        [false, false, false, true, true],
      );
      assert.match(text(results[4]!), /stopped by the agent breaker/);
    } finally {
      await proxied.close();
      await upstream.close();
    }
  });
});

/** `governor mcp ARGS` spoken to line by line, as an MCP host does: answers by id, its log and its exit code. */
async function hostOf(args: string[]) {
  const child = spawn(process.execPath, [MAIN, 'mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close': its output has been read to the end as well.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  type Answer = { id?: number; result?: unknown; error?: { code: number; message: string } };
  const waiting = new Map<number, (answer: Answer) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Answer;
    if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  let id = 0;
  const request = (method: string, params: object) => {
    id += 1;
    const { promise, resolve } = Promise.withResolvers<Answer>();
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return Promise.race([promise, exited.then((code) => assert.fail(`governor mcp exited (${code}) without answering ${method}: ${stderr}`))]);
  };
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return { request, exited, stderr: () => stderr, kill: () => child.kill('SIGKILL') };
}

describe('governor mcp --url <a stateful Streamable HTTP server> that restarts', { timeout: 60_000 }, () => {
  test('a restart mid-session: a new session is started, once however many calls found the old one lost, and the calls go on', async () => {
    const upstream = await startStatefulHttpLoopingServer();
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    const add = async (a: number, b: number) => text((await client.callTool({ name: 'add', arguments: { a, b } })) as ToolResult);
    try {
      assert.equal(await add(20, 22), '42');
      assert.equal(upstream.sessionsStarted, 1);
      await upstream.restart();
      // Each of these first gets 404 for the old session: one new session, and each call is sent once more.
      assert.deepEqual(await Promise.all([add(1, 2), add(2, 3), add(3, 4)]), ['3', '5', '7']);
      assert.equal(upstream.sessionsStarted, 2);
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['add', 'build', 'search', 'status', 'wait']);
      await upstream.restart();
      assert.equal(await add(4, 5), '9');
      assert.equal(upstream.sessionsStarted, 3);
      assert.doesNotMatch(log(), /could not be served/);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test('a server that lost the session and starts no new one: the call fails saying so, and governor mcp exits 1 with a log line', async () => {
    const upstream = await startStatefulHttpLoopingServer();
    const host = await hostOf(['--url', upstream.url]);
    try {
      const first = await host.request('tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
      assert.deepEqual(first.result, { content: [{ type: 'text', text: '3' }] });
      await upstream.restart({ refuseNewSessions: true });
      const failed = await host.request('tools/call', { name: 'add', arguments: { a: 2, b: 2 } });
      assert.equal(failed.error?.code, -32603);
      assert.match(
        failed.error?.message ?? '',
        /^tools\/call "add" could not be served: the MCP server no longer knows the session \(HTTP 404\), and could not connect .*\(HTTP 503\)/,
      );
      assert.equal(await host.exited, 1, host.stderr());
      assert.match(
        host.stderr(),
        /^governor mcp: tools\/call "add" could not be served: the MCP server no longer knows the session \(HTTP 404\), and could not connect to the MCP server http:\/\/127\.0\.0\.1:\d+: .*\(HTTP 503\)$/m,
      );
      assert.match(host.stderr(), /^governor mcp: the MCP server closed the connection \(it exited or dropped it\); closing$/m);
    } finally {
      host.kill();
      await upstream.close();
    }
  });
});

/**
 * Waits up to `ms` for `heard` to hold every one of `expected`; resolves to
 * what it holds then, for the assertion to show.
 */
async function hears(heard: readonly string[], expected: string[], ms: number): Promise<readonly string[]> {
  for (const deadline = Date.now() + ms; !expected.every((what) => heard.includes(what)) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return heard;
}

/** The `wait` call, running on the server once its progress 0 has come back, and what became of it. */
async function waitRunning(client: Client): Promise<{ call: Promise<string> }> {
  const { promise: running, resolve } = Promise.withResolvers<void>();
  const call = client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, { onprogress: () => resolve() }).then(
    (result) => `answered: ${text(result as ToolResult)}`,
    (error: Error) => `failed: ${error.message}`,
  );
  await Promise.race([running, call]);
  return { call };
}

describe('a call in flight on a Streamable HTTP server when its session ends', { timeout: 60_000 }, () => {
  test('governor mcp --url, its client gone mid-call: the call is cancelled on the server, then the session is ended', async () => {
    const upstream = await startStatefulHttpLoopingServer();
    const { client } = await proxiedWithLog(['--url', upstream.url]);
    try {
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
      await waitRunning(client);
      await client.close();
      // Well within the 30 s the call would otherwise run on.
      const heard = await hears(upstream.heard, ['notifications/cancelled', 'wait aborted', 'DELETE'], 3_000);
      assert.deepEqual(
        heard.filter((what) => what !== 'notifications/initialized'),
        ['initialize', 'tools/call', 'tools/call', 'notifications/cancelled', 'wait aborted', 'DELETE'],
      );
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test('startMcpProxy, close() mid-call: the client is answered at once, the call is cancelled on the server, then the session is ended', async () => {
    const upstream = await startStatefulHttpLoopingServer();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const proxy = await startMcpProxy({ upstream: { url: upstream.url }, breaker: new AgentBreaker(), downstream: { stdin, stdout } });
    const client = await clientOf({ stdin, stdout });
    try {
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
      const { call } = await waitRunning(client);
      const started = Date.now();
      await proxy.close();
      assert.ok(Date.now() - started < 2_000, `closed after ${Date.now() - started} ms`);
      assert.equal(await call, 'failed: MCP error -32603: tools/call "wait" could not be served: the proxy is closing');
      const heard = await hears(upstream.heard, ['notifications/cancelled', 'wait aborted', 'DELETE'], 1_000);
      assert.deepEqual(
        heard.filter((what) => what !== 'notifications/initialized'),
        ['initialize', 'tools/call', 'tools/call', 'notifications/cancelled', 'wait aborted', 'DELETE'],
      );
      assert.equal(await proxy.closed, 'close');
    } finally {
      await client.close();
      await proxy.close();
      await upstream.close();
    }
  });
});

describe('governor mcp: requests it could not serve', { timeout: 60_000 }, () => {
  test('an HTTP server that stopped answering: each request fails saying why, and is logged once, redacted', async () => {
    const upstream = await startHttpLoopingServer({ authorization: `Basic ${Buffer.from('ada:s3cret-Passw0rd').toString('base64')}` });
    const url = upstream.url.replace('http://', 'http://ada:s3cret-Passw0rd@');
    const { client, log } = await proxiedWithLog(['--url', url]);
    try {
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
      await upstream.close();
      const unserved = /MCP error -32603: tools\/call "add" could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)$/;
      await assert.rejects(client.callTool({ name: 'add', arguments: { a: 2, b: 2 } }), unserved);
      await assert.rejects(client.listTools(), /MCP error -32603: tools\/list could not be served: the MCP server .* did not answer \(ECONNREFUSED\)$/);
      await logShows(log, /tools\/list could not be served/);
      const lines = log()
        .split('\n')
        .filter((line) => /could not be served/.test(line));
      assert.equal(lines.length, 2, log());
      assert.match(
        lines[0]!,
        /^governor mcp: tools\/call "add" could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)$/,
      );
      assert.match(lines[1]!, /^governor mcp: tools\/list could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)$/);
      assert.doesNotMatch(log(), /s3cret|ada:/);
    } finally {
      await client.close();
    }
  });

  test("the server's own error answers reach the client as a direct client gets them, and are not logged: they were served", async () => {
    const { client, log } = await proxiedWithLog(['--', process.execPath, LOOPING]);
    const refusing = await proxiedWithLog(['--', process.execPath, REFUSING]);
    const direct = await connect(process.execPath, [REFUSING]);
    const failure = async (request: Promise<unknown>) => {
      try {
        await request;
      } catch (error) {
        return { message: (error as Error).message, code: (error as { code?: unknown }).code, data: (error as { data?: unknown }).data };
      }
      return assert.fail('the request succeeded');
    };
    try {
      await assert.rejects(client.readResource({ uri: 'memo://missing' }), /Resource memo:\/\/missing not found$/);
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
      // A tools/call answered with an error, not a result: it passes the breaker's judgement unchanged.
      const expected = await failure(direct.callTool({ name: 'strict', arguments: {} }));
      assert.equal(expected.code, -32602);
      assert.match(expected.message, /strict refuses these arguments$/);
      assert.deepEqual(expected.data, { hint: 'none will do' });
      assert.deepEqual(await failure(refusing.client.callTool({ name: 'strict', arguments: {} })), expected);
      await new Promise((r) => setTimeout(r, 200));
      assert.doesNotMatch(log() + refusing.log(), /could not be served/);
    } finally {
      await Promise.all([client.close(), refusing.client.close(), direct.close()]);
    }
  });
});

describe('governor mcp: a steer on a call that fails', { timeout: 60_000 }, () => {
  /** How `call` failed: its message, code and data. */
  const failure = async (call: Promise<unknown>): Promise<{ message: string; code: unknown; data: unknown }> => {
    try {
      await call;
    } catch (error) {
      return { message: (error as Error).message, code: (error as { code?: unknown }).code, data: (error as { data?: unknown }).data };
    }
    return assert.fail('the call succeeded');
  };

  test("a tools/call the server answers with a JSON-RPC error: the steer is added to the error's message, which stays an error", async () => {
    const { client, log } = await proxiedWithLog(['--', process.execPath, REFUSING]);
    try {
      const failures = [];
      for (let i = 0; i < 3; i += 1) failures.push(await failure(client.callTool({ name: 'strict', arguments: {} })));
      for (const failed of failures) {
        assert.equal(failed.code, -32602);
        assert.deepEqual(failed.data, { hint: 'none will do' });
        assert.match(failed.message, /^MCP error -32602: .*strict refuses these arguments/);
      }
      assert.doesNotMatch(failures[0]!.message + failures[1]!.message, /\[governor\]/);
      await logShows(log, /breaker steer/);
      const steer = /^governor mcp: breaker steer \(\w+\) in session "[^"]+": (.*)$/m.exec(log())?.[1];
      assert.ok(steer !== undefined, log());
      assert.equal(failures[2]!.message, `${failures[0]!.message}\n\n[governor] ${steer}`);
    } finally {
      await client.close();
    }
  });

  test('a tools/call whose answer is over the size limit: the steer is added to the error the proxy answers', async () => {
    const { client, log } = await proxiedWithLog(['--', process.execPath, LOOPING]);
    try {
      const failures = [];
      const large = () => client.callTool({ name: 'large', arguments: { bytes: 11 * 1024 * 1024 } });
      for (let i = 0; i < 3; i += 1) failures.push(await failure(large()));
      for (const failed of failures) {
        assert.equal(failed.code, -32603);
        assert.match(failed.message, /^MCP error -32603: tools\/call "large" could not be served: .* over the limit of 10 MiB for one MCP message/);
      }
      assert.doesNotMatch(failures[0]!.message + failures[1]!.message, /\[governor\]/);
      await logShows(log, /breaker steer/);
      const steer = /^governor mcp: breaker steer \(\w+\) in session "[^"]+": (.*)$/m.exec(log())?.[1];
      assert.ok(steer !== undefined, log());
      assert.ok(failures[2]!.message.endsWith(`MCP message\n\n[governor] ${steer}`), failures[2]!.message);
    } finally {
      await client.close();
    }
  });
});

describe('governor mcp --url with user:password@', { timeout: 60_000 }, () => {
  test('the credentials go as a Basic Authorization header, and a refusal never shows the password', async () => {
    const upstream = await startHttpLoopingServer({ authorization: `Basic ${Buffer.from('ada:p@ss w0rd').toString('base64')}` });
    const withCredentials = (password: string) => upstream.url.replace('http://', `http://ada:${encodeURIComponent(password)}@`);
    const proxied = await connect(process.execPath, [MAIN, 'mcp', '--url', withCredentials('p@ss w0rd')]);
    try {
      assert.equal(text((await proxied.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
    } finally {
      await proxied.close();
    }
    try {
      await assert.rejects(
        execFileAsync(process.execPath, [MAIN, 'mcp', '--url', withCredentials('Wr0ng-Passw0rd-42')], { timeout: 30_000 }),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 1);
          assert.match(error.stderr ?? '', /governor mcp: .*401/);
          assert.doesNotMatch(error.stderr ?? '', /Wr0ng/);
          return true;
        },
      );
    } finally {
      await upstream.close();
    }
  });
});

describe('governor mcp --url with a secret in its path', { timeout: 60_000 }, () => {
  const TOKEN = 'Zk8pQ2vN7xR4mT9wL3bH6jF1cY5dS0gA';

  test('the server is named by its origin: the path is in no error answer and no log line', async () => {
    const upstream = await startHttpLoopingServer({ sized: true });
    const url = `${upstream.url}/s/${TOKEN}/mcp`;
    const origin = new URL(url).origin;
    const { client, log } = await proxiedWithLog(['--url', url]);
    try {
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })) as ToolResult), '3');
      const tooLarge = client.callTool({ name: 'large', arguments: { bytes: 11 * 1024 * 1024 } });
      await assert.rejects(tooLarge, (error: Error) => {
        assert.ok(error.message.includes(`the MCP server ${origin} sent a message of`), error.message);
        assert.doesNotMatch(error.message, new RegExp(TOKEN));
        return true;
      });
      await upstream.close();
      await assert.rejects(client.callTool({ name: 'add', arguments: { a: 2, b: 2 } }), (error: Error) => {
        assert.ok(error.message.endsWith(`could not be served: the MCP server ${origin} did not answer (ECONNREFUSED)`), error.message);
        return true;
      });
      await logShows(log, /tools\/call "add" could not be served/);
      assert.match(log(), /over the limit of 10 MiB/);
      assert.doesNotMatch(log(), new RegExp(TOKEN));
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test('it cannot connect: the log names the server by its origin, and leaves out the path and query where the answer echoes them', async () => {
    const echoing = createServer((req, res) => {
      // As a web framework answers a path it does not serve, and as a server that sends plain http to https does.
      if (/^\/redirect\//.test(String(req.url))) {
        res.writeHead(301, { location: `https://127.0.0.1:1${req.url}` }).end();
      } else res.writeHead(404, { 'content-type': 'text/plain' }).end(`Cannot ${req.method} ${req.url}`);
    });
    await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(echoing.address() as AddressInfo).port}`;
    const closedPort = `http://127.0.0.1:${await unusedPort()}`;
    try {
      for (const base of [origin, `${origin}/redirect`, closedPort]) {
        const url = `${base}/s/${TOKEN}/mcp?room=blue-heron-42`;
        await assert.rejects(execFileAsync(process.execPath, [MAIN, 'mcp', '--url', url], { timeout: 30_000 }), (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 1, error.stderr);
          assert.ok((error.stderr ?? '').startsWith(`governor mcp: could not connect to the MCP server ${new URL(base).origin}: `), error.stderr);
          assert.doesNotMatch(error.stderr ?? '', new RegExp(`${TOKEN}|blue-heron`));
          return true;
        });
      }
    } finally {
      echoing.closeAllConnections();
      await new Promise((resolve) => echoing.close(resolve));
    }
  });
});

describe('governor mcp --url with a password in it', { timeout: 60_000 }, () => {
  test('a server refusing the credentials and repeating them in its answer: the password is in no log line, as written or as sent', async () => {
    const PASSWORD = 'Zq8GGJHJDyU5XPTs!x';
    const refusing = createServer((req, res) => {
      const [user, password] = Buffer.from(String(req.headers.authorization).replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':');
      res.writeHead(401, { 'content-type': 'text/plain' }).end(`rejected credential ${password} for ${user}`);
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    try {
      const url = `http://appuser:${encodeURIComponent(PASSWORD)}@${origin.slice('http://'.length)}/mcp`;
      await assert.rejects(execFileAsync(process.execPath, [MAIN, 'mcp', '--url', url], { timeout: 30_000 }), (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, 1, error.stderr);
        assert.match(error.stderr ?? '', /rejected credential \[REDACTED\] for appuser/);
        assert.ok(!(error.stderr ?? '').includes(PASSWORD) && !(error.stderr ?? '').includes(encodeURIComponent(PASSWORD)), error.stderr);
        return true;
      });
    } finally {
      refusing.closeAllConnections();
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});

describe('governor mcp: its log on stderr', () => {
  /** Runs `governor mcp ARGS -- node <the looping server>`, collecting its stderr. */
  async function logged(args: string[]): Promise<{ client: Client; log: () => string }> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', ...args, '--', process.execPath, LOOPING], stderr: 'pipe' });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: 'test-client', version: '1' });
    await client.connect(transport);
    return { client, log: () => log };
  }

  test('each escalation is logged with its session', async () => {
    const { client, log } = await logged(['--session', 'agent-7']);
    try {
      for (let i = 0; i < 4; i += 1) await client.callTool({ name: 'search', arguments: { q: 'Oslo' } });
      // stderr is a pipe of its own: its lines may arrive after the answer on stdout.
      for (const deadline = Date.now() + 10_000; !/breaker block/.test(log()) && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.match(log(), /^governor mcp: breaker steer \(tool_spiral\) in session "agent-7": You have called "search" 3 times/m);
      assert.match(log(), /^governor mcp: breaker block \(tool_spiral\) in session "agent-7": /m);
      assert.doesNotMatch(log(), /warning|does not answer/);
    } finally {
      await client.close();
    }
  });

  test('--store without --session says that the connection shares its session with no other replica; with --session it does not', async () => {
    const url = await requireRedis();
    for (const [args, said] of [
      [['--store', url], true],
      [['--store', url, '--session', `replicas-${Date.now()}`], false],
    ] as const) {
      const { client, log } = await logged([...args]);
      try {
        assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as ToolResult), '5');
        assert.equal(linesOf(log(), /--store without --session/).length, said ? 1 : 0, log());
        if (said)
          assert.match(
            log(),
            /^governor mcp: --store without --session: this connection is a session of its own, shared with no other replica; give replicas the same --session to share one$/m,
          );
      } finally {
        await client.close();
      }
    }
  });

  test('a store that does not answer is named at start, and its warnings are logged; calls are served unjudged, the password never shown', async () => {
    const { client, log } = await logged(['--store', `redis://:hunter2@127.0.0.1:${await unusedPort()}`, '--session', 'agent-7']);
    try {
      const result = (await client.callTool({ name: 'search', arguments: { q: 'Oslo' } })) as ToolResult;
      assert.equal(text(result), 'No flights found for Oslo.');
      for (const deadline = Date.now() + 10_000; !/does not answer/.test(log()) && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(log(), /^governor mcp: breaker store is unavailable \(.+\): requests pass unjudged until it is back$/m);
      assert.match(log(), /^governor mcp: breaker warning in session "agent-7": .*failing open/m);
      assert.doesNotMatch(log(), /hunter2/);
    } finally {
      await client.close();
    }
  });

  test('--store-timeout is how long a store that stalls is waited for', async () => {
    const stalled = await stallingServer();
    const { client, log } = await logged(['--store', stalled.address('redis://127.0.0.1:1'), '--store-timeout', '150']);
    try {
      const result = (await client.callTool({ name: 'search', arguments: { q: 'Oslo' } })) as ToolResult;
      assert.equal(text(result), 'No flights found for Oslo.');
      for (const deadline = Date.now() + 10_000; !/does not answer/.test(log()) && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      // On a slow machine the client's own connect timeout (5 s) may have passed as well, and is named after it.
      assert.match(log(), /^governor mcp: breaker store is unavailable \(.*no reply within 150 ms\b/m);
    } finally {
      await client.close();
      await stalled.close();
    }
  });
});

test('startMcpProxy: closed names the side that ended, client, upstream or close; serverExit says how the server ended', { timeout: 60_000 }, async () => {
  const ends: string[] = [];
  for (const how of ['client', 'upstream', 'close'] as const) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const proxy = await startMcpProxy({ upstream: { command: process.execPath, args: [LOOPING] }, breaker: new AgentBreaker(), downstream: { stdin, stdout } });
    if (how === 'client') stdin.end();
    else if (how === 'close') await proxy.close();
    else {
      // A client speaks through the streams and asks the server to crash.
      const lines = (message: object) => stdin.write(`${JSON.stringify(message)}\n`);
      lines({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crash', arguments: {} } });
    }
    ends.push(await proxy.closed);
    // The crash tool exits with code 3; a server whose input ends exits with 0.
    assert.deepEqual(proxy.serverExit, how === 'upstream' ? { code: 3, signal: null } : { code: 0, signal: null }, how);
  }
  assert.deepEqual(ends, ['client', 'upstream', 'close']);
});

test('startMcpProxy: close() answers every call in flight with an error saying the proxy is closing, then ends the downstream', {
  timeout: 30_000,
}, async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const breaker = new AgentBreaker();
  const proxy = await startMcpProxy({ upstream: { command: process.execPath, args: [LOOPING] }, breaker, downstream: { stdin, stdout } });
  const ended = once(stdout, 'end');
  const received: { id?: unknown; method?: string; error?: { code: number; message: string } }[] = [];
  const arrived: (() => void)[] = [];
  createInterface({ input: stdout }).on('line', (line) => {
    received.push(JSON.parse(line));
    for (const wake of arrived.splice(0)) wake();
  });
  const until = async (seen: () => boolean): Promise<void> => {
    while (!seen()) await new Promise<void>((resolve) => arrived.push(resolve));
  };
  const send = (message: object) => stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await until(() => received.some((m) => m.id === 1));
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Two slow calls, each running on the server once it reports progress 0.
  for (const id of [2, 3]) {
    send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: { ms: 30_000 }, _meta: { progressToken: `p${id}` } } });
  }
  await until(() => received.filter((m) => m.method === 'notifications/progress').length === 2);

  const started = Date.now();
  await proxy.close();
  assert.ok(Date.now() - started < 2_000, `closed after ${Date.now() - started} ms`);
  let timer: NodeJS.Timeout | undefined;
  const endedInTime = await Promise.race([ended.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(resolve, 1_000, false)))]);
  clearTimeout(timer);
  const answers = received.filter((m) => m.id === 2 || m.id === 3);
  assert.deepEqual(
    answers.map((m) => [m.id, m.error?.code]),
    [
      [2, -32603],
      [3, -32603],
    ],
  );
  for (const answer of answers) assert.match(answer.error?.message ?? '', /^tools\/call "wait" could not be served: the proxy is closing$/);
  assert.ok(endedInTime, 'the downstream was ended');
  assert.equal(await proxy.closed, 'close');
  // Cut off by the proxy, not failed: the breaker learned nothing of them.
  assert.equal((await breaker.snapshot(proxy.sessionId)).version, undefined, 'no call was recorded');
});

test('startMcpProxy: await using closes the proxy, and ends the server it started', { timeout: 30_000, skip: process.platform === 'win32' }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
  const pidFile = join(dir, 'server.pid');
  try {
    let closed: Promise<unknown> | undefined;
    {
      await using proxy = await startMcpProxy({
        upstream: { command: process.execPath, args: [LINGERING, pidFile] },
        breaker: new AgentBreaker(),
        downstream: { stdin: new PassThrough(), stdout: new PassThrough() },
      });
      closed = proxy.closed;
      await pidIn(pidFile);
    }
    assert.equal(await closed, 'close');
    assert.deepEqual(await stillRunning(pidsIn([pidFile])), [], 'the server still runs');
  } finally {
    killAll(pidsIn([pidFile]));
    await rm(dir, { recursive: true, force: true });
  }
});

describe('startMcpProxy: close() with a server started through a wrapper', { skip: process.platform === 'win32' }, () => {
  for (const stubborn of [false, true]) {
    test(`ends the wrapper and the server that outlives its input${stubborn ? ', one that ignores SIGTERM too' : ''}`, { timeout: 30_000 }, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
      const pidFiles = [join(dir, 'wrapper.pid'), join(dir, 'server.pid')];
      try {
        const proxy = await startMcpProxy({
          // Not an exec: sh stays between the proxy and the server, as npx does.
          upstream: {
            command: 'sh',
            args: [
              '-c',
              'echo $$ > "$1"; "$2" "$3" "$4" "$5"; echo "server ended" >&2',
              'sh',
              pidFiles[0]!,
              process.execPath,
              LINGERING,
              pidFiles[1]!,
              stubborn ? 'stubborn' : 'plain',
            ],
          },
          breaker: new AgentBreaker(),
          downstream: { stdin: new PassThrough(), stdout: new PassThrough() },
        });
        const pids = [await pidIn(pidFiles[0]!), await pidIn(pidFiles[1]!)];
        const started = Date.now();
        await proxy.close();
        // 2 s for the server to end once its input ended, 2 s more after SIGTERM, then SIGKILL.
        assert.ok(Date.now() - started < 6_000, `closed after ${Date.now() - started} ms`);
        assert.equal(await proxy.closed, 'close');
        assert.deepEqual(await stillRunning(pids), [], `still running of [wrapper, server] ${pids}`);
      } finally {
        killAll(pidsIn(pidFiles));
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

test('startMcpProxy: close() ends a process of the server that let go of its output and ignores SIGTERM', {
  skip: process.platform === 'win32',
  timeout: 30_000,
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
  const pidFile = join(dir, 'helper.pid');
  try {
    const helper = `process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1_000)`;
    const proxy = await startMcpProxy({
      // A helper started in the background by the server's wrapper, its output elsewhere: the server ends with its input, the helper stays.
      upstream: {
        command: 'sh',
        args: ['-c', '"$1" -e "$2" "$3" </dev/null >/dev/null 2>&1 & exec "$1" "$4"', 'sh', process.execPath, helper, pidFile, LOOPING],
      },
      breaker: new AgentBreaker(),
      downstream: { stdin: new PassThrough(), stdout: new PassThrough() },
    });
    const pid = await pidIn(pidFile);
    const started = Date.now();
    await proxy.close();
    assert.ok(Date.now() - started < 6_000, `closed after ${Date.now() - started} ms`);
    assert.deepEqual(await stillRunning([pid]), [], 'the helper is ended');
  } finally {
    killAll(pidsIn([pidFile]));
    await rm(dir, { recursive: true, force: true });
  }
});

test('governor mcp: a client that stops reading (its end of the output closed) is gone: governor mcp ends, whatever it still sends', {
  skip: process.platform === 'win32',
  timeout: 30_000,
}, async () => {
  const child = spawn(process.execPath, [MAIN, 'mcp', '--', process.execPath, LOOPING], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
  try {
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await once(lines, 'line');
    lines.close();
    child.stdout!.destroy();
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let id = 2; id <= 6; id++) send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add', arguments: { a: id, b: 1 } } });
    const exited = await exitOf(child, 10_000);
    assert.notEqual(exited, 'timeout', `governor mcp still runs with its output closed; its log: ${stderr}`);
  } finally {
    child.kill('SIGKILL');
  }
});

describe('governor mcp before its server has answered', { skip: process.platform === 'win32' }, () => {
  /**
   * Runs `governor mcp` in front of a server that starts and never answers, once a client has asked it to
   * initialize; `end` ends it the way the test says, and the command's exit, log and the server's fate are checked.
   */
  async function whileStarting(
    end: (child: ChildProcess) => void,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number }> {
    const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
    const pidFile = join(dir, 'server.pid');
    try {
      const server = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1_000)`;
      const child = spawn(process.execPath, [MAIN, 'mcp', '--', process.execPath, '-e', server], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
      );
      const pid = await pidIn(pidFile);
      const ended = Date.now();
      end(child);
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      assert.deepEqual(await stillRunning([pid]), [], 'the server is ended too');
      return { code, signal, stderr, ms: Date.now() - ended };
    } finally {
      killAll(pidsIn([pidFile]));
      await rm(dir, { recursive: true, force: true });
    }
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} ends governor mcp (exit 0) and the server`, { timeout: 30_000 }, async () => {
      const ended = await whileStarting((child) => child.kill(signal));
      assert.deepEqual([ended.code, ended.signal], [0, null], ended.stderr);
      assert.match(ended.stderr, /stopped before the MCP server answered/);
    });
  }

  test('a client that leaves ends governor mcp at once (exit 0) and the server', { timeout: 30_000 }, async () => {
    const ended = await whileStarting((child) => child.stdin!.end());
    assert.equal(ended.code, 0, ended.stderr);
    assert.ok(ended.ms < 5_000, `exited ${ended.ms} ms after the client left`);
    assert.match(ended.stderr, /the client left before the MCP server answered; closing/);
  });
});

test('a wrapped server that exits ends governor mcp with exit code 1 and a log line saying so', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, [MAIN, 'mcp', '--', process.execPath, LOOPING], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  // Answered once the proxy has connected upstream: then the crash can be asked for.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crash', arguments: {} } });
  const [code] = await once(child, 'exit');
  assert.equal(code, 1, stderr);
  // The crash tool exits with code 3.
  assert.match(stderr, /^governor mcp: the MCP server exited with code 3; closing$/m);
});

describe('governor mcp: usage', () => {
  test('without @modelcontextprotocol/sdk installed it is a usage error (exit 2) naming the package to install', async () => {
    await assert.rejects(
      execFileAsync(process.execPath, ['--import', WITHOUT_PACKAGES, MAIN, 'mcp', '--', process.execPath, LOOPING], {
        env: { ...process.env, GOVERNOR_TEST_WITHOUT: '@modelcontextprotocol/sdk' },
      }),
      (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, 2);
        assert.match(
          error.stderr ?? '',
          /^governor mcp: .* needs the package "@modelcontextprotocol\/sdk", which is not installed\. Run: npm install @modelcontextprotocol\/sdk$/m,
        );
        return true;
      },
    );
  });

  test('a command that prints what is not MCP and stays: the log says so at once, what it printed shortened and redacted', async () => {
    const noisy = `console.log("hello I am not MCP, key sk-proj-${'a'.repeat(40)} " + "x".repeat(300)); setTimeout(() => {}, 10_000)`;
    const child = spawn(process.execPath, [MAIN, 'mcp', '--', process.execPath, '-e', noisy], { stdio: ['pipe', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      const started = Date.now();
      for (const deadline = started + 20_000; !/standard output/.test(log) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
      // Before the note that would say only that it waits (after 3 s): the process start is most of this.
      assert.ok(!/waiting for the MCP server to answer/.test(log), log);
      const [line, ...rest] = log.split('\n');
      assert.match(
        line!,
        /^governor mcp: the MCP server wrote what is not an MCP message to its standard output: "hello I am not MCP, key \[REDACTED\] x+…" \(a stdio MCP server writes only MCP messages there, and logs to stderr\); waiting for it to answer \(it is given up to 60 s to start\)…$/,
      );
      assert.ok(/"(.*)"/.exec(line!)![1]!.length <= 100, line);
      assert.deepEqual(rest, ['']);
      // It stands in for the note: no second line about the wait once 3 s have passed.
      await new Promise((r) => setTimeout(r, Math.max(0, started + 3_500 - Date.now())));
      assert.doesNotMatch(log, /waiting for the MCP server to answer/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('a command that prints a banner line and then speaks MCP is served: the banner is skipped, as the MCP SDK skips it', async () => {
    const server = `console.log('My server v1.0, starting');
      const { loopingServer } = await import(${JSON.stringify(new URL('./test-support/looping-server.ts', import.meta.url).href)});
      const { StdioServerTransport } = await import(${JSON.stringify(import.meta.resolve('@modelcontextprotocol/sdk/server/stdio.js'))});
      await loopingServer().connect(new StdioServerTransport());`;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', '--', process.execPath, '--input-type=module', '-e', server],
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: 'test-client', version: '1' });
    await client.connect(transport);
    try {
      const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as ToolResult;
      assert.equal(text(result), '5');
      assert.match(log, /^governor mcp: the MCP server wrote what is not an MCP message to its standard output: "My server v1\.0, starting"/m);
    } finally {
      await client.close();
    }
  });

  test('a command that ends before it answers: the error says how it ended', async () => {
    for (const [script, how] of [
      ['process.exit(3)', 'exited with code 3'],
      ['process.kill(process.pid, "SIGKILL")', 'was ended by SIGKILL'],
    ] as const) {
      await assert.rejects(
        execFileAsync(process.execPath, [MAIN, 'mcp', '--', process.execPath, '-e', script]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 1, error.stderr);
          assert.match(
            error.stderr ?? '',
            new RegExp(
              `^governor mcp: could not connect to the MCP server "node": .*; it ${how} before it answered \\(its standard error may say why\\)$`,
              'm',
            ),
          );
          return true;
        },
      );
    }
  });

  test('a server that writes what is not MCP to its stdout mid-session: the first such line is logged, redacted, once; the calls go on', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--', process.execPath, LOOPING], stderr: 'pipe' });
    let log = '';
    transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const client = new Client({ name: 'test-client', version: '1' });
    await client.connect(transport);
    try {
      for (const line of [`debug: token sk-proj-${'a'.repeat(40)}`, 'debug: second line']) {
        const result = (await client.callTool({ name: 'print', arguments: { line } })) as ToolResult;
        assert.equal(text(result), 'printed');
      }
      assert.equal(text((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as ToolResult), '5');
      const notMcp = linesOf(log, /not an MCP message/);
      assert.deepEqual(notMcp, [
        'governor mcp: the MCP server wrote what is not an MCP message to its standard output: "debug: token [REDACTED]" (a stdio MCP server writes only MCP messages there, and logs to stderr); skipped, and an answer it was written into is lost; later such lines are not logged',
      ]);
    } finally {
      await client.close();
    }
  });

  test('a command that prints what is not MCP fails at once and says so; one that stays silent is reported as awaited', async () => {
    const usage = 'console.log("Usage: my-server [--port N]"); setTimeout(() => {}, 200)';
    await assert.rejects(execFileAsync(process.execPath, [MAIN, 'mcp', '--', process.execPath, '-e', usage]), (error: { code?: number; stderr?: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr ?? '', /could not connect to the MCP server .*; it wrote what is not an MCP message to its standard output \(.*"Usage: my-/);
      assert.match(error.stderr ?? '', /logs to stderr$/m);
      return true;
    });
    const silent = spawn(process.execPath, [MAIN, 'mcp', '--', process.execPath, '-e', 'setTimeout(() => {}, 8_000)'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let log = '';
    silent.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      for (const deadline = Date.now() + 20_000; !/waiting/.test(log) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
      assert.match(log, /^governor mcp: waiting for the MCP server to answer \(it is given up to 60 s to start\)…$/m);
    } finally {
      silent.kill('SIGKILL');
    }
  });

  test('without a server to wrap it exits 2 and says what to give', async () => {
    await assert.rejects(execFileAsync(process.execPath, [MAIN, 'mcp']), (error: { code?: number; stderr?: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr ?? '', /-- COMMAND \[ARGS…\] or --url URL/);
      return true;
    });
  });

  test('a malformed --url or --session, or an empty command, is a usage error naming the flag: exit code 2 and the usage, as governor proxy', async () => {
    for (const [args, line] of [
      [['--url', 'ftp://me:hunter2@example.com/mcp'], 'governor mcp: --url must be the http: or https: URL of a Streamable HTTP MCP server, not ftp:'],
      [['--url', 'not a url'], 'governor mcp: --url is not a URL: give the http(s) URL of a Streamable HTTP MCP server'],
      [['--session', '', '--', process.execPath, LOOPING], 'governor mcp: --session is empty: give a session id, or leave the flag out for one per connection'],
      [['--', ''], 'governor mcp: the command after -- is empty'],
    ] as const) {
      await assert.rejects(execFileAsync(process.execPath, [MAIN, 'mcp', ...args], { timeout: 30_000 }), (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, 2, `${args.join(' ')}: ${error.stderr}`);
        const [first, blank, usage] = (error.stderr ?? '').split('\n');
        assert.deepEqual([first, blank], [line, '']);
        assert.match(usage ?? '', /^Usage: governor mcp /);
        assert.doesNotMatch(error.stderr ?? '', /hunter2/);
        return true;
      });
    }
  });
});
