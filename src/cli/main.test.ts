import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ScriptedModelServer } from '../testing/index.ts';
import { cleanEnv, runGovernor } from './test-support/run-governor.ts';

const NODE = process.execPath;
const BIN = new URL('./bin.ts', import.meta.url).pathname;

const governor = (args: string[], env: NodeJS.ProcessEnv) => runGovernor(args, { env });

/** Whether a process exists and is not a zombie. */
function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('governor CLI', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('the main job (npm start) runs on the stand-in without a key, the breaker steps in, and it prints the summary', async () => {
    const { code, stdout, stderr } = await governor(['demo'], cleanEnv());
    assert.equal(code, 0, stdout);
    // Progress on stderr, the summaries on stdout.
    assert.match(stderr.split('\n')[0]!, /SCRIPTED STAND-IN/);
    assert.match(stderr, /breaker (steer|block)/);
    assert.doesNotMatch(stdout, /breaker (steer|block)/);
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

  test("governor run prints a model's control characters escaped, in its progress and its summary", async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo \u001b[31mred' } }] },
        { toolCalls: [{ name: 'submit', arguments: { summary: 'done \u001b]0;PWNED\u0007 \u009b2J' } }] },
      ],
    }).start();
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    const { code, stdout, stderr } = await governor(['run', 'Say red', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in'], cleanEnv());
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stdout + stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    assert.match(stderr, /shell echo \\u001b\[31mred/);
    assert.match(stdout, /Output: done \\u001b\]0;PWNED\\u0007 \\u009b2J/);
  });

  test('a missing key gets a clear message naming the variable, and exit code 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'x'), '');
    const { code, stderr } = await governor(['run', 'task', '--dir', dir, '--model', 'openai:gpt-4o'], cleanEnv());
    assert.equal(code, 2);
    assert.match(stderr, /OPENAI_API_KEY/);
  });

  test('an empty model variable counts as unset, as in governor demo', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    const empty = { GOVERNOR_MODEL: '', GOVERNOR_BASE_URL: '', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' };
    const none = await governor(['run', 'task', '--dir', dir], cleanEnv(empty));
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /No model configured/);
    assert.doesNotMatch(none.stderr, /""/);
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const noModel = await governor(['run', 'task', '--dir', dir, '--base-url', server.baseURL], cleanEnv({ GOVERNOR_MODEL: '' }));
    assert.equal(noModel.code, 2, noModel.stderr);
    assert.match(noModel.stderr, /With a base URL, name the model too/);
    // An empty GOVERNOR_API_KEY leaves the key to OPENAI_API_KEY, and an empty OPENAI_BASE_URL changes nothing.
    const ran = await governor(
      ['run', 'task', '--dir', dir, '--json'],
      cleanEnv({
        GOVERNOR_BASE_URL: server.baseURL,
        GOVERNOR_MODEL: 'scripted-stand-in',
        GOVERNOR_API_KEY: '',
        OPENAI_API_KEY: 'sk-test-not-a-real-key',
        OPENAI_BASE_URL: '',
      }),
    );
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((JSON.parse(ran.stdout) as { status: string }).status, 'completed');
    assert.equal(server.requests.length, 1);
    assert.ok(server.requests[0]!.headers['authorization'] !== undefined, 'no key was sent');
  });

  test('a base URL with user:password@ is a usage error before any model call, and the password is never printed', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    const withPassword = server.baseURL.replace('://', '://me:hunter2@');
    for (const [args, env] of [
      [['--base-url', withPassword, '--model', 'scripted-stand-in'], {}],
      [[], { GOVERNOR_BASE_URL: withPassword, GOVERNOR_MODEL: 'scripted-stand-in' }],
      // Not a URL at all (a port out of range): the password is not echoed either.
      [['--base-url', 'http://me:hunter2@127.0.0.1:99999/v1', '--model', 'scripted-stand-in'], {}],
      // A password with `#` or `?` not percent-encoded: where it ends cannot be told, so nothing before the `@` is shown.
      [['--base-url', 'http://me:hunter2#x@127.0.0.1:8080/v1', '--model', 'scripted-stand-in'], {}],
      [[], { GOVERNOR_BASE_URL: 'http://me:hu?nter2@127.0.0.1/v1', GOVERNOR_MODEL: 'scripted-stand-in' }],
    ] as const) {
      const { code, stdout, stderr } = await governor(['run', 'task', '--dir', dir, ...args], cleanEnv(env));
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /must not hold credentials \(user:password@\)|is not a valid URL/);
      assert.doesNotMatch(stderr, /hunter2|nter2|\]\]/);
    }
    assert.equal(server.requests.length, 0);
  });

  test("the provider's own base URL variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL) is checked as --base-url is, and named in the header", async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    for (const [provider, variable, keyVariable] of [
      ['openai', 'OPENAI_BASE_URL', 'OPENAI_API_KEY'],
      ['anthropic', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'],
    ] as const) {
      for (const [url, said] of [
        [server.baseURL.replace('://', '://me:hunter2@'), `must not hold credentials (user:password@): set the key in ${keyVariable}`],
        ['ftp://127.0.0.1/v1', 'must be an http: or https: URL, not ftp:'],
      ] as const) {
        const { code, stdout, stderr } = await governor(
          ['run', 'task', '--dir', dir, '--model', `${provider}:m`],
          cleanEnv({ [keyVariable]: 'k-test', [variable]: url }),
        );
        assert.equal(code, 2, stderr);
        assert.equal(stdout, '');
        assert.ok(stderr.startsWith(`governor run: The base URL (${variable}) ${said}`), stderr);
        assert.doesNotMatch(stderr, /hunter2/);
      }
    }
    assert.equal(server.requests.length, 0);
    // A good one is used, and the header says where the model is.
    const { code, stderr } = await governor(
      ['run', 'task', '--dir', dir, '--model', 'openai:scripted-stand-in', '--sandbox', 'none'],
      cleanEnv({ OPENAI_API_KEY: 'sk-test-not-a-real-key', OPENAI_BASE_URL: server.baseURL }),
    );
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`^Running on openai:scripted-stand-in at ${new URL(server.baseURL).host.replace('.', '\\.')} `, 'm'));
    assert.equal(server.requests.length, 1);
  });

  test('--timeout is checked in seconds, as typed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    // Written in decimals only: hex, an exponent or spaces are more likely typos than meant.
    for (const timeout of ['3000000', '0', '-5', '0.0001', 'ten', '', '0x10', '1e3', ' 5']) {
      const { code, stderr } = await governor(
        ['run', 'task', '--dir', dir, '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', `--timeout=${timeout}`],
        cleanEnv(),
      );
      assert.equal(code, 2, stderr);
      assert.match(
        stderr,
        new RegExp(`--timeout must be a number of seconds from 0\\.001 to 2147483 \\(about 24\\.8 days\\), got "${timeout.replace('.', '\\.')}"`),
      );
      assert.doesNotMatch(stderr, /timeoutMs|milliseconds/);
    }
  });

  test('--cost-limit is a positive number written in decimals; a limit JavaScript would write with an exponent is said in full', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    for (const limit of ['0', '-1', '0x10', '1e-9', ' 5', 'ten', '']) {
      const { code, stderr } = await governor(
        ['run', 'task', '--dir', dir, '--base-url', 'http://127.0.0.1:1/v1', '--model', 'gpt-4o-mini', `--cost-limit=${limit}`],
        cleanEnv(),
      );
      assert.equal(code, 2, stderr);
      assert.ok(stderr.startsWith(`governor run: --cost-limit must be a positive number written in decimals (e.g. 0.5), got "${limit}"`), stderr);
    }
    await using server = await new ScriptedModelServer({ script: [{ text: 'hello' }] }).start();
    const { code, stdout } = await governor(
      ['run', 'task', '--dir', dir, '--base-url', server.baseURL, '--model', 'gpt-4o-mini', '--sandbox', 'none', '--cost-limit', '0.000000001'],
      cleanEnv(),
    );
    assert.equal(code, 1, stdout);
    assert.match(stdout, /cost limit of \$0\.0000000010 \(\$0\.0000 spent\)/);
    assert.equal(server.requests.length, 0);
  });

  test('--store-prefix or --store-timeout without --store is a usage error, not ignored (governor proxy: see its own tests)', async () => {
    const { code, stdout, stderr } = await governor(['mcp', '--store-prefix', 'foo:', '--', 'true'], cleanEnv());
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.match(stderr, /^governor mcp: --store-prefix needs --store/);
    const timeout = await governor(['mcp', '--store-timeout', '500', '--', 'true'], cleanEnv());
    assert.equal(timeout.code, 2, timeout.stderr);
    assert.match(timeout.stderr, /^governor mcp: --store-timeout needs --store/);
  });

  test('an unknown command exits 2 and points to --help', async () => {
    const { code, stdout, stderr } = await governor(['frobnicate'], cleanEnv());
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /unknown command "frobnicate"/);
    assert.match(stderr, /governor --help/);
    assert.doesNotMatch(stderr, /Did you mean/);
  });

  test('a mistyped command gets a did-you-mean', async () => {
    const { code, stderr } = await governor(['replya', 'x.jsonl'], cleanEnv());
    assert.equal(code, 2);
    assert.match(stderr, /Did you mean "governor replay"\?/);
  });

  test("a mistyped option of governor's own is an unknown option, with a did-you-mean", async () => {
    for (const [typed, meant] of [
      ['--verison', '--version'],
      ['--hlep', '--help'],
    ]) {
      const { code, stdout, stderr } = await governor([typed!], cleanEnv());
      assert.equal(code, 2);
      assert.equal(stdout, '');
      assert.match(stderr, new RegExp(`^governor: unknown option "${typed}"\\. Did you mean "governor ${meant}"\\?`));
    }
    const { stderr } = await governor(['--frobnicate'], cleanEnv());
    assert.match(stderr, /^governor: unknown option "--frobnicate"\.\nRun "governor --help"/);
  });

  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const { code, stdout } = await governor([flag], cleanEnv());
      assert.equal(code, 0);
      assert.equal(stdout, `${version}\n`);
    }
  });

  test('--help lists every command and the exit codes; no arguments prints it to stderr with exit 2', async () => {
    const help = await governor(['--help'], cleanEnv());
    assert.equal(help.code, 0);
    for (const name of ['demo', 'run', 'replay', 'proxy', 'mcp']) assert.match(help.stdout, new RegExp(`^  ${name} `, 'm'));
    assert.match(help.stdout, /Exit codes: 0 success, 1 .*, 2 usage error/);
    assert.match(help.stdout, /130 interrupted/);
    const bare = await governor([], cleanEnv());
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, '');
    assert.match(bare.stderr, /Commands:/);
  });

  test('every command has help through "governor help <command>" and "<command> --help", and --help never runs it', async () => {
    for (const name of ['demo', 'run', 'replay', 'proxy', 'mcp']) {
      const viaHelp = await governor(['help', name], cleanEnv());
      const viaFlag = await governor([name, '--help'], cleanEnv());
      assert.equal(viaHelp.code, 0, name);
      assert.equal(viaFlag.code, 0, name);
      assert.match(viaHelp.stdout, new RegExp(`^Usage: governor ${name}`), name);
      assert.equal(viaFlag.stdout, viaHelp.stdout, name);
      assert.equal(viaFlag.stderr, '', `${name} --help must not run the command`);
    }
    const unknown = await governor(['help', 'rnu'], cleanEnv());
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Did you mean "governor run"/);
  });

  test('governor replay - reads the trajectories from stdin', async () => {
    const trajectory = {
      id: 'stdin-1',
      steps: [
        { kind: 'user', text: 'list the files' },
        { kind: 'tool_call', tool: 'ls', args: {}, result: 'a b', error: false },
        { kind: 'model', text: 'done' },
      ],
    };
    const child = spawn(NODE, [BIN, 'replay', '-', '--json'], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(`${JSON.stringify(trajectory)}\n`);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    assert.equal(code, 0);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0]!) as { id: string }).id, 'stdin-1');
  });

  test('a reader that closes the pipe early (| head) gets no stack trace', async () => {
    // Distinct ids: a duplicate id is a warning on stderr, which would race the closed pipe.
    const line = (i: number) =>
      JSON.stringify({
        id: `p${i}`,
        steps: [
          { kind: 'user', text: 'x' },
          { kind: 'model', text: 'y' },
        ],
      });
    const file = join(mkdtempSync(join(tmpdir(), 'governor-cli-')), 'many.jsonl');
    dirs.push(join(file, '..'));
    writeFileSync(file, `${Array.from({ length: 20_000 }, (_, i) => line(i)).join('\n')}\n`);
    const child = spawn(NODE, [BIN, 'replay', file], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Read the first chunk, then close our end, as `head -1` does.
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = (await once(child, 'close')) as [number];
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  for (const { signal, code, says } of [
    { signal: 'SIGINT', code: 130, says: /Interrupted: stopping the agent/ },
    { signal: 'SIGTERM', code: 143, says: /Terminated \(SIGTERM\): stopping the agent/ },
  ] as const) {
    test(`${signal === 'SIGINT' ? 'Ctrl-C' : signal} during governor run kills the running command, prints the summary so far and exits ${code}`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          { toolCalls: [{ name: 'shell', arguments: { command: 'echo $$ > shell.pid; sleep 30 & echo $! > sleep.pid; wait' } }] },
          { toolCalls: [{ name: 'submit', arguments: { summary: 'never reached' } }] },
        ],
      }).start();
      const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
      dirs.push(dir);
      const child = spawn(NODE, [BIN, 'run', 'Sleep', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'none'], {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const sleepPidFile = join(dir, 'sleep.pid');
      while (!existsSync(sleepPidFile) || readFileSync(sleepPidFile, 'utf8').trim() === '') await delay(50);
      const sleepPid = Number(readFileSync(sleepPidFile, 'utf8'));
      const shellPid = Number(readFileSync(join(dir, 'shell.pid'), 'utf8'));
      child.kill(signal);
      const [exitCode] = (await once(child, 'close')) as [number];
      assert.equal(exitCode, code, stderr);
      assert.match(stderr, says);
      assert.match(stdout, /^Result: aborted/m);
      assert.match(stdout, /Model calls: 1/);
      // Unsandboxed, so the pids are the host's. The shell and its child (sleep, in the command's process group) are gone
      // too: no such process, or a zombie waiting for init to reap it.
      assert.ok(!isRunning(shellPid), `the shell (pid ${shellPid}) still runs`);
      assert.ok(!isRunning(sleepPid), `sleep (pid ${sleepPid}) still runs`);
    });
  }
});

describe('governor CLI: what it echoes, and how it ends', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-'));
    dirs.push(dir);
    return dir;
  };
  const KEY = 'sk-proj-PastePaste1234567890abcdefghijklmnopqrs';
  const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

  test('a pasted secret or terminal escapes typed as a command, a help topic or a demo argument are echoed redacted and escaped', async () => {
    for (const args of [
      [`OPENAI_API_KEY=${KEY}`, 'demo'],
      ['help', KEY],
      ['demo', `OPENAI_API_KEY=${KEY}`, '\u001b[2J\u001b]0;pwned\u0007'],
    ]) {
      const { code, stdout, stderr } = await governor(args, cleanEnv());
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /\[REDACTED\]/, args.join(' '));
      assert.doesNotMatch(stderr, /PastePaste/, args.join(' '));
      assert.doesNotMatch(stderr, RAW_CONTROL, args.join(' '));
    }
    const demo = await governor(['demo', '\u001b[2J'], cleanEnv());
    assert.equal(demo.stderr, 'governor demo: takes no arguments, got: \\u001b[2J\n');
  });

  test('a stdout that fails (a full disk) ends with one line on stderr and exit 1, not a stack trace', { skip: !existsSync('/dev/full') }, async () => {
    const file = join(tempDir(), 'one.jsonl');
    writeFileSync(file, `${JSON.stringify({ id: 'a', steps: [{ kind: 'user', text: 'x' }] })}\n`);
    for (const args of [['--version'], ['--help'], ['replay', file, '--json'], ['replay', file]]) {
      const full = openSync('/dev/full', 'w');
      const child = spawn(NODE, [BIN, ...args], { env: cleanEnv(), stdio: ['ignore', full, 'pipe'] });
      // Listened to at once: a child that dies early must not be waited for forever.
      const closed = once(child, 'close');
      closeSync(full);
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await closed) as [number];
      assert.equal(code, 1, `${args.join(' ')}: ${stderr}`);
      assert.equal(stderr, 'governor: cannot write to standard output: no space left on device\n', args.join(' '));
    }
  });

  test('a second Ctrl-C quits at once and still kills the command that ignored the first (its whole process group)', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        // Ignores SIGTERM and SIGINT, as does the sleep it starts: only SIGKILL ends them.
        { toolCalls: [{ name: 'shell', arguments: { command: "trap '' TERM INT HUP; echo $$ > shell.pid; sleep 60 & echo $! > sleep.pid; wait" } }] },
        { toolCalls: [{ name: 'submit', arguments: { summary: 'never reached' } }] },
      ],
    }).start();
    const dir = tempDir();
    const child = spawn(NODE, [BIN, 'run', 'Sleep', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'none'], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Listened to at once: a child that dies early must not be waited for forever.
    const closed = once(child, 'close');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const sleepPidFile = join(dir, 'sleep.pid');
    while ((!existsSync(sleepPidFile) || readFileSync(sleepPidFile, 'utf8').trim() === '') && child.exitCode === null) await delay(50);
    const pids = [Number(readFileSync(join(dir, 'shell.pid'), 'utf8')), Number(readFileSync(sleepPidFile, 'utf8'))];
    try {
      child.kill('SIGINT');
      while (!stderr.includes('Interrupted:') && child.exitCode === null && child.signalCode === null) await delay(20);
      child.kill('SIGINT');
      const [code] = (await closed) as [number];
      assert.equal(code, 130, stderr);
      // Well before the 2 s the first signal's SIGTERM would have been given before a SIGKILL.
      await delay(200);
      for (const pid of pids) assert.ok(!isRunning(pid), `pid ${pid} outlived governor run`);
    } finally {
      for (const pid of pids) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  for (const { signals, code, says } of [
    { signals: ['SIGINT'], code: 130, says: /Interrupted: stopping the agent/ },
    { signals: ['SIGTERM'], code: 143, says: /Terminated \(SIGTERM\): stopping the agent/ },
    { signals: ['SIGINT', 'SIGINT'], code: 130, says: /Interrupted: stopping the agent/ },
  ] as const) {
    test(`governor demo stopped by ${signals.join(' then ')} says so, exits ${code} and leaves no working directory behind`, async () => {
      const temp = tempDir();
      const child = spawn(NODE, [BIN, 'demo'], { env: cleanEnv({ TMPDIR: temp }), stdio: ['ignore', 'pipe', 'pipe'] });
      // Listened to at once: a child that dies early must not be waited for forever.
      const closed = once(child, 'close');
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const workingDirectories = (): string[] => readdirSync(temp).filter((name) => name.startsWith('governor-demo-'));
      const running = (): boolean => child.exitCode === null && child.signalCode === null;
      while (workingDirectories().length === 0 && running()) await delay(10);
      child.kill(signals[0]);
      if (signals.length > 1) {
        while (!says.test(stderr) && running()) await delay(10);
        child.kill(signals[1]);
      }
      const [exitCode, killedBy] = (await closed) as [number | null, NodeJS.Signals | null];
      assert.equal(exitCode, code, `killed by ${killedBy}: ${stderr}`);
      assert.match(stderr, says);
      if (signals.length === 1) assert.match(stdout, /^Result: aborted/m);
      assert.deepEqual(workingDirectories(), []);
    });
  }

  test('--cost-limit with a model that has no price is a usage error before the run starts', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] }).start();
    const dir = tempDir();
    const refused = await governor(['run', 'task', '--dir', dir, '--base-url', server.baseURL, '--model', 'm', '--cost-limit', '1'], cleanEnv());
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^governor run: --cost-limit needs a price for model "m", and there is none/);
    assert.doesNotMatch(refused.stderr, /Running on|pass prices/);
    assert.equal(server.requests.length, 0);
    // A model of the price table behind a base URL keeps its price, and its limit.
    const priced = await governor(
      ['run', 'task', '--dir', dir, '--base-url', server.baseURL, '--model', 'gpt-4o-mini', '--cost-limit', '1', '--json'],
      cleanEnv(),
    );
    assert.equal(priced.code, 0, priced.stderr);
    assert.equal((JSON.parse(priced.stdout) as { status: string }).status, 'completed');
  });

  test("governor run's parse errors say they are governor run's", async () => {
    const unknown = await governor(['run', 'task', '--bogus'], cleanEnv());
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^governor run: Unknown option '--bogus'/);
  });

  test('a --dir that is not a directory is a usage error naming --dir, not the option it becomes', async () => {
    const missing = join(tempDir(), 'nowhere');
    const noDir = await governor(['run', 'task', '--dir', missing, '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm'], cleanEnv());
    assert.equal(noDir.code, 2, noDir.stderr);
    assert.equal(noDir.stderr, `governor run: --dir: ${missing} does not exist or is not a directory\n`);
  });

  test('governor demo with an unusable model configuration says what to set, never a flag it refuses (exit 2)', async () => {
    for (const [env, says] of [
      [{ GOVERNOR_BASE_URL: 'http://127.0.0.1:1/v1' }, /GOVERNOR_MODEL=llama3\.1/],
      [{ GOVERNOR_MODEL: 'openai:gpt-4o' }, /set the OPENAI_API_KEY environment variable, or use an OpenAI-compatible server with GOVERNOR_BASE_URL/],
      [{ GOVERNOR_MODEL: 'acme:m1' }, /use openai:, anthropic:, or GOVERNOR_BASE_URL for an OpenAI-compatible server/],
    ] as const) {
      const { code, stdout, stderr } = await governor(['demo'], cleanEnv(env));
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /^governor demo: /);
      assert.match(stderr, says);
      assert.match(stderr, /unset them to run on the scripted stand-in/);
      assert.doesNotMatch(stderr, /--model|--base-url/);
    }
  });
});
