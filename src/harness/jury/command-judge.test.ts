import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { commandJudge } from './command-judge.ts';

let workingDirectory: string;
before(() => {
  workingDirectory = mkdtempSync(path.join(tmpdir(), 'command-judge-'));
  mkdirSync(path.join(workingDirectory, 'pkg'));
});
after(() => rmSync(workingDirectory, { recursive: true, force: true }));

const goal = 'fix the build';

test('exit code 0 passes with score 1 and quotes the output', async () => {
  const verdict = await commandJudge('echo all green').judge({ goal, workingDirectory });
  assert.equal(verdict.status, 'pass');
  assert.equal(verdict.score, 1);
  assert.match(verdict.reasoning, /all green/);
  assert.equal(verdict.judge, 'command: echo all green');
});

test('a non-zero exit code fails with score 0', async () => {
  const verdict = await commandJudge('echo "2 tests failed" >&2; exit 1', { name: 'tests' }).judge({ goal, workingDirectory });
  assert.deepEqual([verdict.judge, verdict.status, verdict.score], ['tests', 'fail', 0]);
  assert.match(verdict.reasoning, /exited with code 1[\s\S]*2 tests failed/);
});

test('runs in the working directory, or in cwd resolved against it', async () => {
  assert.match((await commandJudge('pwd').judge({ goal, workingDirectory })).reasoning, new RegExp(path.basename(workingDirectory)));
  assert.match((await commandJudge('pwd', { cwd: 'pkg' }).judge({ goal, workingDirectory })).reasoning, /pkg/);
});

test('a command that runs out of time fails', async () => {
  const verdict = await commandJudge('sleep 30', { timeoutMs: 100 }).judge({ goal, workingDirectory });
  assert.equal(verdict.status, 'fail');
  assert.match(verdict.reasoning, /did not finish within 100 ms/);
});

test("sandbox: 'none': a command that exits 0 passes, though a setsid daemon it started outlives it and holds the output past timeoutMs", async () => {
  // The daemon leaves the shell's group before the shell exits, so the group's kill cannot take it along.
  const command = 'setsid sleep 30 & pid=$!; while [ "$(ps -o pgid= -p $pid | tr -d " ")" = "$$" ]; do sleep 0.01; done; echo "daemon=$pid"';
  const started = Date.now();
  const verdict = await commandJudge(command, { sandbox: 'none', timeoutMs: 1000 }).judge({ goal, workingDirectory });
  const daemon = Number(/daemon=(\d+)/.exec(verdict.reasoning)?.[1] ?? 0);
  try {
    assert.ok(daemon > 0, verdict.reasoning);
    assert.equal(verdict.status, 'pass', verdict.reasoning);
    assert.match(verdict.reasoning, /exited with code 0/);
    // The judge stopped reading the held output instead of waiting for the daemon.
    assert.ok(Date.now() - started < 10_000);
    // Without a sandbox nothing can follow a process into a session of its own: the daemon is still running.
    assert.doesNotMatch(readFileSync(`/proc/${daemon}/stat`, 'utf8'), /^\d+ \(.*\) Z/s);
  } finally {
    try {
      if (daemon > 0) process.kill(daemon, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

test('a command that cannot start is an error, not a fail', async () => {
  const notFound = await commandJudge('definitely-not-a-command-xyz').judge({ goal, workingDirectory });
  assert.equal(notFound.status, 'error');
  const noDirectory = await commandJudge('true', { cwd: 'missing-dir' }).judge({ goal, workingDirectory });
  assert.equal(noDirectory.status, 'error');
  assert.match(noDirectory.reasoning, /could not be started/);
});

test('abstains without any directory to run in', async () => {
  assert.equal((await commandJudge('true').judge({ goal })).status, 'abstain');
});

test('does not pass credential-like variables to the command by default', async () => {
  process.env['JUDGE_TEST_TOKEN'] = 'secret-value';
  try {
    const verdict = await commandJudge('env').judge({ goal, workingDirectory });
    assert.doesNotMatch(verdict.reasoning, /secret-value/);
  } finally {
    delete process.env['JUDGE_TEST_TOKEN'];
  }
});

test('an abort kills the command and rejects with the reason', async () => {
  const controller = new AbortController();
  const reason = new Error('run cancelled');
  const pending = commandJudge('sleep 30').judge({ goal, workingDirectory }, controller.signal);
  setImmediate(() => controller.abort(reason));
  await assert.rejects(pending, (error) => error === reason);
});

test('bad options are rejected at construction', () => {
  assert.throws(
    () => commandJudge(''),
    (e) => e instanceof InvalidOptionError && e.option === 'command',
  );
  assert.throws(
    () => commandJudge('true', { timeoutMs: -1 }),
    (e) => e instanceof InvalidOptionError && e.option === 'timeoutMs',
  );
});
