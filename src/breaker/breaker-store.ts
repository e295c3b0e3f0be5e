import type { BreakerSessionState } from './breaker-state.ts';

export type { BreakerSessionState } from './breaker-state.ts';

/** A session's state as stored, with its version for optimistic concurrency. */
export interface StoredSession {
  /** Increases by one on every successful write. */
  readonly version: number;
  readonly state: BreakerSessionState;
}

/**
 * Where AgentBreaker keeps session state. The engine reads with `load` and
 * writes with `compareAndSet` (optimistic concurrency), so a store needs no
 * locks: a store shared by several processes (Redis) makes them share one
 * breaker per session. States are plain JSON; a store may serialise them.
 * A store must not mutate a state it was given or returned.
 */
export interface BreakerStore {
  /** The stored session, or undefined if there is none (or it expired). */
  load(sessionId: string): Promise<StoredSession | undefined>;
  /**
   * Writes `next` only if the stored version still is `expectedVersion`
   * (`undefined`: the session must not exist yet). On success returns the new
   * version; on a conflict, the current stored session (undefined if none),
   * so the caller can recompute and retry without another round trip.
   */
  compareAndSet(
    sessionId: string,
    expectedVersion: number | undefined,
    next: BreakerSessionState,
  ): Promise<{ ok: true; version: number } | { ok: false; current: StoredSession | undefined }>;
  /** Forgets a session. */
  delete(sessionId: string): Promise<void>;
  /** Ids of sessions whose breaker is OPEN (state.status), when the store can tell. */
  listOpen?(): Promise<string[]>;
  /**
   * A cheap reachability check (one round trip) for health reports; rejects
   * when the store does not answer. Stores in process memory need none.
   */
  ping?(): Promise<unknown>;
}
