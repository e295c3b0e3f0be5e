import type { BreakerAction, BreakerCategory, BreakerEvidence, BreakerStatus } from './breaker-decision.ts';

/**
 * What `AgentBreaker.on` listeners receive: every escalation (a non-allow
 * decision from a detector), every state change (CLOSED / OPEN / HALF_OPEN),
 * warnings (the store failed; a cost cap cannot be enforced) and debug notes
 * (a call without a conversation id got a session of its own).
 */
export interface BreakerEventRecord {
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

/** A listener of breaker events; exceptions it throws are swallowed. */
export type BreakerListener = (event: BreakerEventRecord) => void;
