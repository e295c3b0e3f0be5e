import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GovernorError } from '../errors/governor-error.ts';
import {
  AgentBreakerError,
  BREAKER_CATEGORIES,
  BreakerOpenError,
  BreakerUnavailableError,
  BudgetExceededError,
  CycleError,
  DelegationLoopError,
  ErrorLoopError,
  RagFixationError,
  TextRepetitionError,
  TokenDriftError,
  ToolSpiralError,
  breakerErrorFor,
} from './index.ts';

describe('breaker errors', () => {
  test('one class per category, all AgentBreakerError and GovernorError, carrying category and evidence', () => {
    const classes = {
      tool_spiral: ToolSpiralError,
      cycle: CycleError,
      error_loop: ErrorLoopError,
      token_drift: TokenDriftError,
      rag_fixation: RagFixationError,
      delegation_loop: DelegationLoopError,
      text_repetition: TextRepetitionError,
      budget: BudgetExceededError,
    };
    for (const category of BREAKER_CATEGORIES) {
      const error = breakerErrorFor({ action: 'stop', category, reason: 'detection', message: 'stopped', evidence: { detail: 'd', repeats: 4 } }, 's1');
      assert.ok(error instanceof classes[category], category);
      assert.ok(error instanceof AgentBreakerError);
      assert.ok(error instanceof GovernorError);
      assert.equal((error as AgentBreakerError).category, category);
      assert.equal((error as AgentBreakerError).evidence?.repeats, 4);
      assert.equal((error as AgentBreakerError).sessionId, 's1');
      assert.match(error.code, /^GOVERNOR_BREAKER_/);
      assert.equal(error.name, classes[category].name);
    }
  });

  test('refusals while OPEN and store outages get their own classes', () => {
    const open = breakerErrorFor({ action: 'stop', category: 'cycle', reason: 'breaker_open', message: 'open' });
    assert.ok(open instanceof BreakerOpenError);
    assert.equal(open.code, 'GOVERNOR_BREAKER_OPEN');
    assert.equal((open as BreakerOpenError).category, 'cycle');
    const unavailable = breakerErrorFor({ action: 'stop', reason: 'store_unavailable', message: 'down' });
    assert.ok(unavailable instanceof BreakerUnavailableError);
    assert.equal(unavailable.code, 'GOVERNOR_BREAKER_UNAVAILABLE');
  });
});
