import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ScriptedModelServer } from '../testing/index.ts';

const run = promisify(execFile);
const NODE = process.execPath;
const MAIN = new URL('./main.ts', import.meta.url).pathname;

/** The environment without any model configuration, as on a fresh machine. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(OPENAI|ANTHROPIC|GOVERNOR)_/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

async function governor(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(NODE, [MAIN, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('governor CLI', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test('the main job (npm start) runs on the stand-in without a key, the breaker steps in, and it prints the summary', async () => {
    const { code, stdout } = await governor(['demo'], cleanEnv());
    assert.equal(code, 0, stdout);
    const lines = stdout.split('\n');
    assert.match(lines[0]!, /SCRIPTED STAND-IN/);
    assert.match(stdout, /breaker (steer|block)/);
    assert.match(stdout, /Summary: with the AgentBreaker/);
    assert.match(stdout, /Result: completed/);
    assert.match(stdout, /plain step cap of 20/);
    assert.match(stdout, /Result: invocation_limit/);
  });

  test('governor run --json prints one parseable result, against a model over HTTP', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo hello > greeting.txt && cat greeting.txt' } }] },
        { toolCalls: [{ name: 'submit', arguments: { summary: 'wrote greeting.txt' } }] },
      ],
    }).start();
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    const { code, stdout } = await governor(
      ['run', 'Write a greeting file', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--json'],
      cleanEnv(),
    );
    assert.equal(code, 0, stdout);
    const result = JSON.parse(stdout.trim()) as { status: string; invocations: number; toolCalls: number; output: string; usage: { inputTokens: number } };
    assert.equal(result.status, 'completed');
    assert.equal(result.invocations, 2);
    assert.equal(result.toolCalls, 2);
    assert.equal(result.output, 'wrote greeting.txt');
    assert.ok(result.usage.inputTokens > 0);
    assert.equal(readFileSync(join(dir, 'greeting.txt'), 'utf8'), 'hello\n');
  });

  test('a missing key gets a clear message naming the variable, and exit code 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'x'), '');
    const { code, stderr } = await governor(['run', 'task', '--dir', dir, '--model', 'openai:gpt-4o'], cleanEnv());
    assert.equal(code, 2);
    assert.match(stderr, /OPENAI_API_KEY/);
  });

  test('an unknown command prints the help and exits 2', async () => {
    const { code, stderr } = await governor(['frobnicate'], cleanEnv());
    assert.equal(code, 2);
    assert.match(stderr, /unknown command "frobnicate"/);
  });
});
