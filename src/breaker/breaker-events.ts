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
 * A warning (the store failed; a cost cap cannot be enforced) or a debug note
 * (a call without a conversation id got a session of its own).
 */
export interface BreakerNoticeRecord extends BreakerEventFields {
  readonly type: 'warning' | 'debug';
  readonly message: string;
}

/**
 * What `AgentBreaker.on` listeners receive: every escalation (a non-allow
 * decision from a detector), every state change (CLOSED / OPEN / HALF_OPEN),
 * warnings and debug notes. Switching on `type` narrows it to the kind's
 * record, whose fields that kind always has are not optional.
 */
export type BreakerEventRecord = BreakerEscalationRecord | BreakerStateChangeRecord | BreakerNoticeRecord;

/** A listener of breaker events; exceptions it throws are swallowed. */
export type BreakerListener = (event: BreakerEventRecord) => void;
