import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readShellOutput } from './shell-output.ts';

test('readShellOutput: every command in order; one that did not exit 0, or timed out, makes the run a failure', () => {
  assert.deepEqual(
    readShellOutput([
      { stdout: 'On branch main', stderr: '', outcome: { type: 'exit', exitCode: 0 } },
      { stdout: '', stderr: 'npm ERR! missing script: tset', outcome: { type: 'exit', exitCode: 1 } },
    ]),
    { text: 'On branch main\nexit code 1\nnpm ERR! missing script: tset', error: true },
  );
  assert.deepEqual(readShellOutput([{ stdout: 'done', stderr: 'warning: x', outcome: { type: 'exit', exit_code: 0 } }]), {
    text: 'done\nwarning: x',
    error: false,
  });
  // An exit code the shell could not tell (null) is not a failure by itself.
  assert.deepEqual(readShellOutput([{ stdout: 'ok', stderr: '', outcome: { type: 'exit', exitCode: null } }]), { text: 'ok', error: false });
  assert.deepEqual(readShellOutput([{ stdout: 'partial', outcome: { type: 'timeout' } }]), { text: 'timed out\npartial', error: true });
  assert.deepEqual(readShellOutput('not a list'), { text: '', error: false });
  assert.deepEqual(readShellOutput([null, 3, { stdout: 'kept' }]), { text: 'kept', error: false });
});
