import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { fileContainsJudge, fileExistsJudge } from './file-judges.ts';

let workingDirectory: string;
before(() => {
  workingDirectory = mkdtempSync(path.join(tmpdir(), 'file-judges-'));
  writeFileSync(path.join(workingDirectory, 'README.md'), '# Title\nAll tests pass.\n');
  mkdirSync(path.join(workingDirectory, 'src'));
});
after(() => rmSync(workingDirectory, { recursive: true, force: true }));

const goal = 'write a README';

test('fileExistsJudge passes for an existing file or directory and fails for a missing one', async () => {
  assert.equal((await fileExistsJudge('README.md').judge({ goal, workingDirectory })).status, 'pass');
  assert.equal((await fileExistsJudge('src').judge({ goal, workingDirectory })).status, 'pass');
  const missing = await fileExistsJudge('docs/guide.md').judge({ goal, workingDirectory });
  assert.equal(missing.status, 'fail');
  assert.equal(missing.score, 0);
});

test('fileExistsJudge abstains without a working directory for a relative path, and accepts an absolute one', async () => {
  assert.equal((await fileExistsJudge('README.md').judge({ goal })).status, 'abstain');
  assert.equal((await fileExistsJudge(path.join(workingDirectory, 'README.md')).judge({ goal })).status, 'pass');
});

test('fileContainsJudge matches text and regular expressions', async () => {
  assert.equal((await fileContainsJudge('README.md', 'tests pass').judge({ goal, workingDirectory })).status, 'pass');
  assert.equal((await fileContainsJudge('README.md', /^# \w+$/m).judge({ goal, workingDirectory })).status, 'pass');
  const absent = await fileContainsJudge('README.md', 'License').judge({ goal, workingDirectory });
  assert.equal(absent.status, 'fail');
  assert.match(absent.reasoning, /does not contain "License"/);
});

test('fileContainsJudge gives the same answer every time with a global RegExp', async () => {
  const judge = fileContainsJudge('README.md', /tests/g);
  for (let i = 0; i < 3; i += 1) assert.equal((await judge.judge({ goal, workingDirectory })).status, 'pass');
});

test('fileContainsJudge fails for a missing file or a directory and abstains without a working directory', async () => {
  assert.equal((await fileContainsJudge('nope.md', 'x').judge({ goal, workingDirectory })).status, 'fail');
  assert.equal((await fileContainsJudge('src', 'x').judge({ goal, workingDirectory })).status, 'fail');
  assert.equal((await fileContainsJudge('README.md', 'x').judge({ goal })).status, 'abstain');
});

describe('what the agent left in the working directory is judged as its work only', () => {
  let outside: string;
  before(() => {
    outside = mkdtempSync(path.join(tmpdir(), 'file-judges-outside-'));
    writeFileSync(path.join(outside, 'host.txt'), 'All tests pass.\n');
    symlinkSync(path.join(outside, 'host.txt'), path.join(workingDirectory, 'report.txt'));
    symlinkSync('README.md', path.join(workingDirectory, 'summary.md'));
    symlinkSync('/dev/zero', path.join(workingDirectory, 'zero.txt'));
    execFileSync('mkfifo', [path.join(workingDirectory, 'pipe.txt')]);
  });
  after(() => rmSync(outside, { recursive: true, force: true }));

  test('a link out of the working directory is not read, and does not count as the file', async () => {
    for (const judge of [fileContainsJudge('report.txt', 'tests pass'), fileExistsJudge('report.txt')]) {
      const verdict = await judge.judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'fail', judge.name);
      assert.match(verdict.reasoning, /outside the working directory/);
    }
    // A link to /dev/zero would be read until memory runs out.
    const zero = await fileContainsJudge('zero.txt', 'x').judge({ goal, workingDirectory });
    assert.equal(zero.status, 'fail');
    assert.match(zero.reasoning, /outside the working directory/);
  });

  test("a name starting with two dots is inside, and a path the caller names outside is the caller's choice", async () => {
    writeFileSync(path.join(workingDirectory, '..notes.md'), 'All tests pass.\n');
    assert.equal((await fileContainsJudge('..notes.md', 'tests pass').judge({ goal, workingDirectory })).status, 'pass');
    const sibling = path.relative(workingDirectory, path.join(outside, 'host.txt'));
    assert.ok(sibling.startsWith('..'));
    assert.equal((await fileContainsJudge(sibling, 'tests pass').judge({ goal, workingDirectory })).status, 'pass');
    assert.equal((await fileExistsJudge(sibling).judge({ goal, workingDirectory })).status, 'pass');
  });

  test('a link that stays inside the working directory is followed', async () => {
    assert.equal((await fileContainsJudge('summary.md', 'tests pass').judge({ goal, workingDirectory })).status, 'pass');
    assert.equal((await fileExistsJudge('summary.md').judge({ goal, workingDirectory })).status, 'pass');
  });

  test('a FIFO or a device is refused at once, not waited on or read', async () => {
    const timeout = new Promise<'waiting'>((resolve) => setTimeout(resolve, 2_000, 'waiting').unref());
    const verdict = await Promise.race([fileContainsJudge('pipe.txt', 'x').judge({ goal, workingDirectory }), timeout]);
    assert.notEqual(verdict, 'waiting', 'the judge waited for a writer on the FIFO');
    assert.equal(typeof verdict === 'object' && verdict.status, 'fail');
    assert.match(typeof verdict === 'object' ? verdict.reasoning : '', /not a regular file/);
    const device = await fileContainsJudge('/dev/null', 'x').judge({ goal });
    assert.equal(device.status, 'fail');
    assert.match(device.reasoning, /not a regular file/);
  });

  test('a file larger than maxBytes is an error, not read whole', async () => {
    writeFileSync(path.join(workingDirectory, 'big.log'), 'x'.repeat(2048));
    const verdict = await fileContainsJudge('big.log', 'x', { maxBytes: 1024 }).judge({ goal, workingDirectory });
    assert.equal(verdict.status, 'error');
    assert.match(verdict.reasoning, /larger than maxBytes \(1024 bytes\)/);
    assert.equal((await fileContainsJudge('big.log', 'x', { maxBytes: 2048 }).judge({ goal, workingDirectory })).status, 'pass');
    assert.throws(
      () => fileContainsJudge('big.log', 'x', { maxBytes: 0 }),
      (e) => e instanceof InvalidOptionError && e.option === 'maxBytes',
    );
  });
});

test('bad arguments are rejected at construction', () => {
  assert.throws(() => fileExistsJudge(''), InvalidOptionError);
  assert.throws(
    () => fileContainsJudge('a', ''),
    (e) => e instanceof InvalidOptionError && e.option === 'expected',
  );
});
