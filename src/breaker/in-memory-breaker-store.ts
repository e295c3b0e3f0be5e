import type { AppliedOp, BreakerSessionState, BreakerStore, BreakerStoreStatus, SessionOp, SessionRead, SessionReducer } from './breaker-store.ts';
import { is, MAX_TIMER_MS, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { LruMap } from './lru-map.ts';
import { compressState, decompressState } from './state-compression.ts';

/** Options of {@link InMemoryBreakerStore}. */
export interface InMemoryBreakerStoreOptions {
  /**
   * Most sessions kept; beyond it the least recently used CLOSED session is
   * evicted. Sessions that must not be forgotten (an open breaker until its
   * cooldown ends, a half-open one, a spent budget) are kept even over the
   * cap, which `status().heldOverCap` reports.
   * @default 10_000
   */
  readonly maxSessions?: number;
  /** A session untouched this long (ms) is forgotten, an OPEN breaker not before its cooldown ends. @default 3_600_000 (1 h) */
  readonly idleTtlMs?: number;
  /**
   * Most sessions kept as objects, ready to judge: the most recently used
   * ones. The others are kept compressed (see compressState), about a
   * third of the heap of a decoded session, and decompressed when next
   * used. Sessions pushed out of the set are compressed together once a
   * sixteenth of this many wait (at the next turn of the event loop, not
   * by the operation that pushed the last one out; at once beyond an
   * eighth), or when idle for `decodedIdleMs`. 0 keeps every session
   * compressed between operations.
   * @default 256
   */
  readonly decodedSessions?: number;
  /**
   * A decoded session unused this long (ms) is compressed as well, in the
   * background: sessions at rest (between a user's turns, during a long
   * model call) keep the smaller form however few they are, and the first
   * operation after the pause decompresses the session again.
   * @default 10_000
   */
  readonly decodedIdleMs?: number;
  /** Clock in epoch ms (for tests). @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  /** The state while the session is in the decoded set; undefined while it is kept compressed. */
  state: BreakerSessionState | undefined;
  /**
   * The compressed state while the session is out of the decoded set, one
   * character per byte: a one-byte string is the smallest form of bytes on
   * the heap (a Buffer adds two objects and memory outside it).
   */
  compressed: string | undefined;
  /** The state's status, readable without decoding it. */
  status: BreakerSessionState['status'];
  position: number;
  touchedAt: number;
  /**
   * Not evicted for the cap before this (epoch ms): an OPEN breaker until its
   * cooldown ends, a HALF_OPEN one or a spent budget for good (`Infinity`);
   * 0 for the rest.
   */
  keptUntil: number;
  /** Not expired for idleness before this (epoch ms). */
  until: number;
}

/**
 * A store's read and apply as they run: at once, without a promise. The
 * breaker judges every operation on such a store this way, which saves the
 * promises and turns of the microtask queue of the store's asynchronous
 * interface and of the session queue (several of each per event).
 */
export interface ImmediateStore {
  read(sessionId: string): SessionRead | undefined;
  apply(sessionId: string, op: SessionOp, reducer: SessionReducer): AppliedOp;
}

/**
 * The immediate form of a store that is an InMemoryBreakerStore as this
 * module defines it; undefined for any other (a subclass that replaces read
 * or apply keeps being called through them).
 */
export let immediateAccess: (store: object) => ImmediateStore | undefined;

/** What each option of InMemoryBreakerStore accepts. */
const IN_MEMORY_BREAKER_STORE_OPTION_RULES: OptionRules<InMemoryBreakerStoreOptions> = {
  maxSessions: is.integer(1),
  idleTtlMs: is.number(0, MAX_TIMER_MS, { exclusiveMin: true }),
  decodedSessions: is.integer(0),
  decodedIdleMs: is.timeMs(),
  now: is.function(),
};

/** Most entries one write looks at past the ones it removes, so a cap full of pinned sessions costs a bounded amount per write. */
const SCAN_LIMIT = 16;

/** Most idle sessions compressed in one turn of the event loop (about 2 ms of work), so a sweep never stalls the process. */
const SWEEP_LIMIT = 32;

/**
 * Session state in this process's memory: the default store. Operations are
 * applied synchronously, so breakers sharing it in one process never
 * conflict. Bounded by session count (LRU over CLOSED sessions) and idle
 * time; an OPEN breaker before its cooldown ends, a HALF_OPEN one and a spent
 * budget are never evicted for the cap, and an OPEN breaker does not expire
 * before its cooldown ends.
 * The most recently used sessions (`decodedSessions`) keep their state by
 * reference (the breaker never mutates a written state), so a write to one
 * costs no serialisation; the rest are kept compressed. Sessions leaving
 * the decoded set are compressed once, a batch at a time, when the event
 * loop turns. A decoded session left idle for `decodedIdleMs` leaves the
 * set too, by a timer that does not keep the process alive.
 */
export class InMemoryBreakerStore implements BreakerStore {
  readonly maxSessions: number;
  readonly idleTtlMs: number;
  readonly decodedSessions: number;
  readonly decodedIdleMs: number;
  readonly #now: () => number;
  /** Every session, least recently used first. */
  readonly #sessions = new LruMap<string, Entry>();
  /** The decoded sessions, least recently used first. */
  readonly #decoded = new LruMap<string, Entry>();
  #heldOverCap = 0;
  /** The pending sweep of idle decoded sessions, while there are decoded sessions. */
  #sweep: NodeJS.Timeout | undefined;
  /** Decoded sessions beyond `decodedSessions` left for the next turn of the event loop to compress. */
  readonly #slack: number;
  /** Decoded sessions beyond `decodedSessions` that wait before a turn of the event loop compresses them (see #settle). */
  readonly #batch: number;
  /** The pending compression of the sessions pushed out of the decoded set, while there are any. */
  #trim: NodeJS.Immediate | undefined;

  constructor(options: InMemoryBreakerStoreOptions = {}) {
    validateOptions('InMemoryBreakerStore', options, IN_MEMORY_BREAKER_STORE_OPTION_RULES);
    this.maxSessions = options.maxSessions ?? 10_000;
    this.idleTtlMs = options.idleTtlMs ?? 3_600_000;
    this.decodedSessions = options.decodedSessions ?? 256;
    this.decodedIdleMs = options.decodedIdleMs ?? 10_000;
    this.#slack = Math.ceil(this.decodedSessions / 8);
    this.#batch = Math.max(1, Math.ceil(this.decodedSessions / 16));
    this.#now = options.now ?? Date.now;
  }

  /** Number of sessions currently held. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Number of sessions currently kept decoded: at most an eighth more than
   * `decodedSessions`, and less than a sixteenth more once the event loop
   * has turned; the others are held compressed.
   */
  get decoded(): number {
    return this.#decoded.size;
  }

  async read(sessionId: string): Promise<SessionRead | undefined> {
    return this.#read(sessionId);
  }

  async apply(sessionId: string, op: SessionOp, reducer: SessionReducer): Promise<AppliedOp> {
    return this.#apply(sessionId, op, reducer);
  }

  #read(sessionId: string): SessionRead | undefined {
    const entry = this.#live(sessionId, this.#now());
    if (entry === undefined) return undefined;
    const state = this.#decode(sessionId, entry);
    this.#settle();
    return { state, position: entry.position };
  }

  #apply(sessionId: string, op: SessionOp, reducer: SessionReducer): AppliedOp {
    const now = this.#now();
    const entry = this.#live(sessionId, now);
    const before = entry === undefined ? reducer.initial(op.at) : this.#decode(sessionId, entry);
    const outcome = reducer.apply(before, op);
    const state = outcome.next ?? before;
    const position = (entry?.position ?? 0) + 1;
    const { pinned, until } = reducer.retention(state);
    // Past its cooldown an OPEN breaker would only be probed again: a cap full of those must not push out the sessions in use.
    const keptUntil = !pinned ? 0 : state.status === 'OPEN' && state.budget.phase === 0 && until > 0 ? until : Number.POSITIVE_INFINITY;
    if (entry === undefined) {
      const created: Entry = { state, compressed: undefined, status: state.status, position, touchedAt: now, keptUntil, until };
      this.#sessions.set(sessionId, created);
      this.#decoded.set(sessionId, created);
    } else {
      entry.state = state;
      entry.status = state.status;
      entry.position = position;
      entry.keptUntil = keptUntil;
      entry.until = until;
    }
    this.#evict(now, sessionId);
    this.#settle();
    return { outcome, state, position };
  }

  static {
    immediateAccess = (store) =>
      // A subclass or a patched instance that replaces read or apply is used through them; a Proxy has no private fields.
      #sessions in store && store.read === InMemoryBreakerStore.prototype.read && store.apply === InMemoryBreakerStore.prototype.apply
        ? { read: (sessionId) => store.#read(sessionId), apply: (sessionId, op, reducer) => store.#apply(sessionId, op, reducer) }
        : undefined;
  }

  async delete(sessionId: string): Promise<void> {
    this.#forget(sessionId);
  }

  async listOpen(now = this.#now()): Promise<string[]> {
    const open: string[] = [];
    for (const [id, entry] of this.#sessions.entries()) {
      // `until` is the end of an OPEN session's cooldown (see SessionRetention).
      if (!this.#expired(entry, now) && entry.status === 'OPEN' && now < entry.until) open.push(id);
    }
    return open.sort();
  }

  status(): BreakerStoreStatus {
    return { heldOverCap: this.#heldOverCap };
  }

  #expired(entry: Entry, now: number): boolean {
    return now - entry.touchedAt > this.idleTtlMs && now >= entry.until;
  }

  #live(sessionId: string, now: number): Entry | undefined {
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined) return undefined;
    if (this.#expired(entry, now)) {
      this.#forget(sessionId);
      return undefined;
    }
    entry.touchedAt = now;
    this.#sessions.touch(sessionId);
    return entry;
  }

  #evict(now: number, current: string): void {
    // Expired sessions sit at the LRU end: drop every one there, so idle
    // eviction keeps pace with any write rate (each is removed once).
    // An idle session that may not expire yet goes to the back of the queue.
    let skipped = 0;
    for (let oldest = this.#sessions.oldest(); oldest !== undefined && skipped < SCAN_LIMIT; oldest = this.#sessions.oldest()) {
      const { key: id, value: entry } = oldest;
      if (now - entry.touchedAt <= this.idleTtlMs) break;
      if (now >= entry.until) this.#forget(id);
      else {
        this.#sessions.touch(id);
        skipped++;
      }
    }
    // Over the cap: the least recently used session that may be forgotten
    // goes (never the one just written: its caller is about to use it).
    // A pinned session moves to the back, so the next look starts past it.
    skipped = 0;
    while (this.#sessions.size > this.maxSessions && skipped < SCAN_LIMIT) {
      const { key: id, value: entry } = this.#sessions.oldest()!;
      if (id === current) break;
      if (now >= entry.keptUntil) this.#forget(id);
      else {
        this.#sessions.touch(id);
        skipped++;
      }
    }
    this.#heldOverCap = Math.max(0, this.#sessions.size - this.maxSessions);
  }

  #forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
    this.#decoded.delete(sessionId);
    if (this.#decoded.size === 0 && this.#sweep !== undefined) {
      // Nothing left to sweep: the timer would only keep the store alive.
      clearTimeout(this.#sweep);
      this.#sweep = undefined;
    }
  }

  /** The entry's state, decoding it if need be; either way the session becomes the most recently used decoded one. */
  #decode(sessionId: string, entry: Entry): BreakerSessionState {
    if (entry.state === undefined) {
      entry.state = decompressState(Buffer.from(entry.compressed!, 'latin1'));
      entry.compressed = undefined;
    }
    if (this.#decoded.touch(sessionId) === undefined) this.#decoded.set(sessionId, entry);
    return entry.state;
  }

  /**
   * Makes sure the least recently used decoded sessions beyond
   * `decodedSessions` will be compressed, and idle ones too. Compressing a
   * session costs tens of microseconds, several times the event that pushed
   * it out of the set (a new session's first), so it waits for the next turn
   * of the event loop, when the caller has had its answer; only when a
   * burst leaves more than the slack waiting is the excess done at once.
   * Sessions are compressed a batch at a time rather than one per new
   * session: each run of the compressor pushes the judging code and data
   * out of the CPU's caches, which the events after it pay for: one run per
   * new session made every new session's first events dearer. Fewer than a
   * batch wait for the next batch or the idle sweep.
   */
  #settle(): void {
    if (this.#decoded.size > this.decodedSessions) {
      this.#trimTo(this.decodedSessions + this.#slack, Number.POSITIVE_INFINITY);
      if (this.#decoded.size >= this.decodedSessions + this.#batch) this.#scheduleTrim();
    }
    this.#scheduleSweep();
  }

  /** Compresses least recently used decoded sessions until `size` are left, at most `limit` of them; whether it got there. */
  #trimTo(size: number, limit: number): boolean {
    for (let done = 0; this.#decoded.size > size; done++) {
      if (done === limit) return false;
      const { key: id, value: entry } = this.#decoded.oldest()!;
      this.#compress(id, entry);
    }
    return true;
  }

  /** Arms the compression of the decoded sessions beyond `decodedSessions`: a bounded batch per turn, like the idle sweep. */
  #scheduleTrim(): void {
    if (this.#trim !== undefined) return;
    this.#trim = setImmediate(() => {
      this.#trim = undefined;
      if (!this.#trimTo(this.decodedSessions, SWEEP_LIMIT)) this.#scheduleTrim();
    });
    this.#trim.unref();
  }

  #compress(sessionId: string, entry: Entry): void {
    this.#decoded.delete(sessionId);
    const bytes = compressState(entry.state!);
    entry.compressed = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    entry.state = undefined;
  }

  /**
   * Arms the sweep for when the least recently used decoded session goes
   * idle. One timer at most, and none once every session is compressed, so
   * a store nobody uses any more holds no timer and can be collected.
   */
  #scheduleSweep(delayMs?: number): void {
    if (this.#sweep !== undefined) return;
    const oldest = this.#decoded.oldest()?.value;
    if (oldest === undefined) return;
    const delay = delayMs ?? Math.max(0, oldest.touchedAt + this.decodedIdleMs - this.#now());
    this.#sweep = setTimeout(() => this.#sweepIdle(), Math.min(delay, MAX_TIMER_MS));
    this.#sweep.unref();
  }

  /** Compresses the decoded sessions unused for `decodedIdleMs`, least recently used first. */
  #sweepIdle(): void {
    this.#sweep = undefined;
    const now = this.#now();
    let compressed = 0;
    for (let oldest = this.#decoded.oldest(); oldest !== undefined; oldest = this.#decoded.oldest()) {
      const { key: id, value: entry } = oldest;
      if (now - entry.touchedAt < this.decodedIdleMs) break;
      // The rest in a later turn, so that a sweep never stalls the process.
      if (compressed++ === SWEEP_LIMIT) {
        this.#scheduleSweep(0);
        return;
      }
      this.#compress(id, entry);
    }
    this.#scheduleSweep();
  }
}
