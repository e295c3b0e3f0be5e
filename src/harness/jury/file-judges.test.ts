import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

test('bad arguments are rejected at construction', () => {
  assert.throws(() => fileExistsJudge(''), InvalidOptionError);
  assert.throws(
    () => fileContainsJudge('a', ''),
    (e) => e instanceof InvalidOptionError && e.option === 'expected',
  );
});
