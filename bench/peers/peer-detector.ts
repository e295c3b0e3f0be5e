import type { ReplayDecision } from '../../src/replay/replayable-breaker.ts';

/** The decision every peer gives while it sees nothing wrong. */
export const ALLOW: ReplayDecision = { action: 'allow' };

/** A peer's trip: peers do not escalate, they stop. */
export function stop(category: string, message: string): ReplayDecision {
  return { action: 'stop', category, message };
}
