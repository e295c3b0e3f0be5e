import type { BreakerAction, BreakerCategory, BreakerEvidence } from '../breaker-decision.ts';
import type { ResolvedAgentBreakerOptions } from '../breaker-options.ts';
import type { ArgsFingerprinter } from '../similarity/args-fingerprint.ts';

/** What a detector reports: a loop of some category, with its evidence. */
export interface Detection {
  readonly category: BreakerCategory;
  /**
   * Identifies this very detection, so that a check and the observation of
   * the same call escalate once, not twice.
   */
  readonly key: string;
  readonly evidence: BreakerEvidence;
  /** Forces the action instead of the category's escalation ladder (budget). */
  readonly action?: Exclude<BreakerAction, 'allow'>;
}

/** What detectors share: options and the compiled matchers built from them. */
export interface DetectorContext {
  readonly options: ResolvedAgentBreakerOptions;
  readonly fingerprinter: ArgsFingerprinter;
  /** Whether a tool only reads (cannot change another call's outcome). */
  isReadOnly(tool: string): boolean;
  /** Whether a tool's name says it writes (see WRITING_VERBS): its successes with new arguments change something. */
  isWriting(tool: string): boolean;
  /** Whether a tool runs a sub-agent. */
  isSubAgent(tool: string): boolean;
}

/** Rounds a similarity for evidence. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
