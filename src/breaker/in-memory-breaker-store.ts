import { InvalidOptionError } from '../errors/governor-error.ts';
import type { BreakerSessionState, BreakerStore, StoredSession } from './breaker-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link InMemoryBreakerStore}. */
export interface InMemoryBreakerStoreOptions {
  /** Most sessions kept; the least recently used is evicted beyond. @default 10_000 */
  readonly maxSessions?: number;
  /** A session untouched this long (ms) is forgotten. @default 3_600_000 (1 h) */
  readonly idleTtlMs?: number;
  /** Clock in epoch ms (for tests). @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  version: number;
  state: BreakerSessionState;
  touchedAt: number;
}

/** What each option of InMemoryBreakerStore accepts. */
const IN_MEMORY_BREAKER_STORE_OPTION_RULES: OptionRules<InMemoryBreakerStoreOptions> = {
  maxSessions: is.integer(1),
  idleTtlMs: is.number(0, Number.MAX_VALUE, { exclusiveMin: true }),
  now: is.function(),
};

/**
 * Session state in this process's memory: the default store. Bounded by
 * session count (LRU) and idle time, so a long-running server does not grow
 * without limit. States are kept by reference — the engine never mutates a
 * state once written — so a write costs no serialisation.
 */
export class InMemoryBreakerStore implements BreakerStore {
  readonly maxSessions: number;
  readonly idleTtlMs: number;
  readonly #now: () => number;
  // Map iteration order is insertion order: re-inserting on access makes it an LRU.
  readonly #sessions = new Map<string, Entry>();

  constructor(options: InMemoryBreakerStoreOptions = {}) {
    validateOptions('InMemoryBreakerStore', options, IN_MEMORY_BREAKER_STORE_OPTION_RULES);
    const maxSessions = options.maxSessions ?? 10_000;
    const idleTtlMs = options.idleTtlMs ?? 3_600_000;
    if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new InvalidOptionError('maxSessions', 'must be a positive integer');
    if (!Number.isFinite(idleTtlMs) || idleTtlMs <= 0) throw new InvalidOptionError('idleTtlMs', 'must be a positive number of milliseconds');
    this.maxSessions = maxSessions;
    this.idleTtlMs = idleTtlMs;
    this.#now = options.now ?? Date.now;
  }

  /** Number of sessions currently held. */
  get size(): number {
    return this.#sessions.size;
  }

  async load(sessionId: string): Promise<StoredSession | undefined> {
    const entry = this.#live(sessionId);
    return entry === undefined ? undefined : { version: entry.version, state: entry.state };
  }

  async compareAndSet(
    sessionId: string,
    expectedVersion: number | undefined,
    next: BreakerSessionState,
  ): Promise<{ ok: true; version: number } | { ok: false; current: StoredSession | undefined }> {
    const entry = this.#live(sessionId);
    if (entry?.version !== expectedVersion) {
      return { ok: false, current: entry === undefined ? undefined : { version: entry.version, state: entry.state } };
    }
    const version = (entry?.version ?? 0) + 1;
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, { version, state: next, touchedAt: this.#now() });
    this.#evict();
    return { ok: true, version };
  }

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }

  async listOpen(): Promise<string[]> {
    const now = this.#now();
    const open: string[] = [];
    for (const [id, entry] of this.#sessions) {
      if (now - entry.touchedAt <= this.idleTtlMs && entry.state.status === 'OPEN') open.push(id);
    }
    return open.sort();
  }

  #live(sessionId: string): Entry | undefined {
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined) return undefined;
    const now = this.#now();
    if (now - entry.touchedAt > this.idleTtlMs) {
      this.#sessions.delete(sessionId);
      return undefined;
    }
    entry.touchedAt = now;
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, entry);
    return entry;
  }

  #evict(): void {
    while (this.#sessions.size > this.maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    // Idle sessions at the LRU end are dropped as writes pass by, a few at a time.
    const now = this.#now();
    let checked = 0;
    for (const [id, entry] of this.#sessions) {
      if (checked++ >= 4 || now - entry.touchedAt <= this.idleTtlMs) break;
      this.#sessions.delete(id);
    }
  }
}
