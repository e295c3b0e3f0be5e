import { GovernorError, type GovernorErrorCode } from '../errors/governor-error.ts';
import type { BreakerCategory, BreakerDecision, BreakerEvidence } from './breaker-decision.ts';

/**
 * Base class of the errors a breaker stop turns into. Carries the loop
 * category, the evidence and the numbers, so a caller can branch on the kind
 * of loop rather than parse a message.
 */
export class AgentBreakerError extends GovernorError {
  /** One code per loop category, or `GOVERNOR_BREAKER_OPEN` for a call refused while the breaker is open. */
  declare readonly code: Exclude<Extract<GovernorErrorCode, `GOVERNOR_BREAKER_${string}`>, 'GOVERNOR_BREAKER_UNAVAILABLE' | 'GOVERNOR_BREAKER_STORE'>;
  /** The loop type (for an open breaker: the type that opened it). */
  readonly category: BreakerCategory;
  /** The numbers behind the stop. */
  readonly evidence: BreakerEvidence | undefined;
  /** The session the breaker stopped, when known. */
  readonly sessionId: string | undefined;

  constructor(code: AgentBreakerError['code'], category: BreakerCategory, message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super(code, message);
    this.category = category;
    this.evidence = evidence;
    this.sessionId = sessionId;
  }
}

/** The same tool called again and again with near-identical arguments and nothing new coming back. */
export class ToolSpiralError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_TOOL_SPIRAL';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_TOOL_SPIRAL', 'tool_spiral', message, evidence, sessionId);
  }
}

/** A short sequence of calls (A, B, A, B …) repeating with unchanged results. */
export class CycleError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_CYCLE';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_CYCLE', 'cycle', message, evidence, sessionId);
  }
}

/** The same call failing with the same error again and again. */
export class ErrorLoopError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_ERROR_LOOP';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_ERROR_LOOP', 'error_loop', message, evidence, sessionId);
  }
}

/** Prompt tokens growing geometrically round after round. */
export class TokenDriftError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_TOKEN_DRIFT';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_TOKEN_DRIFT', 'token_drift', message, evidence, sessionId);
  }
}

/** Near-identical retrieval queries that keep returning the same documents. */
export class RagFixationError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_RAG_FIXATION';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_RAG_FIXATION', 'rag_fixation', message, evidence, sessionId);
  }
}

/** A sub-agent asked the same thing again and again, or answering the same. */
export class DelegationLoopError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_DELEGATION_LOOP';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_DELEGATION_LOOP', 'delegation_loop', message, evidence, sessionId);
  }
}

/** The model repeating its own text. */
export class TextRepetitionError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_TEXT_REPETITION';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_TEXT_REPETITION', 'text_repetition', message, evidence, sessionId);
  }
}

/** The session's token or cost budget is spent. */
export class BudgetExceededError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_BUDGET';
  constructor(message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_BUDGET', 'budget', message, evidence, sessionId);
  }
}

/** A call rejected because the session's breaker is OPEN; `category` is what opened it. */
export class BreakerOpenError extends AgentBreakerError {
  declare readonly code: 'GOVERNOR_BREAKER_OPEN';
  constructor(category: BreakerCategory, message: string, evidence?: BreakerEvidence, sessionId?: string) {
    super('GOVERNOR_BREAKER_OPEN', category, message, evidence, sessionId);
  }
}

/**
 * The breaker's state store failed and the breaker is configured to fail
 * closed. Not a loop, so it has no category.
 */
export class BreakerUnavailableError extends GovernorError {
  declare readonly code: 'GOVERNOR_BREAKER_UNAVAILABLE';
  /** The session whose call was refused, when known. */
  readonly sessionId: string | undefined;

  constructor(message: string, sessionId?: string, options?: { cause?: unknown }) {
    super('GOVERNOR_BREAKER_UNAVAILABLE', message, options);
    this.sessionId = sessionId;
  }
}

/**
 * Thrown by a governed AI SDK tool whose output has a type of its own
 * (`outputSchema` or `toModelOutput`) in place of running a call the breaker
 * blocked: a text in its place would not be that type, so the AI SDK hands the
 * model this error's message (the breaker's explanation) as the tool's error.
 */
export class ToolCallBlockedError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_CALL_BLOCKED';
  constructor(message: string) {
    super('GOVERNOR_TOOL_CALL_BLOCKED', message);
  }
}

const BY_CATEGORY: Record<BreakerCategory, new (message: string, evidence?: BreakerEvidence, sessionId?: string) => AgentBreakerError> = {
  tool_spiral: ToolSpiralError,
  cycle: CycleError,
  error_loop: ErrorLoopError,
  token_drift: TokenDriftError,
  rag_fixation: RagFixationError,
  delegation_loop: DelegationLoopError,
  text_repetition: TextRepetitionError,
  budget: BudgetExceededError,
};

/**
 * The error to throw for a non-`allow` decision: the category's class for a
 * fresh detection, {@link BreakerOpenError} for a call refused while OPEN,
 * {@link BreakerUnavailableError} for a store outage when failing closed.
 */
export function breakerErrorFor(decision: BreakerDecision, sessionId?: string): AgentBreakerError | BreakerUnavailableError {
  const message = decision.message ?? `Agent breaker: ${decision.action}`;
  if (decision.reason === 'store_unavailable' || decision.category === undefined) {
    return new BreakerUnavailableError(message, sessionId);
  }
  if (decision.reason === 'breaker_open') {
    return new BreakerOpenError(decision.category, message, decision.evidence, sessionId);
  }
  return new BY_CATEGORY[decision.category](message, decision.evidence, sessionId);
}
