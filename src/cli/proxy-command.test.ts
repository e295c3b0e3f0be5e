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
  const cli = await startCli(['--upstream', upstream.baseURL, '--port', '0', '--config', config, '--metrics']);
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
    const metrics = await fetch(`${cli.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /governor_breaker_escalations.*tool_spiral/);
    assert.equal((await fetch(`${cli.url}/health`)).status, 200);
    assert.doesNotMatch(cli.stderr(), /sk-test/);
  } finally {
    cli.child.kill('SIGTERM');
    const [code] = await once(cli.child, 'exit');
    assert.equal(code, 0);
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('governor proxy refuses a bad command line with exit code 2 and says what to fix', async () => {
  for (const [args, problem] of [
    [[], /--upstream URL is required/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--port', 'eighty'], /--port must be a port number/],
    [['--upstream', 'http://127.0.0.1:1/v1', '--store', 'mongodb://x'], /unsupported store "mongodb:"/],
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
