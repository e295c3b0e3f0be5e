import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GovernorError } from '../errors/governor-error.ts';
import { decodeState, InvalidStateError } from './state-codec.ts';
import { storeFailureReason } from './store-failure-reason.ts';

function failure(text: string): unknown {
  try {
    decodeState(text);
  } catch (error) {
    // As a store wraps what it cannot decode.
    return new GovernorError('GOVERNOR_BREAKER_STORE', 'Breaker store read failed: stored snapshot is not a session state', { cause: error });
  }
  assert.fail(`${text} decoded`);
}

describe('storeFailureReason', () => {
  test("names a Governor error's code and the Governor errors it wraps, never what a parser quotes", () => {
    const stored = 'G1[["tool name with a private path /home/alice"],{"v":1,';
    const reason = storeFailureReason(failure(stored));
    assert.equal(
      reason,
      'GOVERNOR_BREAKER_STORE: Breaker store read failed: stored snapshot is not a session state; caused by GOVERNOR_INVALID_STATE: Not a stored breaker session state: not valid JSON',
    );
    assert.ok(InvalidStateError.isInstance((failure(stored) as Error).cause));
    assert.doesNotMatch(reason, /alice/, "JSON.parse's message quotes the stored text; it is left out");
  });

  test('any other error: its name and message on one line, secrets masked, at most 400 characters', () => {
    assert.equal(storeFailureReason(new Error('connect ECONNREFUSED 127.0.0.1:6379')), 'connect ECONNREFUSED 127.0.0.1:6379');
    assert.equal(
      storeFailureReason(new TypeError("Cannot read properties of undefined (reading 'tools')")),
      "TypeError: Cannot read properties of undefined (reading 'tools')",
    );
    assert.equal(storeFailureReason(new Error('AUTH failed\n  password=hunter2\n')), 'AUTH failed password=[REDACTED]');
    assert.equal(storeFailureReason('timed out'), 'timed out');
    assert.equal(storeFailureReason(new Error('')), 'Error');
    const long = storeFailureReason(new Error('x'.repeat(1000)));
    assert.equal(long.length, 400);
    assert.ok(long.endsWith('…'));
  });
});
