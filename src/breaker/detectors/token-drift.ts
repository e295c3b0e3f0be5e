import type { ModelEvent } from '../breaker-event.ts';
import { LIMITS, type DriftState } from '../breaker-state.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

/**
 * Token drift: advances the growth run with this round's prompt tokens and
 * reports drift when `consecutive` rounds in a row each grew by at least
 * `growthFactor` from a prompt already past `minPromptTokens`. A round that
 * does not grow enough — in particular a fall after compaction — restarts the
 * run from itself; a round without a token count changes nothing. `drift` is
 * the run of the round's own agent: the session's, or its sub-agents' for a
 * delegated round (see `ModelEvent.delegated`).
 */
export function advanceTokenDrift(drift: DriftState, event: ModelEvent, seq: number, ctx: DetectorContext): { drift: DriftState; detection: Detection | null } {
  const { enabled, growthFactor, consecutive, minPromptTokens } = ctx.options.tokenDrift;
  const tokens = event.promptTokens;
  if (typeof tokens !== 'number' || !Number.isFinite(tokens) || tokens < 0) return { drift, detection: null };
  // Growth counts only from a prompt already past the floor: a context that
  // starts small legitimately multiplies as the first files and records come
  // in, which is accumulation, not compounding.
  const grew = drift.last !== null && drift.last >= Math.max(1, minPromptTokens) && tokens >= drift.last * growthFactor;
  const next: DriftState = grew
    ? { last: tokens, steps: drift.steps + 1, tail: [...drift.tail.slice(-(LIMITS.driftTail - 1)), tokens] }
    : { last: tokens, steps: 0, tail: [tokens] };
  if (!enabled || !grew || next.steps < consecutive) return { drift: next, detection: null };
  const shown = next.tail.slice(-(Math.min(consecutive, LIMITS.driftTail - 1) + 1));
  const growth = shown.slice(1).map((t, i) => round2(t / shown[i]!));
  return {
    drift: next,
    detection: {
      category: 'token_drift',
      key: `token_drift:${seq}`,
      evidence: {
        detail: `${event.delegated === true ? "a sub-agent's " : ''}prompt tokens grew ${next.steps} rounds in a row by at least ${growthFactor}× (${shown.join(' → ')})`,
        pattern: 'growth',
        promptTokens: shown,
        growth,
        repeats: next.steps,
        threshold: consecutive,
      },
    },
  };
}
