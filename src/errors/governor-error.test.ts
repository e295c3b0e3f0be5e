import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GovernorError, InvalidOptionError } from './governor-error.ts';
import { MissingDependencyError } from './missing-dependency-error.ts';

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
