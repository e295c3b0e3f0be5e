import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ScriptedModelServer } from '../testing/index.ts';

const run = promisify(execFile);
const BIN = new URL('./bin.ts', import.meta.url).pathname;

test('governor run shows a retried model call and carries on', async () => {
  await using server = await new ScriptedModelServer({
    script: [{ error: { status: 503, message: 'upstream overloaded', retryAfterMs: 10 } }, { toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }],
  }).start();
  const dir = mkdtempSync(join(tmpdir(), 'governor-cli-retry-'));
  try {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI|ANTHROPIC|GOVERNOR)_/.test(k)) env[k] = v;
    const { stdout, stderr } = await run(
      process.execPath,
      [BIN, 'run', 'Say done', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in'],
      {
        env,
        timeout: 60_000,
      },
    );
    const output = stdout + stderr;
    assert.match(output, /model call #1 failed \(HTTP 503\), retry 1 in 0\.0 s: .*upstream overloaded/);
    assert.match(output, /Result: completed/);
    assert.equal(server.requests.length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
