import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { probeBubblewrap } from '../harness/sandbox.ts';
import { ScriptedModelServer, type ScriptedTurn } from '../testing/index.ts';
import { cleanEnv, runGovernor as governor } from './test-support/run-governor.ts';

describe('governor run', () => {
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-run-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Runs `governor run --json` on a model that submits `summary` at once; returns the parsed result. */
  async function jsonResult(summary: string): Promise<{ raw: string; result: Record<string, unknown> }> {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary } }] }] }).start();
    const { code, stdout, stderr } = await governor([
      'run',
      'Configure the database',
      '--dir',
      tempDir(),
      '--base-url',
      server.baseURL,
      '--model',
      'scripted-stand-in',
      '--sandbox',
      'none',
      '--json',
    ]);
    assert.equal(code, 0, stderr);
    const raw = stdout.trim();
    return { raw, result: JSON.parse(raw) as Record<string, unknown> };
  }

  test('--json redacts the secrets in the result and prints JSON that parses', async () => {
    const { raw, result } = await jsonResult('Added export DB_PASSWORD="hunter2" to .env and set "password": "s3cr3t" in config.json');
    assert.doesNotMatch(raw, /hunter2|s3cr3t/);
    assert.equal(result['status'], 'completed');
    assert.equal(result['output'], 'Added export DB_PASSWORD="[REDACTED]" to .env and set "password": "[REDACTED]" in config.json');
    // Numbers stay numbers, however their keys are named.
    assert.equal(typeof (result['usage'] as Record<string, unknown>)['inputTokens'], 'number');
  });

  test('--json stays valid JSON when a redacted value is followed by a quote, and escapes control characters', async () => {
    const { raw, result } = await jsonResult('Ran echo "DB_PASS=changeme" >> .env so the tests can connect.\u001b[2J\u007f\u009b');
    assert.doesNotMatch(raw, /changeme/);
    assert.equal(result['output'], 'Ran echo "DB_PASS=[REDACTED]" >> .env so the tests can connect.\u001b[2J\u007f\u009b');
    assert.doesNotMatch(raw, /[\u0000-\u001f\u007f-\u009f]/);
  });

  test('a call of a tool that does not exist, or with arguments that are not JSON, gets a progress line saying it was not run', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'browse', arguments: { url: 'http://x' } }] },
        { toolCalls: [{ name: 'shell', arguments: '{"command": "ls' }] },
        { toolCalls: [{ name: 'submit', arguments: { summary: 'ok' } }] },
      ],
    }).start();
    const { code, stdout, stderr } = await governor(['run', 'task', '--dir', tempDir(), '--base-url', server.baseURL, '--model', 'm', '--sandbox', 'none'], {
      env: cleanEnv({}),
    });
    assert.equal(code, 0, stderr);
    const notRun = stderr.split('\n').filter((line) => / not run: /.test(line));
    assert.equal(notRun[0], '   browse not run: Unknown tool "browse". Available tools: shell, submit.');
    assert.match(notRun[1] ?? '', /^ {3}shell not run: .*JSON/);
    assert.equal(notRun.length, 2, stderr);
    // Only the submit call ran.
    assert.match(stdout, /tool calls: 1$/m);
  });

  test('--max-invocations out of range is refused naming the flag, never the option it becomes', async () => {
    for (const value of ['99999999999999999999', '0', '1.5', '-3', 'ten', '', '0x3', '0b11', '1e0', ' 2 ']) {
      const { code, stderr } = await governor(['run', 'task', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', `--max-invocations=${value}`]);
      assert.equal(code, 2, stderr);
      assert.equal(stderr, `governor run: --max-invocations must be a whole number from 1 to 9007199254740991, got "${value}"\n`);
    }
  });

  test('a missing --dir is named with its value, and redaction leaves the message whole', async () => {
    const cwd = tempDir();
    const { code, stderr } = await governor(['run', 'task', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', '--dir', './secrets'], { cwd });
    assert.equal(code, 2, stderr);
    assert.equal(stderr, 'governor run: --dir: ./secrets does not exist or is not a directory\n');
  });

  test('an unknown --sandbox is a usage error naming the flag', async () => {
    const { code, stderr } = await governor(['run', 'task', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', '--sandbox', 'jail']);
    assert.equal(code, 2, stderr);
    assert.equal(stderr, 'governor run: --sandbox must be auto, bubblewrap or none, got "jail"\n');
  });

  test('without bwrap, --sandbox auto warns once, in the header, without a Node warning', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    // A PATH with no bwrap on it (node is started by its absolute path).
    const { code, stderr } = await governor(['run', 'task', '--dir', tempDir(), '--base-url', server.baseURL, '--model', 'scripted-stand-in'], {
      env: cleanEnv({ PATH: tempDir() }),
    });
    assert.equal(code, 0, stderr);
    const lines = stderr.split('\n');
    assert.deepEqual(
      lines.filter((line) => /without a sandbox/.test(line)),
      ['Warning: commands run without a sandbox, and can read the environment of this process: bwrap is not installed (not found on PATH)'],
    );
    assert.equal(lines[1], 'Warning: commands run without a sandbox, and can read the environment of this process: bwrap is not installed (not found on PATH)');
    assert.doesNotMatch(stderr, /GOVERNOR_NO_SANDBOX|\(node:\d+\)|--trace-warnings/);
  });

  test('without bwrap, --sandbox bubblewrap is a usage error whose advice is the flag to pass, not the API option', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const { code, stdout, stderr } = await governor(
      ['run', 'task', '--dir', tempDir(), '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'bubblewrap'],
      { env: cleanEnv({ PATH: tempDir() }) },
    );
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(stderr, /^governor run: The bubblewrap sandbox cannot run on this host: bwrap is not installed .*, or pass --sandbox none\.\n$/);
    assert.doesNotMatch(stderr, /sandbox: 'none'/);
    assert.equal(server.requests.length, 0);
  });

  test('--dir holding the bwrap executable, under --sandbox bubblewrap, is a usage error naming --dir', async (t) => {
    const bwrap = probeBubblewrap();
    if (!bwrap.usable) return t.skip('bwrap cannot run on this host');
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const dir = dirname(bwrap.path);
    const { code, stdout, stderr } = await governor([
      'run',
      'task',
      '--dir',
      dir,
      '--base-url',
      server.baseURL,
      '--model',
      'scripted-stand-in',
      '--sandbox',
      'bubblewrap',
    ]);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr, `governor run: --dir: ${dir} must not contain the bwrap executable (${bwrap.path}), which commands could replace\n`);
    // A link to it is the directory it links to.
    const link = join(tempDir(), 'link');
    symlinkSync(dir, link);
    const linked = await governor(['run', 'task', '--dir', link, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'bubblewrap']);
    assert.equal(linked.code, 2, linked.stderr);
    assert.match(linked.stderr, /^governor run: --dir: .*link must not contain the bwrap executable/);
    assert.equal(server.requests.length, 0);
  });

  test('--cost-limit bounds the output of each model call to what the limit leaves', async () => {
    const script: ScriptedTurn[] = [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }];
    await using server = await new ScriptedModelServer({ script }).start();
    const { code, stderr } = await governor([
      'run',
      'say hi',
      '--dir',
      tempDir(),
      '--base-url',
      server.baseURL,
      '--model',
      'gpt-4o',
      '--cost-limit',
      '0.05',
      '--sandbox',
      'none',
    ]);
    assert.equal(code, 0, stderr);
    const body = server.requests[0]?.body as { max_tokens?: number; max_completion_tokens?: number };
    const bound = body.max_tokens ?? body.max_completion_tokens;
    // gpt-4o's output costs $10 per million tokens: $0.05 pays for at most 5,000 (less what the prompt costs).
    assert.ok(bound !== undefined && bound > 4_000 && bound <= 5_000, `sent ${String(bound)}`);
  });
});
