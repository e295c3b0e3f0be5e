import type { BreakerStore } from '../breaker/breaker-store.ts';
import { RecentMap } from './recent-map.ts';

/**
 * What was observed of a session's requests, so that a request seen again
 * (a client's retry) is not observed twice.
 */
export interface SeenSet {
  /** Marks keys as seen in the session: for each, true when it was not seen before. */
  claim(sessionId: string, keys: readonly string[]): Promise<boolean[]>;
}

/** Keys seen by this process, the most recent kept. */
class LocalSeenSet implements SeenSet {
  readonly #keys: RecentMap<string, true>;

  constructor(limit = 100_000) {
    this.#keys = new RecentMap(limit);
  }

  async claim(sessionId: string, keys: readonly string[]): Promise<boolean[]> {
    return keys.map((key) => {
      const scoped = `${sessionId}\u0000${key}`;
      if (this.#keys.get(scoped) === true) return false;
      this.#keys.set(scoped, true);
      return true;
    });
  }
}

/**
 * The seen set for a breaker's store: the store's shared one when it has one
 * (`RedisBreakerStore`: a retry that a load balancer sends to another replica
 * is known there), together with this process's, which also answers while
 * the store does not.
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
      // Seen anywhere is seen: a store that forgot the session (a restart) does not undo what this process saw.
      return here.map((first, i) => first && shared[i] === true);
    },
  };
}
