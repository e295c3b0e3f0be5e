import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { SHELL_TEMP_DIRECTORY, shellTool, type ShellToolOptions } from './shell-tool.ts';

let workingDirectory: string;
before(() => {
  workingDirectory = realpathSync(mkdtempSync(path.join(tmpdir(), 'shell-tool-')));
});
after(() => rmSync(workingDirectory, { recursive: true, force: true }));

async function run(command: string, options: Partial<ShellToolOptions> = {}, abortSignal?: AbortSignal): Promise<string> {
  // These cover the unsandboxed mode; shell-tool-sandbox.test.ts covers bubblewrap.
  const shell = shellTool({ workingDirectory, sandbox: 'none', ...options });
  assert.ok(shell.execute);
  const result = await shell.execute({ command }, { toolCallId: 'call-1', messages: [], context: undefined, ...(abortSignal ? { abortSignal } : {}) });
  assert.equal(typeof result, 'string');
  return result as string;
}

/** Live (non-zombie) processes of a process group. */
function liveMembers(pgid: number): string[] {
  const table = execFileSync('ps', ['-A', '-o', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && stat !== undefined && !stat.startsWith('Z'))
    .map((fields) => fields.join(' '));
}

/** Whether `pid` is running; a zombie counts as ended. */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function kill(pid: number): void {
  try {
    if (pid > 0) process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Starts `sleep seconds` in a session of its own (`redirect` applied) and waits
 * until it has left the shell's group, so the shell's end cannot take it
 * along; then prints its pid as `escapee=`.
 */
function detached(seconds: string, redirect = ''): string {
  return `setsid sleep ${seconds}${redirect} & pid=$!; while [ "$(ps -o pgid= -p $pid | tr -d " ")" = "$$" ]; do sleep 0.01; done; echo "escapee=$pid"`;
}

function escapeeOf(output: string): number {
  return Number(/escapee=(\d+)/.exec(output)?.[1] ?? 0);
}

function groupOf(output: string): number {
  const match = /pgid=(\d+)/.exec(output);
  assert.ok(match, output);
  return Number(match[1]);
}

describe('shellTool', () => {
  test('returns the exit code and the output of stdout and stderr together', async () => {
    const result = await run('echo out; echo err >&2; exit 3');
    assert.match(result, /^exit code: 3\n/);
    assert.match(result, /out\nerr/);
  });

  test('runs in the working directory', async () => {
    const result = await run('pwd');
    assert.match(result, new RegExp(`^exit code: 0\\n${workingDirectory}\\n$`));
  });

  test('a timeout kills the command and every process of its group', async () => {
    const result = await run(`echo "pgid=$$"; sh -c 'sleep 100 & sleep 100; wait'`, { commandTimeoutMs: 300, killGraceMs: 200 });
    assert.match(result, /timed out after 300 ms/);
    assert.deepEqual(liveMembers(groupOf(result)), []);
  });

  test('a timeout tells the model what was killed, and that a process that detached itself may live on', async () => {
    const result = await run(`${detached('30', ' > /dev/null 2>&1')}; sleep 30`, { commandTimeoutMs: 1000, killGraceMs: 100 });
    const escapee = escapeeOf(result);
    try {
      assert.ok(escapee > 0, result);
      assert.match(
        result,
        /^timed out after 1000 ms: the command's process group was killed; without a sandbox, a process that detached itself \(setsid\) may still be running\n/,
      );
      assert.doesNotMatch(result, /every process/);
      // The caveat is real: the escapee outlived the kill.
      assert.equal(isRunning(escapee), true);
    } finally {
      kill(escapee);
    }
  });

  test('a timeout also kills processes that ignore SIGTERM', async () => {
    const result = await run(`echo "pgid=$$"; trap '' TERM; sh -c "trap '' TERM; sleep 100"`, { commandTimeoutMs: 300, killGraceMs: 100 });
    assert.match(result, /timed out/);
    assert.deepEqual(liveMembers(groupOf(result)), []);
  });

  test('aborting the tool call kills the process group and rejects with the reason', async () => {
    const controller = new AbortController();
    const shell = shellTool({ workingDirectory, sandbox: 'none', commandTimeoutMs: 60_000 });
    const pending = shell.execute?.(
      { command: `echo "pgid=$$" > pgid.txt; sleep 100 & sleep 100; wait` },
      { toolCallId: 'c', messages: [], context: undefined, abortSignal: controller.signal },
    );
    const pgidFile = path.join(workingDirectory, 'pgid.txt');
    while (!existsSync(pgidFile) || !readFileSync(pgidFile, 'utf8').includes('\n')) await new Promise((r) => setTimeout(r, 10));
    const pgid = groupOf(readFileSync(pgidFile, 'utf8'));
    const reason = new Error('user pressed stop');
    controller.abort(reason);
    await assert.rejects(Promise.resolve(pending), (error) => error === reason);
    assert.deepEqual(liveMembers(pgid), []);
  });

  test('background processes left behind are terminated when the command ends', async () => {
    const result = await run('echo "pgid=$$"; sleep 100 > /dev/null 2>&1 &');
    assert.match(result, /^exit code: 0\n\(background processes the command left running in its process group were terminated\)/);
    const pgid = groupOf(result);
    // They get SIGTERM at once; give the kernel a moment to reap them.
    for (let i = 0; i < 100 && liveMembers(pgid).length > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(liveMembers(pgid), []);
  });

  test('a process that leaves the group and keeps the output open cannot hang the tool', async () => {
    const result = await run(detached('30'), { killGraceMs: 50 });
    const escapee = escapeeOf(result);
    try {
      assert.match(result, /^exit code: 0\n/);
      assert.match(result, /a detached process still holds the output open/);
    } finally {
      kill(escapee);
    }
  });

  test('a command that exited is reported with its exit code, even when a detached process holds the output past the timeout', async () => {
    // The shell exits at once; reading goes on for killGraceMs + 250 ms after that, past commandTimeoutMs.
    const result = await run(`${detached('30')}; exit 4`, { commandTimeoutMs: 1000, killGraceMs: 1000 });
    const escapee = escapeeOf(result);
    try {
      assert.ok(escapee > 0, result);
      assert.match(result, /^exit code: 4\n\(a detached process still holds the output open; the rest of its output is not shown\)\n/);
      // As the note says: it is still running.
      assert.equal(isRunning(escapee), true);
    } finally {
      kill(escapee);
    }
  });

  test('caps the output, keeping head and tail, and says how much was cut', async () => {
    const result = await run(`printf 'HEAD '; head -c 5000 /dev/zero | tr '\\0' x; printf ' TAIL'`, { maxOutputBytes: 100 });
    assert.match(result, /^exit code: 0\nHEAD \n/);
    assert.match(result, /\n TAIL$/);
    // The run of x's the cuts went through is cut whole.
    assert.match(result, /\[\.\.\. 5000 bytes cut: output was 5010 bytes/);
    assert.ok(result.length < 400, `${result.length} characters`);
  });

  test('refuses a command that writes outside the working directory, without running it', async () => {
    const outside = path.join(path.dirname(workingDirectory), `outside-${path.basename(workingDirectory)}.txt`);
    const result = await run(`echo pwned > ${outside}`);
    assert.match(result, /^Command refused, not run/);
    assert.equal(existsSync(outside), false);
  });

  test('does not pass secrets from the parent environment', async () => {
    process.env['FOO_API_KEY'] = 'sk-fake-123';
    process.env['GOVERNOR_TEST_PLAIN'] = 'visible';
    try {
      const result = await run('env');
      assert.doesNotMatch(result, /FOO_API_KEY|sk-fake-123/);
      assert.match(result, /GOVERNOR_TEST_PLAIN=visible/);
      assert.match(await run('env', { passEnv: 'all' }), /FOO_API_KEY=sk-fake-123/);
    } finally {
      delete process.env['FOO_API_KEY'];
      delete process.env['GOVERNOR_TEST_PLAIN'];
    }
  });

  test('HOME and TMPDIR are a private directory inside the working directory', async () => {
    const result = await run('echo "$HOME|$TMPDIR"; touch ~/scratch');
    const temp = path.join(workingDirectory, SHELL_TEMP_DIRECTORY);
    assert.match(result, new RegExp(`${temp}\\|${temp}`));
    assert.equal(existsSync(path.join(temp, 'scratch')), true);
  });

  test('withholds the credentials a name filter used to miss: passphrases, *_CREDS, webhook URLs', async () => {
    const planted = {
      GPG_PASSPHRASE: 'correct horse battery staple',
      MAVEN_GPG_PASSPHRASE: 'hunter2hunter2',
      REGISTRY_CREDS: 'deploy:pa55word',
      DISCORD_WEBHOOK: 'https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwx',
      NOTIFY_URL: 'https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwx',
      OPENAI_API_KEY: 'sk-test',
      GITHUB_TOKEN: 'x',
      GOVERNOR_TEST_PLAIN: 'visible',
    };
    Object.assign(process.env, planted);
    try {
      const result = await run('env');
      for (const [name, value] of Object.entries(planted)) {
        if (name === 'GOVERNOR_TEST_PLAIN') continue;
        assert.doesNotMatch(result, new RegExp(`^${name}=`, 'm'), name);
        assert.ok(!result.includes(value.length > 4 ? value : `=${value}\n`), value);
      }
      assert.match(result, /^GOVERNOR_TEST_PLAIN=visible$/m);
      assert.match(result, /^PATH=/m);
    } finally {
      for (const name of Object.keys(planted)) delete process.env[name];
    }
  });

  test('a link a command plants in the working directory never makes the tool write through it', async () => {
    const outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'shell-tool-outside-')));
    try {
      const victim = path.join(outside, 'victim.txt');
      writeFileSync(victim, 'precious data\n');
      await run('true');
      await run(`ln -sf ${victim} .governor-tmp/.gitignore`);
      assert.match(await run('echo ok'), /^exit code: 0\nok\n$/);
      await run(`rm -rf .governor-tmp; ln -s ${outside} .governor-tmp`);
      assert.match(await run('echo ok'), /^exit code: 0\nok\n$/);
      await run(`rm .governor-tmp; ln -s ${outside}/created .governor-tmp`);
      assert.match(await run('echo ok'), /^exit code: 0\nnote: .* is not a directory\nok\n$/);
      assert.equal(readFileSync(victim, 'utf8'), 'precious data\n');
      assert.deepEqual(readdirSync(outside), ['victim.txt']);
      await run('rm .governor-tmp');
      assert.match(await run('cat ~/.gitignore'), /^exit code: 0\n\*\n$/);
      assert.equal(lstatSync(path.join(workingDirectory, SHELL_TEMP_DIRECTORY)).isDirectory(), true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
      // A link left by a failed assertion must not change what later tests see.
      if (lstatSync(path.join(workingDirectory, SHELL_TEMP_DIRECTORY), { throwIfNoEntry: false })?.isSymbolicLink())
        rmSync(path.join(workingDirectory, SHELL_TEMP_DIRECTORY));
    }
  });

  test('explicit variables are set and can remove inherited ones', async () => {
    process.env['GOVERNOR_TEST_DROP'] = 'x';
    try {
      const result = await run('echo "[$GREETING][${GOVERNOR_TEST_DROP-unset}]"', { env: { GREETING: 'hi', GOVERNOR_TEST_DROP: undefined } });
      assert.match(result, /\[hi\]\[unset\]/);
    } finally {
      delete process.env['GOVERNOR_TEST_DROP'];
    }
  });

  test('stdin is empty, so a command reading it ends', async () => {
    assert.match(await run('cat; echo done'), /^exit code: 0\ndone/);
  });

  test('the working directory must exist', () => {
    assert.throws(
      () => shellTool({ workingDirectory: path.join(workingDirectory, 'missing') }),
      (error) => error instanceof InvalidOptionError && error.option === 'workingDirectory',
    );
    const file = path.join(workingDirectory, 'a-file');
    writeFileSync(file, '');
    assert.throws(() => shellTool({ workingDirectory: file }), InvalidOptionError);
  });

  test('rejects out-of-range options', () => {
    assert.throws(
      () => shellTool({ workingDirectory, commandTimeoutMs: 0 }),
      (e) => e instanceof InvalidOptionError && e.option === 'commandTimeoutMs',
    );
    assert.throws(
      () => shellTool({ workingDirectory, maxOutputBytes: 1.5 }),
      (e) => e instanceof InvalidOptionError && e.option === 'maxOutputBytes',
    );
    assert.throws(
      () => shellTool({ workingDirectory, passEnv: 'none' as 'all' }),
      (e) => e instanceof InvalidOptionError && e.option === 'passEnv',
    );
    assert.throws(
      () => shellTool({ workingDirectory, sandbox: 'docker' as 'none' }),
      (e) => e instanceof InvalidOptionError && e.option === 'sandbox',
    );
    assert.throws(
      () => shellTool({ workingDirectory, network: 'yes' as unknown as boolean }),
      (e) => e instanceof InvalidOptionError && e.option === 'network',
    );
  });
});
