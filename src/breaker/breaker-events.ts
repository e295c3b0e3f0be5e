import type { BreakerAction, BreakerCategory, BreakerEvidence, BreakerStatus } from './breaker-decision.ts';
import type { EscalationAction } from './breaker-options.ts';

/**
 * The fields any {@link BreakerEventRecord} may carry. Every kind declares
 * them all, so code that reads `event.category` without first switching on
 * `event.type` still compiles; each kind then says which of them it always has.
 */
interface BreakerEventFields {
  readonly type: 'escalation' | 'state_change' | 'warning' | 'debug';
  readonly sessionId: string;
  /** When it happened (epoch ms, from the breaker's clock). */
  readonly at: number;
  readonly category?: BreakerCategory;
  readonly action?: BreakerAction;
  /** The steering / stop text, or the warning. */
  readonly message?: string;
  readonly evidence?: BreakerEvidence;
  /** State before a state change. */
  readonly from?: BreakerStatus;
  /** State after a state change. */
  readonly to?: BreakerStatus;
  /** What a warning is about. */
  readonly code?: BreakerWarningCode;
}

/** A detector's non-allow decision: a steer, a block or a stop. */
export interface BreakerEscalationRecord extends BreakerEventFields {
  readonly type: 'escalation';
  readonly category: BreakerCategory;
  readonly action: EscalationAction;
  /** The steering / stop text. */
  readonly message: string;
  readonly evidence: BreakerEvidence;
}

/** The session's breaker went from one state to another. */
export interface BreakerStateChangeRecord extends BreakerEventFields {
  readonly type: 'state_change';
  /** State before the change. */
  readonly from: BreakerStatus;
  /** State after the change. */
  readonly to: BreakerStatus;
  /** Why it changed. */
  readonly message: string;
  /** The category the breaker opened on, while it is OPEN or HALF_OPEN. */
  readonly category?: BreakerCategory;
}

/**
 * What a warning is about, stable across versions (its message is for people
 * and may change):
 * - `store_failed`: a store operation failed; the call was let through
 *   unjudged or refused, as `onStoreError` says, or refused because this
 *   process last saw the session's breaker OPEN.
 * - `store_over_cap`: the store holds more sessions than its cap, every one
 *   of them with an open breaker or a spent budget, which it may not forget.
 * - `session_restored`: the store had forgotten sessions this process knew
 *   (a restart without persistence, an expiry, an eviction); their state was
 *   written back from this process.
 * - `cost_not_enforceable`: `budget.maxCostUsd` cannot be enforced for some
 *   model rounds (no price, no token counts, or neither a cost nor a model).
 * - `advisor_order`: the breaker's advisor runs outside the tool loop, so it
 *   judges one round per call rather than every round.
 */
export type BreakerWarningCode = 'store_failed' | 'store_over_cap' | 'session_restored' | 'cost_not_enforceable' | 'advisor_order';

/** A warning: something an operator should know, named by a stable {@link BreakerWarningCode}. */
export interface BreakerWarningRecord extends BreakerEventFields {
  readonly type: 'warning';
  readonly code: BreakerWarningCode;
  readonly message: string;
}

/** A debug note (a call without a conversation id got a session of its own). */
export interface BreakerNoticeRecord extends BreakerEventFields {
  readonly type: 'debug';
  readonly message: string;
}

/**
 * What `AgentBreaker.on` listeners receive: every escalation (a non-allow
 * decision from a detector), every state change (CLOSED / OPEN / HALF_OPEN),
 * warnings and debug notes. Switching on `type` narrows it to the kind's
 * record, whose fields that kind always has are not optional.
 */
export type BreakerEventRecord = BreakerEscalationRecord | BreakerStateChangeRecord | BreakerWarningRecord | BreakerNoticeRecord;

/** A listener of breaker events; exceptions it throws are swallowed. */
export type BreakerListener = (event: BreakerEventRecord) => void;
