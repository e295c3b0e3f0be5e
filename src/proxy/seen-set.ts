import { SEEN_KEYS_KEPT, type BreakerStore } from '../breaker/breaker-store.ts';
import { RecentMap } from './recent-map.ts';

/**
 * What was observed of a session's requests, so that a request seen again
 * (a client's retry) is not observed twice.
 */
export interface SeenSet {
  /** Marks keys as seen in the session: for each, true when it was not seen before. */
  claim(sessionId: string, keys: readonly string[]): Promise<boolean[]>;
}

/**
 * Keys seen by this process: per session the newest {@link SEEN_KEYS_KEPT}
 * (and all of the latest claim's), as a shared store keeps them, so that a
 * key the store forgot is forgotten here too and every replica judges it alike.
 */
class LocalSeenSet implements SeenSet {
  readonly #sessions: RecentMap<string, string[]>;

  constructor(sessions = 4096) {
    this.#sessions = new RecentMap(sessions);
  }

  async claim(sessionId: string, keys: readonly string[]): Promise<boolean[]> {
    const kept = this.#sessions.get(sessionId) ?? [];
    const seen = new Set(kept);
    const first = keys.map((key) => {
      if (seen.has(key)) return false;
      seen.add(key);
      kept.push(key);
      return true;
    });
    this.#sessions.set(sessionId, kept.slice(-Math.max(SEEN_KEYS_KEPT, keys.length)));
    return first;
  }
}

/**
 * The seen set for a breaker's store: the store's shared one when it has one
 * (`RedisBreakerStore`: a retry that a load balancer sends to another replica
 * is known there); this process's answers while the store does not.
 */
export function seenSetFor(store: BreakerStore): SeenSet {
  const local = new LocalSeenSet();
  const { claimFirst } = store;
  if (claimFirst === undefined) return local;
  return {
    async claim(sessionId, keys) {
      const here = await local.claim(sessionId, keys);
      // A store outage must not fail the agent's request: what this process saw still counts.
      const shared = await claimFirst.call(store, sessionId, keys).catch(() => here);
      // The store's answer alone, so that every replica gives the same: this process also remembers keys
      // the store has dropped since (it keeps the newest few of each session), and one it saw but no other did.
      return shared.map((first) => first === true);
    },
  };
}
