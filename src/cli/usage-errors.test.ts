import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ScriptedModelServer } from '../testing/index.ts';
import { cleanEnv, runGovernor as governor } from './test-support/run-governor.ts';

describe('governor: what a user fixes before running the command again', () => {
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-usage-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('an optional package that is not installed: exit 2 from every command, named with its install command', async () => {
    const key = { OPENAI_API_KEY: 'sk-test-not-a-real-key' };
    const cases: { command: string; args: string[]; env: Record<string, string>; without: string }[] = [
      { command: 'demo', args: ['demo'], env: key, without: '@ai-sdk/openai' },
      { command: 'demo', args: ['demo'], env: { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key' }, without: '@ai-sdk/anthropic' },
      { command: 'run', args: ['run', 'task', '--dir', tempDir(), '--model', 'openai:gpt-4o'], env: key, without: '@ai-sdk/openai' },
      { command: 'mcp', args: ['mcp', '--', process.execPath, '-e', 'setTimeout(() => {}, 5_000)'], env: {}, without: '@modelcontextprotocol/sdk' },
      { command: 'mcp', args: ['mcp', '--store', 'redis://127.0.0.1:1', '--', 'true'], env: {}, without: 'redis' },
      {
        command: 'proxy',
        args: ['proxy', '--upstream', 'http://127.0.0.1:1/v1', '--port', '0', '--metrics'],
        env: {},
        without: '@opentelemetry/exporter-prometheus',
      },
      { command: 'proxy', args: ['proxy', '--upstream', 'http://127.0.0.1:1/v1', '--port', '0', '--store', 'redis://127.0.0.1:1'], env: {}, without: 'redis' },
    ];
    for (const { command, args, env, without } of cases) {
      const { code, stdout, stderr } = await governor(args, { env: cleanEnv(env), without });
      const what = `governor ${args.join(' ')} without ${without}: ${stderr}`;
      assert.equal(code, 2, what);
      assert.equal(stdout, '', what);
      const name = without.replaceAll('/', '\\/');
      assert.match(stderr, new RegExp(`^governor ${command}: .+ needs the package "${name}", which is not installed\\. Run: npm install ${name}\\n$`), what);
    }
  });

  test('a base URL that is not http(s) is refused at once with exit 2, by governor run and the demo, never echoing its password', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const dir = tempDir();
    const ftp = server.baseURL.replace(/^http:\/\/[^/]+/, 'ftp://me:hunter2@127.0.0.1');
    for (const [args, env] of [
      [['run', 'task', '--dir', dir, '--base-url', ftp, '--model', 'm'], {}],
      [['run', 'task', '--dir', dir, '--base-url', 'file:///tmp/v1', '--model', 'm'], {}],
      [['run', 'task', '--dir', dir], { GOVERNOR_BASE_URL: ftp, GOVERNOR_MODEL: 'm' }],
      [['demo'], { GOVERNOR_BASE_URL: ftp, GOVERNOR_MODEL: 'm' }],
    ] as const) {
      const started = performance.now();
      const { code, stdout, stderr } = await governor(args, { env: cleanEnv(env) });
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /^governor (run|demo): The base URL \((--base-url or )?GOVERNOR_BASE_URL\) must be an http: or https: URL, not (ftp|file):/);
      assert.doesNotMatch(stderr, /hunter2|Running on|retry/);
      // Refused before a model call: not after retries.
      assert.ok(performance.now() - started < 4_000, `took ${performance.now() - started} ms`);
    }
    assert.equal(server.requests.length, 0);
  });

  test('a key passed where a URL goes is refused without quoting it: governor run --base-url, governor proxy --upstream (exit 2)', async () => {
    const dir = tempDir();
    // Key shapes the redaction rules do not know: a hex token, and a provider's key of its own shape.
    for (const key of ['0123456789abcdef0123456789abcdef01234567', 'gsk_8kQ2pL9xYz3mN7vB1cR5tW0eH4jF6gD2sA8uK3oI9yT1']) {
      for (const args of [
        ['run', 'task', '--dir', dir, '--base-url', key, '--model', 'm'],
        ['proxy', '--upstream', key, '--port', '0'],
      ]) {
        const { code, stdout, stderr } = await governor(args, { env: cleanEnv({}) });
        assert.equal(code, 2, stderr);
        assert.equal(stdout, '');
        assert.match(stderr, /^governor (run|proxy): .*"\[REDACTED\]" is not a (valid )?URL/);
        assert.ok(!stderr.includes(key.slice(0, 12)), stderr);
      }
    }
    // A host and path are still quoted, to show what was wrong with them.
    const { stderr } = await governor(['run', 'task', '--dir', dir, '--base-url', 'api.example.com/v1', '--model', 'm'], { env: cleanEnv({}) });
    assert.match(stderr, /"api\.example\.com\/v1" is not a valid URL/);
  });

  test('a mistyped option is said the same way by every command, with the option it is closest to (exit 2)', async () => {
    for (const [args, line] of [
      [['run', 'task', '--max-invocation', '3'], "governor run: Unknown option '--max-invocation'. Did you mean '--max-invocations'?"],
      [['run', 'task', '-model', 'm'], "governor run: Unknown option '-model'. Did you mean '--model'?"],
      [['run', 'task', '--zzzzzz'], "governor run: Unknown option '--zzzzzz'."],
      [['replay', 'runs.jsonl', '--jsn'], "governor replay: Unknown option '--jsn'. Did you mean '--json'?"],
      [['replay', 'runs.jsonl', '--max-line-byte=10'], "governor replay: Unknown option '--max-line-byte'. Did you mean '--max-line-bytes'?"],
      [['mcp', '--sesion', 's', '--', 'true'], "governor mcp: Unknown option '--sesion'. Did you mean '--session'?"],
      [['proxy', '--upstrem', 'http://127.0.0.1:1/v1'], "governor proxy: Unknown option '--upstrem'. Did you mean '--upstream'?"],
    ] as const) {
      const { code, stdout, stderr } = await governor(args);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      const [first, blank, usage] = stderr.split('\n');
      assert.equal(first, line);
      // Then the command's usage, as for every other usage error.
      assert.equal(blank, '');
      assert.match(usage ?? '', new RegExp(`^Usage: governor ${args[0]} `));
      assert.doesNotMatch(stderr, /positional/);
    }
  });

  test("a negative number for a numeric option gets that option's own range, not advice about dashes (exit 2)", async () => {
    for (const [args, line] of [
      [
        ['run', 'task', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--timeout', '-5'],
        /^governor run: --timeout must be a number of seconds from 0\.001 to/,
      ],
      [['replay', 'runs.jsonl', '--max-line-bytes', '-1'], /^governor replay: --max-line-bytes must be/],
      [['proxy', '--upstream', 'http://127.0.0.1:9/v1', '--upstream-timeout', '-1'], /^governor proxy: --upstream-timeout must be/],
    ] as const) {
      const { code, stderr } = await governor(args);
      assert.equal(code, 2, stderr);
      assert.match(stderr, line);
      assert.doesNotMatch(stderr, /ambiguous|-XYZ/);
    }
    // A task that starts with a dash after `--` stays the task.
    const { stderr } = await governor(['run', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--timeout', '0', '--', '-5 degrees?']);
    assert.match(stderr, /--timeout must be/);
  });

  test('--config: the unknown-option list names only what a JSON file can set, and a store key points to --store', async () => {
    const dir = tempDir();
    const write = (name: string, options: object): string => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(options));
      return file;
    };
    const typo = write('typo.json', { cooldownMss: 1000 });
    const store = write('store.json', { store: 'redis://:hunter2@127.0.0.1:6390' });
    const now = write('now.json', { now: 1 });
    for (const command of [
      (file: string) => ['proxy', '--upstream', 'http://127.0.0.1:1/v1', '--port', '0', '--config', file],
      (file: string) => ['mcp', '--config', file, '--', 'true'],
    ]) {
      const unknown = await governor(command(typo));
      assert.equal(unknown.code, 2, unknown.stderr);
      assert.match(unknown.stderr, /Invalid option "cooldownMss": unknown option \(known: cooldownMs, [^)]*\)\n$/);
      const known = /\(known: ([^)]*)\)/.exec(unknown.stderr)![1]!.split(', ');
      assert.ok(known.includes('toolSpiral') && known.includes('telemetry'), known.join(', '));
      assert.ok(!known.includes('store') && !known.includes('now'), known.join(', '));
      const stored = await governor(command(store));
      assert.equal(stored.code, 2, stored.stderr);
      assert.match(stored.stderr, /: "store" cannot be set in a JSON file: .*pass --store redis:\/\/… .*instead\n$/);
      assert.doesNotMatch(stored.stderr, /BreakerStore|hunter2/);
      const clock = await governor(command(now));
      assert.equal(clock.code, 2, clock.stderr);
      assert.match(clock.stderr, /: "now" cannot be set in a JSON file/);
    }
  });
});
