import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { probeBubblewrap } from '../sandbox.ts';
import { hostProcessesWith, outsideTmpDirectory } from '../../test-support/sandbox-fixtures.ts';
import { commandJudge } from './command-judge.ts';

const probe = probeBubblewrap();
const skip = probe.usable ? false : `bubblewrap cannot run here: ${probe.reason}`;
if (skip) console.log(`# skipping the judge sandbox tests: ${skip}`);

const goal = 'make check.sh pass';

let root: string;
let workingDirectory: string;
let outside: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(outsideTmpDirectory(), 'governor-judge-sandbox-')));
  workingDirectory = path.join(root, 'work');
  outside = path.join(root, 'outside');
  mkdirSync(workingDirectory);
  mkdirSync(outside);
});
after(() => rmSync(root, { recursive: true, force: true }));

/** Writes the agent's script into the working directory, as an agent would. */
function script(body: string): void {
  writeFileSync(path.join(workingDirectory, 'check.sh'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

describe('commandJudge runs the agent-written command in the sandbox by default', { skip }, () => {
  test('the command can write in its directory and nowhere else', async () => {
    const marker = path.join(outside, 'escaped.txt');
    script(`echo inside > made-here.txt\necho "written from the judge" > ${marker}`);
    for (const options of [{}, { network: true }]) {
      const verdict = await commandJudge('./check.sh', options).judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'fail', verdict.reasoning);
      assert.equal(existsSync(marker), false, `the host file was written (${JSON.stringify(options)})`);
      assert.equal(readFileSync(path.join(workingDirectory, 'made-here.txt'), 'utf8'), 'inside\n');
    }
  });

  test('the command cannot reach the network unless network is set', async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.on('error', () => undefined); // the client leaves at once
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const connect = `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))"`;
      const verdict = await commandJudge(connect).judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'fail', verdict.reasoning);
      assert.equal(connections, 0);
      // The same command connects when the network is given: what failed above was the sandbox, not the command.
      assert.equal((await commandJudge(connect, { network: true }).judge({ goal, workingDirectory })).status, 'pass');
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
  });

  test('the command cannot read a variable of the host process, even under an innocent name; env is passed', async () => {
    process.env['GOVERNOR_BUILD_NOTE'] = 'innocent-name-value-7f3a';
    try {
      script('env; tr "\\0" "\\n" < /proc/$PPID/environ; echo "note=$GOVERNOR_BUILD_NOTE"');
      const verdict = await commandJudge('./check.sh', { env: { GIVEN: 'given-value' }, maxOutputBytes: 20_000 }).judge({ goal, workingDirectory });
      assert.doesNotMatch(verdict.reasoning, /innocent-name-value-7f3a/);
      assert.match(verdict.reasoning, /GIVEN=given-value/);
      // passEnv only applies without a sandbox.
      const all = await commandJudge('./check.sh', { passEnv: 'all' }).judge({ goal, workingDirectory });
      assert.doesNotMatch(all.reasoning, /innocent-name-value-7f3a/);
    } finally {
      delete process.env['GOVERNOR_BUILD_NOTE'];
    }
  });

  test('a daemon the command starts with setsid does not survive the judge', async () => {
    const marker = `9${process.pid}.75`;
    script(`setsid sh -c 'sleep ${marker}' > /dev/null 2>&1 < /dev/null &\nsleep 0.3\nexit 0`);
    try {
      const verdict = await commandJudge('./check.sh').judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'pass', verdict.reasoning);
      for (let i = 0; i < 50 && hostProcessesWith(marker).length > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(hostProcessesWith(marker), []);
    } finally {
      // Only what this test started: processes carrying its marker.
      for (const pid of hostProcessesWith(marker)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
  });

  test('cwd runs the command in a subdirectory, with the whole working directory writable', async () => {
    mkdirSync(path.join(workingDirectory, 'pkg'), { recursive: true });
    const verdict = await commandJudge('pwd && echo up > ../from-pkg.txt', { cwd: 'pkg' }).judge({ goal, workingDirectory });
    assert.equal(verdict.status, 'pass', verdict.reasoning);
    assert.match(verdict.reasoning, /work\/pkg/);
    assert.equal(readFileSync(path.join(workingDirectory, 'from-pkg.txt'), 'utf8'), 'up\n');
  });

  test("sandbox: 'none' runs on the host, with passEnv filtering", async () => {
    const marker = path.join(outside, 'unsandboxed.txt');
    process.env['GOVERNOR_JUDGE_TOKEN'] = 'secret-token-value-1234';
    try {
      const verdict = await commandJudge(`env; echo x > ${marker}`, { sandbox: 'none' }).judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'pass', verdict.reasoning);
      assert.equal(existsSync(marker), true);
      assert.doesNotMatch(verdict.reasoning, /secret-token-value-1234/);
    } finally {
      delete process.env['GOVERNOR_JUDGE_TOKEN'];
      rmSync(marker, { force: true });
    }
  });
});

describe('commandJudge without bubblewrap', () => {
  const run = promisify(execFile);
  const harness = new URL('../index.ts', import.meta.url).href;

  test("'auto' falls back to no sandbox with the shell tool's warning, once per process; 'bubblewrap' is refused", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'judge-no-bwrap-'));
    try {
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { shellTool, commandJudge } = await import(${JSON.stringify(harness)});
           process.on('warning', (w) => console.log('WARNING', w.code, w.message));
           const verdict = await commandJudge('echo ran').judge({ goal: 'g', workingDirectory: process.env.DIR });
           console.log('VERDICT', verdict.status);
           commandJudge('true', { sandbox: 'auto' });
           shellTool({ workingDirectory: process.env.DIR });
           try { commandJudge('true', { sandbox: 'bubblewrap' }); } catch (e) { console.log('THROWN', e.name); }
           await new Promise((r) => setTimeout(r, 50));`,
        ],
        { env: { PATH: dir, DIR: dir } },
      );
      const warnings = stdout.split('\n').filter((line) => line.startsWith('WARNING'));
      assert.deepEqual(warnings, [
        'WARNING GOVERNOR_NO_SANDBOX commands run without a sandbox, and can read the environment of this process: bwrap is not installed (not found on PATH)',
      ]);
      assert.match(stdout, /VERDICT pass/);
      assert.match(stdout, /THROWN SandboxUnavailableError/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
