import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import OpenAI from 'openai';
import { ScriptedModelServer } from '../testing/index.ts';
import { unusedPort } from '../test-support/services.ts';
import { stallingServer } from '../test-support/stalling-server.ts';

const MAIN = fileURLToPath(new URL('./bin.ts', import.meta.url));

/** Starts `governor proxy …` and waits for the line naming its URL. */
async function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [MAIN, 'proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`governor proxy exited with ${code}: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

test('governor proxy serves until SIGTERM, with the breaker options of --config and /metrics with --metrics', async () => {
  await using upstream = await new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'search', arguments: { q: 'x' } }] }],
    onExhausted: 'repeat-last',
  }).start();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'governor-proxy-'));
  const config = path.join(dir, 'breaker.json');
  // Stricter than the default: the second identical call is already steered, the third blocked.
  await fs.writeFile(config, JSON.stringify({ toolSpiral: { maxRepeats: 2 } }));
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0', '--config', config, '--metrics', '--max-request-bytes', '4096']);
  try {
    const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'search x' }];
    const finishes: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const completion = await client.chat.completions.create({ model: 'm', messages });
      const message = completion.choices[0]!.message;
      finishes.push(completion.choices[0]!.finish_reason);
      messages.push(message);
      for (const call of message.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: 'nothing' });
    }
    assert.deepEqual(finishes, ['tool_calls', 'tool_calls', 'stop']);
    // An agent on the Responses API is governed the same way.
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'search y' }];
    const outputs: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await client.responses.create({ model: 'm', input });
      outputs.push(response.output.map((item) => item.type).join('+'));
      for (const item of response.output) {
        input.push(item as OpenAI.Responses.ResponseInputItem);
        if (item.type === 'function_call') input.push({ type: 'function_call_output', call_id: item.call_id, output: 'nothing' });
      }
    }
    assert.deepEqual(outputs, ['function_call', 'function_call', 'message']);
    const metrics = await fetch(`${cli.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /governor_breaker_escalations.*tool_spiral/);
    assert.equal((await fetch(`${cli.url}/health`)).status, 200);
    const tooLarge = await fetch(`${cli.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }),
    });
    assert.equal(tooLarge.status, 413);
    // The operator's log names each escalation and its session.
    assert.match(cli.stderr(), /^governor proxy: breaker steer \(tool_spiral\) in session "[^"]+": You have called "search" 2 times/m);
    assert.match(cli.stderr(), /^governor proxy: breaker block \(tool_spiral\) in session "[^"]+": This call was NOT executed/m);
    assert.doesNotMatch(cli.stderr(), /does not answer|warning/);
    assert.doesNotMatch(cli.stderr(), /sk-test/);
  } finally {
    cli.child.kill('SIGTERM');
    const [code] = await once(cli.child, 'exit');
    assert.equal(code, 0);
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('governor proxy with a store that does not answer says so at start, serves unjudged, and logs the warnings at most one per 10 s, without the password', async () => {
  await using upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }], onExhausted: 'repeat-last' }).start();
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0', '--store', `redis://:hunter2@127.0.0.1:${await unusedPort()}`]);
  try {
    const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
    for (let i = 0; i < 3; i += 1) {
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `hi ${i}` }] });
      assert.equal(completion.choices[0]!.message.content, 'hello');
    }
    for (const deadline = Date.now() + 10_000; !/does not answer/.test(cli.stderr()) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines = cli.stderr().split('\n');
    assert.equal(lines.filter((l) => /^governor proxy: breaker store is unavailable \(.+\): requests pass unjudged until it is back$/.test(l)).length, 1);
    // Three requests, each judged twice or more, each failing: one line printed.
    const warnings = lines.filter((l) => l.startsWith('governor proxy: breaker warning in session '));
    assert.equal(warnings.length, 1, cli.stderr());
    assert.match(warnings[0]!, /store .* failed .*failing open/);
    assert.equal((await fetch(`${cli.url}/health`)).status, 503);
    assert.doesNotMatch(cli.stderr(), /hunter2|sk-test/);
  } finally {
    cli.child.kill('SIGTERM');
    const [code] = await once(cli.child, 'exit');
    assert.equal(code, 0);
  }
});

test('governor proxy waits --store-timeout for a store that stalls, then serves unjudged', async () => {
  await using upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }], onExhausted: 'repeat-last' }).start();
  const stalled = await stallingServer();
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0', '--store', stalled.address('redis://127.0.0.1:1'), '--store-timeout', '150']);
  try {
    const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.choices[0]!.message.content, 'hello');
    for (const deadline = Date.now() + 10_000; !/does not answer/.test(cli.stderr()) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(cli.stderr(), /^governor proxy: breaker store is unavailable \(.*no reply within 150 ms\)/m);
  } finally {
    cli.child.kill('SIGTERM');
    await once(cli.child, 'exit');
    await stalled.close();
  }
});

test('governor proxy logs a request it could not serve: the upstream did not answer', async () => {
  const cli = await startCli(['--upstream', `http://127.0.0.1:${await unusedPort()}/v1`, '--port', '0']);
  try {
    const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }), OpenAI.APIError);
    for (const deadline = Date.now() + 10_000; !/did not answer/.test(cli.stderr()) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(cli.stderr(), /^governor proxy: the upstream http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)\.$/m);
    assert.doesNotMatch(cli.stderr(), /sk-test/);
  } finally {
    cli.child.kill('SIGTERM');
    await once(cli.child, 'exit');
  }
});

test('governor proxy --upstream-timeout: an upstream that does not answer in time is logged as timed out, and the client gets a 502', async () => {
  // Takes the connection and answers nothing.
  const upstream = await stallingServer();
  const cli = await startCli(['--upstream', upstream.address('http://127.0.0.1:1/v1'), '--port', '0', '--upstream-timeout', '1']).catch(
    async (error: unknown) => {
      await upstream.close();
      throw error;
    },
  );
  try {
    const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 502,
    );
    for (const deadline = Date.now() + 10_000; !/timed out/.test(cli.stderr()) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(cli.stderr(), /^governor proxy: the upstream http:\/\/127\.0\.0\.1:\d+ did not answer: timed out after 1 s \(UND_ERR_HEADERS_TIMEOUT\)\.$/m);
  } finally {
    cli.child.kill('SIGTERM');
    await once(cli.child, 'exit');
    await upstream.close();
  }
});

test('governor proxy --help names every header a session is read from', async () => {
  const child = spawn(process.execPath, [MAIN, 'proxy', '--help'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
  for (const header of ['x-governor-session', 'session-id', 'session_id', 'x-session-id']) assert.match(stdout, new RegExp(`(^|[\\s(])${header}\\b`));
  assert.match(stdout, /--upstream-timeout SECONDS/);
});

test('governor proxy refuses a bad command line with exit code 2 and says what to fix', async () => {
  for (const [args, problem] of [
    [[], /--upstream URL is required/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--port', 'eighty'], /--port must be a port number/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--port', ''], /--port must be a port number \(0-65535\), not ""/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--max-request-bytes', '0'], /--max-request-bytes must be a positive whole number of bytes/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--max-request-bytes', '32MB'], /not "32MB"/],
    [
      ['--upstream', 'http://127.0.0.1:1/v1', '--upstream-timeout', '10m'],
      /--upstream-timeout must be a whole number of seconds from 0 \(no limit\).*not "10m"/,
    ],
    [['--upstream', 'http://127.0.0.1:1/v1', '--upstream-timeout=-1'], /--upstream-timeout must be a whole number of seconds/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--upstream-timeout', '2147484'], /--upstream-timeout must be .* to 2147483 /],
    [['--upstream', 'notaurl', '--port', '0'], /upstream.*"notaurl" is not a URL/],
    // The scheme left out: the host and path are quoted, the query's token is not.
    [['--upstream', 'api.example.com/v1?token=hunter2hunter2hunter2', '--port', '0'], /^(?![\s\S]*hunter2)[\s\S]*"api\.example\.com\/v1\?…" is not a URL/],
    [
      ['--upstream', 'https://svc:Hash#Pw1@llm-gateway.internal/v1', '--port', '0'],
      /upstream.*"https:\/\/\[REDACTED\]@llm-gateway\.internal\/v1" is not a URL/,
    ],
    [['--upstream', 'http://127.0.0.1:1/v1', '--store', 'mongodb://x'], /unsupported store "mongodb:"/],
    // A password's "/" and "@" left unencoded: the store's advice, and no part of the password.
    [['--upstream', 'http://127.0.0.1:1/v1', '--store', 'redis://:S3cr/t@Pw9@127.0.0.1:1'], /^(?![\s\S]*(S3cr|Pw9))[\s\S]*--store: .*percent-encode/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--store-prefix', 'foo:'], /--store-prefix needs --store/],
    // governor mcp's flag: here the session is each request's, and the error says where it is read from.
    [
      ['--upstream', 'http://127.0.0.1:1/v1', '--session', 's'],
      /^governor proxy: Unknown option '--session'\. The proxy takes the session of each request from its x-governor-session header/,
    ],
    [['--upstream', 'http://127.0.0.1:1/v1', '--store-timeout', '500'], /--store-timeout needs --store/],
    [
      ['--upstream', 'http://127.0.0.1:1/v1', '--store', 'redis://127.0.0.1:1', '--store-timeout', '2s'],
      /--store-timeout must be a whole number of milliseconds .*not "2s"/,
    ],
    [
      ['--upstream', 'http://127.0.0.1:1/v1', '--store', 'redis://127.0.0.1:1', '--store-timeout', '0'],
      /--store-timeout must be a whole number of milliseconds from 1/,
    ],
    [['--upstream', 'http://127.0.0.1:1/v1', '--config', 'no-such-file.json'], /cannot read --config no-such-file.json: no such file/],
  ] as const) {
    const child = spawn(process.execPath, [MAIN, 'proxy', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, 'exit');
    assert.equal(code, 2, stderr);
    assert.match(stderr, problem);
  }
});

test('governor proxy says how many requests it cut off when they are still in flight after the shutdown grace', async () => {
  await using upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }, { stall: true }, { stall: true }] }).start();
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0']);
  const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
  // Answered before the shutdown: not counted.
  const done = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(done.choices[0]!.message.content, 'hello');
  // Streamed: the headers come, then nothing until the connection is dropped.
  const stalled = [1, 2].map(async (i) => {
    try {
      const response = await fetch(`${cli.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-not-a-real-key' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `stall ${i}` }], stream: true }),
      });
      await response.text();
      return 'finished';
    } catch {
      return 'cut off';
    }
  });
  for (const deadline = Date.now() + 10_000; upstream.requests.length < 3 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
  assert.equal(upstream.requests.length, 3);
  cli.child.kill('SIGTERM');
  const [code] = await once(cli.child, 'exit');
  assert.equal(code, 0, cli.stderr());
  assert.deepEqual(await Promise.all(stalled), ['cut off', 'cut off']);
  const closing = cli.stderr().slice(cli.stderr().indexOf('governor proxy: SIGTERM, closing'));
  assert.deepEqual(closing.trimEnd().split('\n'), ['governor proxy: SIGTERM, closing', 'governor proxy: 2 requests still in flight after 10 s were cut off']);
});

test('governor proxy closes without a word of cut-off requests when none was in flight', async () => {
  await using upstream = await new ScriptedModelServer({ script: [{ text: 'hello' }] }).start();
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0']);
  const client = new OpenAI({ baseURL: `${cli.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 0 });
  await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  cli.child.kill('SIGTERM');
  const [code] = await once(cli.child, 'exit');
  assert.equal(code, 0, cli.stderr());
  assert.match(cli.stderr(), /governor proxy: SIGTERM, closing\n$/);
});
