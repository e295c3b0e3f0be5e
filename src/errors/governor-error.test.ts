import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GovernorError, InvalidOptionError } from './governor-error.ts';
import { importOptional, MissingDependencyError } from './missing-dependency-error.ts';

test('isInstance recognises the class and its subclasses, also for a copy without the prototype', () => {
  const error = new InvalidOptionError('window', 'must be a positive integer');
  assert.equal(InvalidOptionError.isInstance(error), true);
  assert.equal(GovernorError.isInstance(error), true);
  assert.equal(MissingDependencyError.isInstance(error), false);
  // What another copy of the package throws: same marker, different prototype chain.
  const foreign = Object.assign(new Error('x'), { [Symbol.for('agent-governor.error')]: ['InvalidOptionError', 'GovernorError'] });
  assert.equal(InvalidOptionError.isInstance(foreign), true);
  assert.equal(GovernorError.isInstance(new Error('plain')), false);
  assert.equal(GovernorError.isInstance(null), false);
  assert.equal(error.name, 'InvalidOptionError');
  assert.equal(error.code, 'GOVERNOR_INVALID_OPTION');
});

test('importOptional names the package to install when it is missing', async () => {
  await assert.rejects(
    importOptional('no-such-package-xyz', 'The thing', () => import('no-such-package-xyz' as string)),
    (error: unknown) =>
      MissingDependencyError.isInstance(error) && error.packageName === 'no-such-package-xyz' && /npm install no-such-package-xyz/.test(error.message),
  );
  assert.equal(await importOptional('node:path', 'Paths', async () => 42), 42);
});
