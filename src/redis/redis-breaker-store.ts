import { randomUUID } from 'node:crypto';
import { createClient, RESP_TYPES } from './redis-module.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import type { Outcome } from '../breaker/session-logic.ts';
import {
  SEEN_KEYS_KEPT,
  type AppliedOp,
  type BreakerSessionState,
  type BreakerStore,
  type BreakerStoreStatus,
  type SessionOp,
  type SessionRead,
  type SessionReducer,
  RESTORED_SESSIONS_KEPT,
} from '../breaker/breaker-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { redact } from '../redaction/redact.ts';
import { encodeOp } from '../breaker/op-codec.ts';
import { compressState, decompressState } from '../breaker/state-compression.ts';
import { hash53 } from '../breaker/similarity/hash.ts';
import { LruMap } from '../breaker/lru-map.ts';
import { assertRedisUrl, createClientForUrl } from './redis-url.ts';
import { closeWithin } from './close-within.ts';
import { MAX_RECONNECT_DELAY_MS, unlessRefused } from './reconnect-strategy.ts';
import { describeError } from '../errors/describe-error.ts';
import { isErrorReply } from './error-reply.ts';
import { BreakerStoreError } from './breaker-store-error.ts';
import { LOG_FULL, MAX_LOGGED, SCRIPTS, type Script } from './session-scripts.ts';
import {
  COMPACT_EVERY,
  Kin,
  MAX_ANCESTRY,
  ancestry,
  continuesCache,
  decodeFold,
  diverges,
  foldsAtOnce,
  foldsLog,
  includes,
  knowledge,
  lastBytes,
  loggedAfter,
  readOp,
  text,
  writtenBack,
  type FoldReply,
  type Folded,
  type Owed,
} from './session-fold.ts';

/**
 * The part of a node-redis client the store uses. A `RedisClientType` from
 * `createClient()` fits, and so does anything else that can send a raw command.
 */
export interface RedisCommandClient {
  /**
   * The store bounds the wait for each reply itself (`timeoutMs`), so it
   * passes `timeout: 0` (no timer of the client's own), and, unless the
   * client says it is ready ({@link isReady}), an `abortSignal` that is
   * aborted when it stops waiting: a client that has not written the
   * command yet should then drop it. Snapshots are binary (see
   * compressState): they go out as Buffers, and the commands that read them
   * pass a `typeMapping` asking for bulk strings as Buffers, which a client
   * must honour (node-redis does).
   */
  sendCommand(
    args: ReadonlyArray<string | Buffer>,
    options?: { abortSignal?: AbortSignal; timeout?: number; typeMapping?: { readonly [respType: number]: unknown } },
  ): Promise<unknown>;
  /**
   * Whether the client is connected and writes what it is given at once
   * (node-redis's `isReady`). A ready client gets no `abortSignal`: the
   * command is written before anything could abort it, and watching a
   * signal per command costs more than the rest of sending it.
   */
  readonly isReady?: boolean;
}

/** Options of {@link RedisBreakerStore}. Pass `client` or `url`, not both. */
export interface RedisBreakerStoreOptions {
  /**
   * A connected node-redis client to use. The store neither connects nor
   * closes it; its owner should listen to its `error` events and may want
   * `disableOfflineQueue: true` so an outage is reported at once instead of
   * commands waiting for a reconnect.
   */
  readonly client?: RedisCommandClient;
  /**
   * Redis URL (`redis://[[user]:password@]host:port[/db]`) to connect to with a
   * client the store creates, connects lazily and closes in {@link RedisBreakerStore.close}.
   */
  readonly url?: string;
  /**
   * Prefix of every key the store writes: a session lives at
   * `<prefix>session:<id>` (a hash) and `<prefix>log:<id>` (its recent
   * operations), the open sessions at `<prefix>open-until` (a sorted set scored by the end of each one's cooldown),
   * a session's waiting steer messages at `<prefix>steers:<id>` and the keys
   * marked by {@link RedisBreakerStore.claimFirst} at `<prefix>seen:<id>` (lists),
   * and each alias (see {@link RedisBreakerStore.addAlias}) at `<prefix>alias:<alias>`,
   * a session's aliases at `<prefix>aliases:<id>` and its notes (see
   * {@link RedisBreakerStore.putNote}) at `<prefix>notes:<id>` (a hash).
   * {@link RedisBreakerStore.ping} writes `<prefix>write-probe` and deletes it again.
   * @default 'governor:breaker:'
   */
  readonly keyPrefix?: string;
  /**
   * A session's state expires after this long without a write, so abandoned
   * sessions clean themselves up: no sooner, and at most min(1 s, ttlMs / 10)
   * later (a writer sets the expiry that much longer and refreshes it only
   * that often, instead of on every write). @default 86_400_000 (24 h)
   */
  readonly ttlMs?: number;
  /**
   * Longest wait for one Redis round trip; past it the operation fails with
   * a {@link BreakerStoreError} (the breaker then fails open or closed as
   * configured). An operation the store stopped waiting for is not applied
   * later: the client drops one it has not written yet, and the server
   * refuses an append that reaches it after its deadline (a stalled server
   * that resumes).
   *
   * Once an operation has waited this long in vain, the server counts as
   * not answering: for the next `timeoutMs` every operation fails at once
   * with the same {@link BreakerStoreError} (its message says it was not
   * sent) instead of waiting too, so that a request that makes several
   * store operations is slowed by one timeout, not one per operation. Then
   * one operation is sent to find out (the others still fail at once until
   * it settles); any reply from the server, to it or to one sent before,
   * ends this at once, and so does the client of a `url` reconnecting.
   * Failures that cost no wait (a refused connection, an error reply) do
   * not start it: neither does a handshake the server refuses (a wrong or
   * missing password, a database index it lacks, a user not allowed the
   * handshake's commands), which fails each operation at once with the
   * server's reason; the next one connects anew, so the store works again
   * as soon as the server takes the credentials. `health()` reports the
   * store down meanwhile, and up again with its first ping after that.
   * {@link RedisBreakerStore.close} waits this long at most too.
   * @default 2000
   */
  readonly timeoutMs?: number;
  /**
   * Tells whether a stored state is an open (tripped) breaker, for
   * {@link RedisBreakerStore.listOpen}, which lists it until its cooldown
   * ends (or, for a state without one, until it is no longer open).
   * @default state => state.status === 'OPEN'
   */
  readonly isOpen?: (state: BreakerSessionState) => boolean;
  /**
   * Sessions whose folded state this process keeps, the most recently used,
   * so that an operation on one only fetches what other writers added since.
   * Each holds its state as objects (about 15 KB after 1,000 events with
   * 1 KB arguments). An operation on any other session fetches its snapshot
   * and the operations logged after it, and folds them: a decode and up to
   * a few dozen replays, each time it comes back to the session. Only a
   * kept session is restored should the server forget it (a restart
   * without persistence). Set it to the sessions a process serves at once
   * where memory allows.
   * @default 256
   */
  readonly cacheSessions?: number;
}

const DEFAULT_KEY_PREFIX = 'governor:breaker:';
const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_CACHE_SESSIONS = 256;
/**
 * Most a session may outlive ttlMs after its last write: its expiry is set
 * this much longer and refreshed by a writer only this often, instead of on
 * every append.
 */
const MAX_EXPIRY_SLACK_MS = 1000;
/**
 * How much sooner than its writer's timeout an append's deadline falls on
 * the server (at most; a quarter of a short timeout): room for the reply
 * of an append applied just in time to travel back before the writer stops
 * waiting, so that an append is either answered or not applied.
 */
const DEADLINE_MARGIN_MS = 100;
/** How long a reading of the server's clock counts (see RedisBreakerStore's #noteServerClock): one taken before a jump of either clock is forgotten after two such windows. */
const CLOCK_WINDOW_MS = 60_000;

/** Most aliases a session keeps (see {@link RedisBreakerStore.addAlias}). */
const MAX_ALIASES = 8;

/** Options of every command: the store's timer bounds the wait, not the client's (see #send). */
const TEXT_REPLY = { timeout: 0 } as const;
/** The same for the operations that read a snapshot: bulk strings as Buffers, as a snapshot is binary. */
const BYTES_REPLY = { timeout: 0, typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } } as const;

/** Most steer messages kept waiting per session. */
const MAX_WAITING_STEERS = 8;

/** The server left an operation unanswered for the whole timeout (see RedisBreakerStoreOptions.timeoutMs). */
interface Stall {
  /** When (performance.now()). */
  readonly at: number;
  /** Which operation, and why it failed. */
  readonly operation: string;
  readonly reason: string;
  /** An operation sent to find out whether the server answers again has not settled yet. */
  probing: boolean;
}

/** @param neverReady whether the client has not been ready yet: a refused connection then fails the connect at once */
function createOwnedClient(url: string, timeoutMs: number, neverReady: () => boolean = () => false) {
  return createClient({
    url,
    // An outage must fail fast (the breaker decides open/closed), not queue.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeoutMs,
      // A handshake the server refused, or a first connection refused, is reported at once, not retried until the caller's timeout.
      reconnectStrategy: unlessRefused((retries) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS), neverReady),
    },
  });
}

type OwnedClient = ReturnType<typeof createOwnedClient>;

function defaultIsOpen(state: BreakerSessionState): boolean {
  return state.status === 'OPEN';
}

/** What each option of RedisBreakerStore accepts. */
const REDIS_BREAKER_STORE_OPTION_RULES: OptionRules<RedisBreakerStoreOptions> = {
  client: is.object(),
  url: is.string({ nonEmpty: true }),
  keyPrefix: is.string(),
  ttlMs: is.integer(1),
  timeoutMs: is.timeMs(),
  isOpen: is.function(),
  cacheSessions: is.integer(1),
};

/**
 * Keeps AgentBreaker session state in Redis so every replica behind a load
 * balancer shares one breaker per session. A session is an append-only log
 * of operations plus a snapshot: {@link apply} appends its operation in one
 * Lua script that also returns the operations other writers appended since
 * this process last looked (one round trip, never a conflict), then folds
 * them and its own through the breaker's logic locally. Every writer thus
 * judges each operation against exactly the operations ordered before it,
 * and none is lost. A writer judges its operation while the append is in
 * flight and keeps that judgement when the reply shows no other writer's
 * operation in between: a lone writer's detectors run during the round trip
 * (the digest the log keeps, argument fingerprints included, is made before
 * the append is sent). The writer of the operation that takes the log past
 * 1 KB, or past 16 operations, folds it into the snapshot, so the log stays
 * short however long the logged replies or passages are, and a new replica
 * reads one snapshot plus a few operations; an operation of 1 KB or more
 * is folded before its event returns (one more round trip), where others
 * send the snapshot with their writer's next append. Every failure surfaces as a
 * {@link BreakerStoreError}.
 *
 * The log holds each operation in its digested form (see
 * `SessionReducer.digest`): a tool call's argument fingerprint and result
 * hash instead of its arguments and result, a sub-agent call's task and
 * answer sketches instead of their text, and redacted text where the
 * detectors read text (model replies, user turns, queries, passages). The
 * snapshot holds hashes and sketches only. Without AOF or RDB persistence a Redis
 * restart forgets every session: open breakers close and spent budgets
 * reset. A process that still knows a forgotten session (one it used less
 * than `ttlMs` ago) writes it back and counts it (`status().sessionsLost`):
 * on the session's next read or write, and, when it finds that the server
 * restarted (`status().restarted`: on a health check, on reconnecting, on
 * finding a session forgotten, or when `listOpen` misses a session it holds
 * as open), every session it holds that may not be forgotten (an open
 * breaker, a spent budget) at once, so that every replica refuses them
 * again. A
 * server that evicts keys when its memory is full (a `maxmemory-policy`
 * other than `noeviction`) forgets sessions the same way, one at a time;
 * `status().evictionPolicy` names such a policy. With `noeviction` a full
 * server refuses writes instead, which the breaker meets as an outage.
 *
 * `listOpen` keeps one set per key prefix: it needs a non-cluster Redis (or
 * every key on one slot).
 */
export class RedisBreakerStore implements BreakerStore, AsyncDisposable {
  readonly #sessionPrefix: string;
  readonly #openKey: string;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #isOpen: (state: BreakerSessionState) => boolean;
  readonly #client: RedisCommandClient;
  readonly #logPrefix: string;
  readonly #steerPrefix: string;
  readonly #seenPrefix: string;
  readonly #aliasPrefix: string;
  readonly #aliasesPrefix: string;
  readonly #notesPrefix: string;
  /** Sessions whose folded state this process keeps (see {@link RedisBreakerStoreOptions.cacheSessions}). */
  readonly cacheSessions: number;
  /** The sessions this process folded, least recently used first. */
  readonly #cache = new LruMap<string, Folded>();
  /** Appends sent and not answered yet. */
  #appending = 0;
  #sessionsLost = 0;
  /** The newest sessions counted in #sessionsLost (see BreakerStoreStatus.restoredSessions). */
  #restored: readonly string[] = [];
  #runId: string | undefined;
  #restarted = false;
  #evictionPolicy: string | undefined;
  /** Whether this process asked the server for its run id yet (see #checkServer). */
  #serverAsked = false;
  /** When this process first had a reply from the server (performance.now()): a server up for less time than since then restarted. */
  #firstReplyAt: number | undefined;
  /** The server check in flight (see #checkServerOnce). */
  #checking: Promise<void> | undefined;
  /** The sessions listOpen missed when it last asked the server whether it restarted (see #missingOpen). */
  #missedBefore = '';
  /** The reducer of the latest operation: what tells the sessions a restarted server must get back (see #restorePinned). */
  #reducer: SessionReducer | undefined;
  /**
   * The server's clock minus this process's performance.now(), as replies
   * bound it from below (the server read its clock before the reply
   * arrived): the highest reading of this window and of the one before.
   */
  #clockBest = Number.NEGATIVE_INFINITY;
  #clockBefore = Number.NEGATIVE_INFINITY;
  #clockSince = Number.NEGATIVE_INFINITY;
  readonly #probeKey: string;
  /** Set when the store created the client: it connects and closes it. */
  readonly #owned: OwnedClient | undefined;
  /** Why the owned client's connection fails, until it is ready again: while it reconnects, a command only hears that it is offline. */
  #connectionError: unknown;
  /** Set while the server is known not to answer in time: operations then fail at once (see {@link RedisBreakerStoreOptions.timeoutMs}). */
  #stall: Stall | undefined;
  #connecting: Promise<unknown> | undefined;
  #closed = false;
  /** How long after this process set a session's expiry it sets it again (see {@link RedisBreakerStoreOptions.ttlMs}). */
  readonly #refreshEveryMs: number;
  /** The expiry the store sets: ttlMs plus {@link #refreshEveryMs}, so that no session expires sooner than ttlMs after its last write. */
  readonly #expiryMs: string;
  readonly #idPrefix = `${randomUUID()}:`;
  #created = 0;

  constructor(options: RedisBreakerStoreOptions) {
    validateOptions('RedisBreakerStore', options, REDIS_BREAKER_STORE_OPTION_RULES);
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('options', 'pass { client } or { url }');
    }
    if (options.client !== undefined && options.url !== undefined) {
      throw new InvalidOptionError('url', 'pass either client or url, not both');
    }
    if (options.client === undefined && options.url === undefined) {
      throw new InvalidOptionError('client', 'pass a node-redis client or a url');
    }
    if (options.client !== undefined && typeof options.client.sendCommand !== 'function') {
      throw new InvalidOptionError('client', 'must be a node-redis client (it has no sendCommand method)');
    }
    const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (typeof keyPrefix !== 'string') throw new InvalidOptionError('keyPrefix', 'must be a string');
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new InvalidOptionError('ttlMs', 'must be a positive integer (milliseconds)');
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new InvalidOptionError('timeoutMs', 'must be a positive number (milliseconds)');
    const cacheSessions = options.cacheSessions ?? DEFAULT_CACHE_SESSIONS;
    if (!Number.isInteger(cacheSessions) || cacheSessions < 1) throw new InvalidOptionError('cacheSessions', 'must be a positive integer');
    if (options.isOpen !== undefined && typeof options.isOpen !== 'function') {
      throw new InvalidOptionError('isOpen', 'must be a function');
    }

    // Separate namespaces: no session id can collide with the set's key.
    this.#sessionPrefix = `${keyPrefix}session:`;
    // Not the `open-sessions` set of earlier versions: a sorted set under that name would fail their commands in a rolling upgrade.
    this.#openKey = `${keyPrefix}open-until`;
    this.#logPrefix = `${keyPrefix}log:`;
    this.#steerPrefix = `${keyPrefix}steers:`;
    this.#seenPrefix = `${keyPrefix}seen:`;
    this.#aliasPrefix = `${keyPrefix}alias:`;
    this.#aliasesPrefix = `${keyPrefix}aliases:`;
    this.#notesPrefix = `${keyPrefix}notes:`;
    this.#probeKey = `${keyPrefix}write-probe`;
    this.cacheSessions = cacheSessions;
    this.#ttlMs = ttlMs;
    this.#refreshEveryMs = Math.min(MAX_EXPIRY_SLACK_MS, Math.floor(ttlMs / 10));
    this.#expiryMs = String(ttlMs + this.#refreshEveryMs);
    this.#timeoutMs = timeoutMs;
    this.#isOpen = options.isOpen ?? defaultIsOpen;

    if (options.client !== undefined) {
      this.#client = options.client;
      this.#owned = undefined;
    } else {
      const url = options.url as string;
      assertRedisUrl(url);
      let readyBefore = false;
      const client = createClientForUrl(() => createOwnedClient(url, timeoutMs, () => !readyBefore));
      // Without a listener node-redis would crash the process on a lost connection.
      client.on('error', (error: unknown) => {
        this.#connectionError = error;
      });
      client.on('ready', () => {
        this.#connectionError = undefined;
        // Connected anew: the server answered the handshake.
        this.#stall = undefined;
        // Connected again: a server that restarted meanwhile gets back the sessions it may not forget, without waiting for a call.
        if (readyBefore) setImmediate(() => void this.#checkServerOnce());
        readyBefore = true;
      });
      this.#owned = client;
      this.#client = client as unknown as RedisCommandClient;
    }
  }

  /** Key of a session's hash. */
  #key(sessionId: string): string {
    return this.#sessionPrefix + sessionId;
  }

  /** Keys of a session's hash and its log, as the session scripts take them. */
  #sessionKeys(sessionId: string): string[] {
    return [this.#key(sessionId), this.#logPrefix + sessionId];
  }

  async #ready(): Promise<void> {
    const owned = this.#owned;
    if (this.#closed) throw new Error('the store is closed');
    if (owned === undefined) return;
    // The client reports itself open as soon as connect() starts, before its
    // handshake: callers arriving meanwhile wait for that first connection,
    // or the client (no offline queue) would refuse their commands.
    if (this.#connecting !== undefined) {
      await this.#connecting;
      return;
    }
    // Open but not ready otherwise means reconnecting: the command then fails
    // at once, which is what an outage should look like.
    if (owned.isOpen) return;
    this.#connecting = owned.connect().finally(() => {
      this.#connecting = undefined;
    });
    await this.#connecting;
  }

  /**
   * Sends a command. When the client is connected the command is handed to
   * it before this returns, so that the caller can work while it is in flight.
   */
  #send(operation: string, args: ReadonlyArray<string | Buffer>, binary = false, withoutScript?: () => ReadonlyArray<string | Buffer>): Promise<unknown> {
    const owned = this.#owned;
    const stall = this.#stall;
    let probe = false;
    if (stall !== undefined && !this.#closed) {
      const since = performance.now() - stall.at;
      // Known not to answer: failing at once spares each caller a wait the last one found in vain.
      if (stall.probing || since < this.#timeoutMs) return Promise.reject(this.#notSent(operation, stall, since));
      stall.probing = true;
      probe = true;
    }
    // One timer, cleared on the reply, bounds the wait; the abort makes a
    // client that is not ready drop a command it still holds (reconnecting),
    // so that it is not run after its caller was told it failed. node-redis's
    // own timeout (5 s unless configured) is turned off: it leaves a timer
    // per command running for its whole length, reply or not.
    let abort: AbortController | undefined;
    const options = () => {
      const base = binary ? BYTES_REPLY : TEXT_REPLY;
      if (this.#client.isReady === true) return base;
      abort = new AbortController();
      return { ...base, abortSignal: abort.signal };
    };
    let sent: Promise<unknown>;
    if (this.#closed || (owned !== undefined && (!owned.isOpen || this.#connecting !== undefined))) {
      sent = this.#ready().then(() => this.#client.sendCommand(args, options()));
    } else {
      try {
        sent = this.#client.sendCommand(args, options());
      } catch (error) {
        sent = Promise.reject(error);
      }
    }
    const timeoutMs = this.#timeoutMs;
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        // A reply that arrived while this process was busy is read before giving up on it (timers run before I/O).
        setImmediate(() => {
          if (settled) return;
          settled = true;
          abort?.abort();
          const error = new Error(this.#withConnectionFailure(`no reply within ${timeoutMs} ms`));
          // A probe that times out starts a new window; any other keeps a probe in flight the only one.
          this.#stall = { at: performance.now(), operation, reason: error.message, probing: !probe && this.#stall?.probing === true };
          reject(new BreakerStoreError(operation, error.message, { cause: error }));
        });
      }, timeoutMs);
      timer.unref();
      sent.then(
        (reply) => {
          clearTimeout(timer);
          if (this.#firstReplyAt === undefined) {
            this.#firstReplyAt = performance.now();
            // The run id known from the start: a restart soon after is told by it, which the uptime cannot tell.
            if (!this.#serverAsked) this.#checkServerSoon();
          }
          // Any reply, even to a command given up on, shows that the server answers again.
          this.#stall = undefined;
          if (settled) return;
          settled = true;
          resolve(reply);
        },
        (error: unknown) => {
          clearTimeout(timer);
          // So does an error reply (NOSCRIPT, say).
          if (isErrorReply(error)) this.#stall = undefined;
          if (settled) return;
          settled = true;
          // A probe that failed without a wait (a refused connection): nothing left to spare callers.
          if (probe) this.#stall = undefined;
          if (withoutScript !== undefined && isNoScript(error)) {
            resolve(this.#send(operation, withoutScript(), binary));
            return;
          }
          reject(new BreakerStoreError(operation, this.#withConnectionFailure(describeRedisError(error)), { cause: error }));
        },
      );
    });
  }

  /**
   * A failure's description, followed by why the owned client's connection
   * fails while it does (a wrong password, a database the server does not
   * have, a refused connection): after the first refusal node-redis only says
   * that the client is offline, which would hide the reason from every later
   * warning, refusal and health check.
   */
  #withConnectionFailure(problem: string): string {
    const owned = this.#owned;
    const failing = this.#connectionError;
    if (this.#closed || owned === undefined || owned.isReady || failing === undefined) return problem;
    const reason = describeRedisError(failing);
    return reason === problem ? problem : `${problem} (the connection fails: ${reason})`;
  }

  /** The failure of an operation not sent while the server is known not to answer (see {@link RedisBreakerStoreOptions.timeoutMs}). */
  #notSent(operation: string, stall: Stall, since: number): BreakerStoreError {
    const next = stall.probing
      ? 'an operation sent since to try again has no reply yet'
      : `the next operation is sent in ${Math.max(1, Math.ceil(this.#timeoutMs - since))} ms`;
    return new BreakerStoreError(operation, `not sent: the server is not answering (${stall.operation} ${Math.round(since)} ms ago: ${stall.reason}); ${next}`);
  }

  /** EVALSHA, and EVAL only when the server has not cached the script yet (NOSCRIPT). Sent before this returns, as {@link #send}. */
  #evalScript(operation: string, s: Script, keys: string[], args: ReadonlyArray<string | Buffer>, binary = false): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    return this.#send(operation, ['EVALSHA', s.sha1, ...tail], binary, () => ['EVAL', s.source, ...tail]);
  }

  /** An id for a session this process may create: unique across processes, without a random draw each time. */
  #newId(): string {
    return `${this.#idPrefix}${++this.#created}`;
  }

  /**
   * The session now: one round trip returning what other writers appended
   * since this process last looked (nothing when this process folded it less
   * than `maxAgeMs` ago).
   */
  async read(sessionId: string, reducer: SessionReducer, maxAgeMs: number): Promise<SessionRead | undefined> {
    this.#reducer = reducer;
    const now = Date.now();
    const cached = this.#known(sessionId, now);
    if (cached !== undefined && now - cached.at < maxAgeMs) return { state: cached.state, position: cached.position };
    const keys = this.#sessionKeys(sessionId);
    // Read once with the server's clock: an append given up on must carry a deadline (see #deadline).
    const clockUnknown = this.#deadline() === '';
    const reply = await this.#evalScript('read', SCRIPTS.read, keys, [String(cached?.position ?? -1), cached?.id ?? '', clockUnknown ? '1' : '0'], true);
    const fold = decodeFold('read', reply);
    if (clockUnknown) this.#noteServerClock(fold.time);
    if (cached !== undefined && fold.end === 0) {
      // The server forgot the session: keep what we know, and write it back.
      const marked = this.#lost(sessionId, cached);
      // Found now: the server may have restarted, and forgotten more that this process holds.
      if (marked !== cached) this.#checkServerSoon();
      await this.#restore(sessionId, marked, reducer).catch(() => {});
      return { state: cached.state, position: cached.position };
    }
    if (fold.end === 0) return undefined;
    const diverged = cached !== undefined && diverges(fold, cached);
    if (diverged && fold.kin !== Kin.Same && cached.lost !== true) this.#checkServerSoon();
    const merge = diverged ? this.#mergeStart(fold, cached, reducer) : undefined;
    if (merge !== undefined) {
      let state = merge.state;
      for (const op of merge.ops) state = applyOp(reducer, state, readOp('read', op));
      const joined = this.#join(sessionId, fold, merge.cached, state, fold.end, 0);
      // Every replica must refuse an open breaker again now, not once this process happens to write to it.
      if (reducer.retention(state).pinned) await this.#merge(sessionId, joined, reducer).catch(() => false);
      return { state, position: fold.end };
    }
    // Another incarnation that holds all this process knew: folded as it is, not continued from this process's copy.
    const mine = fold.kin === Kin.Same && !diverged ? cached : undefined;
    let state = this.#start(fold, mine, () => reducer.initial(Date.now()));
    for (const op of fold.ops) state = applyOp(reducer, state, readOp('read', op));
    // A snapshot this process owes stays owed: it goes with the next append (unless the copy it was folded from is gone).
    const owed = mine?.owed;
    this.#remember(
      sessionId,
      {
        position: fold.end,
        state,
        base: fold.base,
        at: Date.now(),
        id: fold.id,
        ancestry: fold.ancestry,
        refreshedAt: mine?.refreshedAt ?? 0,
        quiet: mine === undefined || fold.ops.length === 0,
        logged: loggedAfter(fold, mine),
        ...(owed ? { owed } : {}),
      },
      cached !== undefined && mine === undefined,
    );
    return { state, position: fold.end };
  }

  /**
   * Appends the operation and judges it after every operation ordered
   * before it, in one round trip. The judgement against the state this
   * process knows is made while the append is in flight, and kept when the
   * reply shows that no other writer's operation came in between (else the
   * operation is judged again after theirs, in log order). A restored
   * session also stores a snapshot (a second round trip). A log full of
   * operations nobody folded is folded first (see MAX_LOGGED); when this
   * process cannot read it either, the error says so and why.
   */
  async apply(sessionId: string, original: SessionOp, reducer: SessionReducer): Promise<AppliedOp> {
    this.#reducer = reducer;
    try {
      return await this.#append(sessionId, original, reducer);
    } catch (error) {
      if (!isLogFull(error)) throw error;
      await this.#foldFullLog(sessionId, reducer);
      return this.#append(sessionId, original, reducer);
    }
  }

  /** Folds a full log into a snapshot, when this process can read the session. */
  async #foldFullLog(sessionId: string, reducer: SessionReducer): Promise<void> {
    let read: SessionRead | undefined;
    try {
      read = await this.read(sessionId, reducer, 0);
    } catch (error) {
      throw new BreakerStoreError('apply', `the session's log is full: ${MAX_LOGGED} operations no writer could fold into a snapshot`, { cause: error });
    }
    if (read === undefined) return;
    const folded = this.#cache.get(sessionId);
    // A copy this process knows more than is not folded as it is: the append after this writes it back whole.
    if (folded === undefined || folded.lost === true || folded.position !== read.position) return;
    await this.#compact(sessionId, this.#sessionKeys(sessionId), folded.id, read.position, read.state);
  }

  async #append(sessionId: string, original: SessionOp, reducer: SessionReducer): Promise<AppliedOp> {
    // The log keeps what the detectors read, not the raw payloads; every writer judges that same form.
    const op = reducer.digest?.(original) ?? original;
    let logged: string;
    try {
      logged = encodeOp(op);
    } catch (error) {
      throw new BreakerStoreError('apply', `operation is not serialisable: ${describeRedisError(error)}`, { cause: error });
    }
    // Without the server's clock an append carries no deadline, and one given up on would still be applied when a
    // stalled server resumes: the first append of the process reads the clock first (its later replies keep it).
    if (this.#deadline() === '') await this.#readServerClock();
    const now = Date.now();
    const cached = this.#known(sessionId, now);
    const keys = this.#sessionKeys(sessionId);
    const refresh = cached === undefined || now - cached.refreshedAt >= this.#refreshEveryMs;
    const owed = cached?.owed;
    const args: Array<string | Buffer> = [
      String(cached?.position ?? -1),
      logged,
      this.#expiryMs,
      refresh ? '1' : '0',
      cached?.id ?? '',
      this.#newId(),
      this.#deadline(),
    ];
    const sendsOwed = owed?.bytes !== undefined;
    if (sendsOwed) args.push(String(owed.position), owed.bytes!);
    this.#appending++;
    const replied = this.#evalScript('apply', SCRIPTS.append, keys, args, true);
    const start = cached?.state ?? reducer.initial(now);
    const ownBytes = Buffer.byteLength(logged);
    const quiet = cached === undefined || cached.quiet;
    let guess: Outcome | undefined;
    if (quiet || (owed !== undefined && !sendsOwed)) {
      // Awaited below; until then a failure must not count as unhandled.
      replied.catch(() => {});
      // Once the append is written, what follows overlaps its round trip.
      await afterPendingWrites();
    }
    if (quiet) {
      try {
        guess = reducer.apply(start, op);
      } catch {
        // Judged again after the reply, where the error is reported.
      }
    }
    if (owed !== undefined && owed.bytes === undefined) serialise(owed);
    let reply: unknown;
    try {
      reply = await replied;
    } finally {
      this.#appending--;
    }
    const fold = decodeFold('apply', reply, cached);
    this.#noteServerClock(fold.time);
    const position = fold.end;
    const diverged = cached !== undefined && diverges(fold, cached);
    const merge = diverged ? this.#mergeStart(fold, cached, reducer) : undefined;
    // Another incarnation that holds all this process knew: judged against it as it is, not against this process's copy.
    const mine = fold.kin === Kin.Same && !diverged ? cached : undefined;
    let before = merge?.state ?? this.#start(fold, mine, () => (cached === undefined ? start : reducer.initial(Date.now())));
    const ops = merge?.ops ?? fold.ops;
    let outcome: Outcome;
    if (guess !== undefined && before === start && ops.length === 0) {
      outcome = guess;
    } else {
      for (const raw of ops) before = applyOp(reducer, before, readOp('apply', raw));
      outcome = reducer.apply(before, op);
    }
    const state = outcome.next ?? before;
    if (cached !== undefined && fold.kin !== Kin.Same && cached.lost !== true) this.#checkServerSoon();
    // A session that may not be forgotten: from now on, a restart of the server must be noticed (see #checkServer).
    if (!this.#serverAsked && reducer.retention(state).pinned) this.#checkServerSoon();
    if (merge !== undefined) {
      // Writing back what the server's copy lacked lists the session as open or not too. Should the copy change
      // meanwhile, it stays lost, for the next write; the operation is applied and judged either way.
      const joined = this.#join(sessionId, fold, merge.cached, state, position, refresh ? now : 0);
      await this.#merge(sessionId, joined, reducer).catch(() => false);
      return { outcome, state, position };
    }
    const kept = mine !== undefined && owed !== undefined && !sendsOwed && owed.bytes !== undefined ? owed : undefined;
    const loggedNow = loggedAfter(fold, mine, ownBytes);
    this.#remember(
      sessionId,
      {
        position,
        state,
        base: fold.base,
        at: now,
        id: fold.id,
        ancestry: fold.ancestry,
        refreshedAt: refresh ? now : (mine?.refreshedAt ?? 0),
        quiet: fold.ops.length === 0,
        logged: loggedNow,
        ...(kept === undefined ? {} : { owed: kept }),
      },
      cached !== undefined && mine === undefined,
    );
    const since = position - fold.base;
    if (since >= 4 * COMPACT_EVERY) {
      // Nobody folded the log for long: store a snapshot now.
      await this.#compact(sessionId, keys, fold.id, position, state);
    } else if (foldsAtOnce(ownBytes)) {
      // The operation is applied whether or not the snapshot lands: one that does not goes with the next append.
      const folded = await this.#compact(sessionId, keys, fold.id, position, state).then(
        () => true,
        () => false,
      );
      if (!folded) {
        const owed: Owed = { position, state };
        serialise(owed);
        this.#owe(sessionId, owed);
      }
    } else if (foldsLog(since, lastBytes(loggedNow, since), ownBytes)) {
      // Sent with the next append. Serialised once this event's caller has its decision, while it waits for
      // something else (its model, its tool), else during the next append's round trip.
      const owed: Owed = { position, state };
      if (this.#owe(sessionId, owed)) this.#serialiseSoon(owed);
    }
    const wasOpen = this.#isOpen(before);
    const open = this.#isOpen(state);
    if (wasOpen !== open) {
      // A breaker open by a custom isOpen without a cooldown stays listed until it closes.
      const until = open ? reducer.retention(state).until || '+inf' : '';
      await this.#evalScript('apply', SCRIPTS.markOpen, [keys[0]!, this.#openKey], [String(position), String(until), sessionId, String(this.#ttlMs)]);
    }
    return { outcome, state, position };
  }

  /**
   * Where folding what this process knows with a copy of the session that
   * lacks some of it starts (see the session layout in session-scripts.ts): this
   * process's state and the copy's operations since it began, when the copy
   * began from what this process knew and its log still holds them all.
   * Else the two cannot be folded together exactly, and one is kept whole,
   * the other's operations lost to it: the copy when it alone may not be
   * forgotten (an open breaker, a spent budget), so that folding never
   * undoes a trip (then it is taken as it is: undefined), else this
   * process's, the copy's logged operations folded onto it.
   */
  #mergeStart(fold: FoldReply, cached: Folded, reducer: SessionReducer): { state: BreakerSessionState; ops: readonly unknown[]; cached: Folded } | undefined {
    const mine = cached.state;
    if (fold.id === cached.id ? fold.snap === undefined : fold.began >= fold.base && includes(knowledge(cached), fold.ancestry)) {
      return { state: mine, ops: fold.id === cached.id ? fold.ops : fold.ops.slice(fold.began - fold.base), cached };
    }
    const theirs = this.#start(fold, undefined, () => reducer.initial(Date.now()));
    if (reducer.retention(theirs).pinned && !reducer.retention(mine).pinned) return undefined;
    return { state: mine, ops: fold.id === cached.id ? fold.ops : fold.ops.slice(Math.max(0, fold.began - fold.base)), cached };
  }

  /**
   * Remembers `state`, what this process knew with a copy's operations
   * folded in up to `position` of the copy's incarnation, as not written
   * back yet (see {@link Folded.lost}).
   */
  #join(sessionId: string, fold: FoldReply, cached: Folded, state: BreakerSessionState, position: number, refreshedAt: number): Folded {
    const joined: Folded = {
      position,
      state,
      base: fold.base,
      at: Date.now(),
      id: fold.id,
      ancestry: fold.ancestry,
      beyond: knowledge(cached),
      refreshedAt,
      quiet: false,
      logged: [],
      lost: true,
    };
    this.#remember(sessionId, joined, true);
    return joined;
  }

  /**
   * Writes back a session as this process folded it from what it knew and
   * the server's copy (see MERGE), and counts it: true when written, false
   * when the copy changed meanwhile (it stays lost, for the next write).
   */
  async #merge(sessionId: string, joined: Folded, reducer: SessionReducer): Promise<boolean> {
    const { id, keys, args } = this.#reincarnation('apply', sessionId, joined.state, joined.position, reducer);
    // The script adds the copy's incarnation.
    const known = ancestry([joined.ancestry, joined.beyond ?? ''], MAX_ANCESTRY - 1);
    const done = await this.#evalScript('apply', SCRIPTS.merge, keys, [...args, joined.id ?? '', known]);
    if (Number(done) !== 1) return false;
    this.#countLost(sessionId);
    if (this.#cache.get(sessionId) === joined) this.#cache.set(sessionId, writtenBack(joined, id, ancestry([known, [joined.id, joined.position]])));
    return true;
  }

  /**
   * What RESTORE and MERGE begin a new incarnation with (see REINCARNATE):
   * its id, the session's keys, and ARGV[1..7] for `state` as the snapshot
   * after `position`.
   */
  #reincarnation(
    operation: string,
    sessionId: string,
    state: BreakerSessionState,
    position: number,
    reducer: SessionReducer,
  ): { id: string; keys: string[]; args: Array<string | Buffer> } {
    const snapshot = this.#encode(operation, state);
    const until = this.#isOpen(state) ? reducer.retention(state).until || '+inf' : '';
    const id = this.#newId();
    return {
      id,
      keys: [this.#key(sessionId), this.#logPrefix + sessionId, this.#openKey],
      args: [id, String(position), snapshot, this.#expiryMs, String(until), sessionId, String(this.#ttlMs)],
    };
  }

  /** `state` as the store writes it; a state that cannot be written is the caller's error, typed. */
  #encode(operation: string, state: BreakerSessionState): Buffer {
    try {
      return asBuffer(compressState(state));
    } catch (error) {
      throw new BreakerStoreError(operation, `state is not serialisable: ${describeRedisError(error)}`, { cause: error });
    }
  }

  /** Makes `state` at `position` the snapshot. */
  async #compact(sessionId: string, keys: string[], id: string | undefined, position: number, state: BreakerSessionState): Promise<void> {
    const done = await this.#evalScript('apply', SCRIPTS.compact, keys, [String(position), this.#encode('apply', state), id ?? '']);
    if (Number(done) === 1) {
      const cached = this.#cache.get(sessionId);
      if (cached !== undefined && cached.position === position) this.#cache.set(sessionId, { ...cached, base: position });
    }
  }

  /**
   * Serialises an owed snapshot once the caller that made it owed has its
   * decision: unless an append is on its way by then, whose round trip
   * serialises it instead of delaying its write.
   */
  #serialiseSoon(owed: Owed): void {
    setImmediate(() => {
      if (owed.bytes === undefined && this.#appending === 0) serialise(owed);
    }).unref();
  }

  #owe(sessionId: string, owed: Owed): boolean {
    const cached = this.#cache.get(sessionId);
    // A snapshot already owed goes first: replacing it before it is sent would starve a log of large operations.
    if (cached === undefined || cached.position !== owed.position || cached.owed !== undefined) return false;
    this.#cache.set(sessionId, { ...cached, owed });
    return true;
  }

  #start(fold: FoldReply, cached: Folded | undefined, fresh: () => BreakerSessionState): BreakerSessionState {
    if (cached !== undefined && continuesCache(fold, cached)) return cached.state;
    if (fold.snap === undefined) return fresh();
    try {
      return decompressState(typeof fold.snap === 'string' ? Buffer.from(fold.snap) : fold.snap);
    } catch (error) {
      throw new BreakerStoreError('read', 'stored snapshot is not a session state', { cause: error });
    }
  }

  /**
   * The session as this process last folded it, unless that was `ttlMs` ago
   * or longer: the server may have let it expire since, as it should, and
   * then it is a new session, not one the server lost.
   */
  #known(sessionId: string, now: number): Folded | undefined {
    const cached = this.#cache.get(sessionId);
    if (cached === undefined || now - cached.at < this.#ttlMs) return cached;
    this.#cache.delete(sessionId);
    return undefined;
  }

  #remember(sessionId: string, folded: Folded, restored = false): void {
    const cached = this.#cache.get(sessionId);
    // Two operations of this process on one session may finish out of order: keep the later.
    if (!restored && cached !== undefined && cached.position > folded.position) return;
    this.#cache.set(sessionId, folded);
    this.#cache.touch(sessionId);
    // The least recently used sit first: drop those over the cap, then those too old to trust (see #known).
    for (let oldest = this.#cache.oldest(); oldest !== undefined; oldest = this.#cache.oldest()) {
      if (this.#cache.size <= this.cacheSessions && folded.at - oldest.value.at < this.#ttlMs) break;
      this.#cache.delete(oldest.key);
    }
  }

  /** Marks a session the server forgot until it is written back (see {@link Folded.lost}); returns the marked entry. */
  #lost(sessionId: string, cached: Folded): Folded {
    if (cached.lost === true) return cached;
    const marked: Folded = { ...cached, lost: true };
    this.#cache.set(sessionId, marked);
    return marked;
  }

  /**
   * Writes back a session the server forgot, as this process holds it, and
   * counts it: its state as the snapshot at the position this process knows,
   * listed as open when it is, so that every replica judges it as this one
   * does. A session that is there is replaced only by a process that knows
   * all it holds (see RESTORE). Else it is left alone; when it lacks
   * something this process knew (created anew by a writer that did not
   * know it, or written back by one that knew less and written to since) it
   * stays marked lost, and is written back with the copy's operations
   * folded in (see MERGE): by the next write, or at once by a read of a
   * session that may not be forgotten. Resolves true in that case.
   */
  async #restore(sessionId: string, cached: Folded, reducer: SessionReducer): Promise<boolean> {
    const { id, keys, args } = this.#reincarnation('restore', sessionId, cached.state, cached.position, reducer);
    const known = knowledge(cached);
    const reply = await this.#evalScript('restore', SCRIPTS.restore, keys, [...args, known]);
    // Another operation of this process on the session finished meanwhile: what it found stands.
    const current = this.#cache.get(sessionId) === cached;
    if (Array.isArray(reply)) {
      const diverged = Number(reply[2]) === Kin.Diverged;
      if (current && diverged) this.#lost(sessionId, cached);
      // Held by the server already: the next read folds the server's copy.
      return diverged;
    }
    this.#countLost(sessionId);
    if (current) this.#cache.set(sessionId, writtenBack(cached, id, known));
    return false;
  }

  #countLost(sessionId: string): void {
    this.#sessionsLost++;
    // Replaced, not changed: status() hands it out as it is.
    this.#restored = [...this.#restored.slice(1 - RESTORED_SESSIONS_KEPT), sessionId];
  }

  /** After a restart of the server: writes back every session this process holds that may not be forgotten (an open breaker, a spent budget). */
  async #restorePinned(): Promise<void> {
    const reducer = this.#reducer;
    if (reducer === undefined) return;
    const now = Date.now();
    const pinned: [string, Folded][] = [];
    for (const [sessionId, folded] of this.#cache.entries()) {
      if (now - folded.at < this.#ttlMs && reducer.retention(folded.state).pinned) pinned.push([sessionId, folded]);
    }
    // Each on its own: one that cannot be written back now is written back by its next write. A copy that lacks
    // something this process knew is folded with what it knew by the read (see read).
    await Promise.all(
      pinned.map(async ([sessionId, folded]) => {
        if (await this.#restore(sessionId, folded, reducer).catch(() => false)) await this.read(sessionId, reducer, 0).catch(() => {});
      }),
    );
  }

  /** Removes a session's state, its log and its open mark. */
  async delete(sessionId: string): Promise<void> {
    this.#cache.delete(sessionId);
    await this.#evalScript(
      'delete',
      SCRIPTS.delete,
      [
        this.#key(sessionId),
        this.#logPrefix + sessionId,
        this.#openKey,
        this.#steerPrefix + sessionId,
        this.#seenPrefix + sessionId,
        this.#aliasesPrefix + sessionId,
        this.#notesPrefix + sessionId,
      ],
      [sessionId],
    );
  }

  /**
   * Keeps steer messages for the session's next model request, for every
   * replica: one round trip; the newest {@link MAX_WAITING_STEERS} are kept,
   * redacted, for as long as the session (`ttlMs`).
   */
  async addSteers(sessionId: string, messages: readonly string[]): Promise<void> {
    if (messages.length === 0) return;
    await this.#evalScript(
      'addSteers',
      SCRIPTS.addSteers,
      [this.#steerPrefix + sessionId],
      [String(this.#ttlMs), String(MAX_WAITING_STEERS), ...messages.map((m) => redact(m))],
    );
  }

  /** Takes the session's waiting steer messages, oldest first, in one round trip: each is delivered once, by one replica. */
  async takeSteers(sessionId: string): Promise<string[]> {
    const reply = await this.#evalScript('takeSteers', SCRIPTS.takeSteers, [this.#steerPrefix + sessionId], []);
    if (!Array.isArray(reply)) throw new BreakerStoreError('takeSteers', 'unexpected reply from Redis');
    return reply.map((m) => text(m)).filter((m): m is string => m !== undefined);
  }

  /**
   * Marks keys as seen in the session, for every replica, in one round trip:
   * true for each key no replica marked before. Keys are kept as 53-bit
   * hashes, the session's newest {@link SEEN_KEYS_KEPT} (and all of the
   * latest call's), for as long as the session (`ttlMs`).
   */
  async claimFirst(sessionId: string, keys: readonly string[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const reply = await this.#evalScript(
      'claimFirst',
      SCRIPTS.claimFirst,
      [this.#seenPrefix + sessionId],
      [this.#expiryMs, String(SEEN_KEYS_KEPT), ...keys.map((key) => hash53(key).toString(36))],
    );
    if (!Array.isArray(reply) || reply.length !== keys.length) throw new BreakerStoreError('claimFirst', 'unexpected reply from Redis');
    return reply.map((first) => Number(first) === 1);
  }

  /**
   * Points an alias at the session for every replica, in one round trip. A
   * session keeps its newest {@link MAX_ALIASES}, each for as long as the
   * session (`ttlMs`); deleting the session drops them.
   */
  async addAlias(sessionId: string, alias: string): Promise<void> {
    await this.#evalScript(
      'addAlias',
      SCRIPTS.addAlias,
      [this.#aliasPrefix + alias, this.#aliasesPrefix + sessionId],
      [sessionId, this.#expiryMs, String(MAX_ALIASES)],
    );
  }

  /** The session an alias names, in one round trip; undefined when none does. */
  async sessionOfAlias(alias: string): Promise<string | undefined> {
    const reply = await this.#send('sessionOfAlias', ['GET', this.#aliasPrefix + alias]);
    if (reply === null) return undefined;
    const id = text(reply);
    if (id === undefined) throw new BreakerStoreError('sessionOfAlias', 'unexpected reply from Redis');
    return id;
  }

  /**
   * Keeps a note about the session for every replica, in one round trip,
   * replacing the one of the same name, for as long as the session
   * (`ttlMs`); deleting the session drops it. The value is kept as given:
   * it must hold no secret.
   */
  async putNote(sessionId: string, name: string, value: string): Promise<void> {
    await this.#evalScript('putNote', SCRIPTS.putNote, [this.#notesPrefix + sessionId], [name, value, this.#expiryMs]);
  }

  /** The session's note of that name, in one round trip; undefined when there is none. */
  async readNote(sessionId: string, name: string): Promise<string | undefined> {
    const reply = await this.#send('readNote', ['HGET', this.#notesPrefix + sessionId, name]);
    if (reply === null) return undefined;
    const value = text(reply);
    if (value === undefined) throw new BreakerStoreError('readNote', 'unexpected reply from Redis');
    return value;
  }

  /**
   * Ids of sessions whose breaker is open and whose state has not expired.
   * When the server does not list a session this process holds as open, it
   * asks the server whether it restarted (one round trip; not again for the
   * same sessions), writes back what a restart made it forget (see
   * {@link status}) and lists again.
   */
  async listOpen(now = Date.now()): Promise<string[]> {
    const open = await this.#listOpen(now);
    const missed = this.#missingOpen(open, now);
    const asked = missed === this.#missedBefore;
    this.#missedBefore = missed;
    if (missed === '' || asked) return open;
    await this.#checkServerOnce();
    return this.#listOpen(now);
  }

  async #listOpen(now: number): Promise<string[]> {
    const reply = await this.#evalScript('listOpen', SCRIPTS.listOpen, [this.#openKey], [this.#sessionPrefix, String(now)]);
    if (!Array.isArray(reply)) throw new BreakerStoreError('listOpen', 'unexpected reply from Redis');
    return reply
      .map((id) => text(id))
      .filter((id): id is string => id !== undefined)
      .sort();
  }

  /** The sessions this process holds as open and cooling down at `now` that `listed` leaves out, one per line. */
  #missingOpen(listed: readonly string[], now: number): string {
    const reducer = this.#reducer;
    if (reducer === undefined) return '';
    const shown = new Set(listed);
    const missing: string[] = [];
    const at = Date.now();
    for (const [sessionId, folded] of this.#cache.entries()) {
      if (shown.has(sessionId) || at - folded.at >= this.#ttlMs || !this.#isOpen(folded.state)) continue;
      const until = reducer.retention(folded.state).until;
      if (until === 0 || until > now) missing.push(sessionId);
    }
    return missing.sort().join('\n');
  }

  /**
   * For health checks: resolves when the server answers a PING and takes a
   * write (one that keeps nothing), otherwise fails with a
   * {@link BreakerStoreError} (credentials masked): a full server that may
   * not evict, or a read-only replica, refuses every breaker write, which is
   * an outage too. Reads INFO in between, for {@link status}: whether the
   * server restarted (then the sessions it may not forget are written back
   * first) and whether it may evict sessions.
   */
  async ping(): Promise<void> {
    const reply = text(await this.#send('ping', ['PING']));
    if (reply !== 'PONG') throw new BreakerStoreError('ping', 'unexpected reply from Redis');
    await this.#checkServerOnce();
    await this.#evalScript('ping', SCRIPTS.writeProbe, [this.#probeKey], []);
  }

  /** What {@link ping}, {@link listOpen}, {@link read} and {@link apply} noticed: a restarted server, forgotten sessions, a server that may evict them. */
  status(): BreakerStoreStatus {
    return {
      restarted: this.#restarted,
      sessionsLost: this.#sessionsLost,
      ...(this.#restored.length === 0 ? {} : { restoredSessions: this.#restored }),
      ...(this.#evictionPolicy === undefined ? {} : { evictionPolicy: this.#evictionPolicy }),
    };
  }

  /**
   * Notes the server's run id (a new one means it restarted and, without
   * persistence, forgot) and whether it may evict sessions when full. Before
   * this process knew a run id, a server up for less time than since its
   * first reply to this process restarted too. After a restart, writes back
   * the sessions it may not forget (see {@link #restorePinned}).
   */
  async #checkServer(): Promise<void> {
    this.#serverAsked = true;
    const askedAt = performance.now();
    let info: string | undefined;
    try {
      // The default sections hold the run id, the uptime and the memory policy, on every Redis version (INFO takes one section before 7).
      info = text(await this.#send('ping', ['INFO']));
    } catch {
      return; // INFO may be refused to a restricted user: then restarts and eviction go unnoticed here.
    }
    if (info === undefined) return;
    this.#evictionPolicy = evictionPolicy(info);
    const runId = /run_id:([0-9a-f]+)/.exec(info)?.[1];
    const uptime = /^uptime_in_seconds:(\d+)/m.exec(info)?.[1];
    const known = this.#runId;
    if (runId !== undefined) this.#runId = runId;
    const restarted =
      known !== undefined
        ? runId !== undefined && runId !== known
        : uptime !== undefined && this.#firstReplyAt !== undefined && askedAt - (Number(uptime) + 1) * 1000 > this.#firstReplyAt;
    if (!restarted) return;
    this.#restarted = true;
    await this.#restorePinned();
  }

  /** {@link #checkServer}, once at a time. Never rejects. */
  #checkServerOnce(): Promise<void> {
    this.#checking ??= this.#checkServer().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /** {@link #checkServerOnce} without waiting for it. */
  #checkServerSoon(): void {
    void this.#checkServerOnce();
  }

  /**
   * The server time (epoch ms) past which an append sent now finds that its
   * writer stopped waiting ('' while the server's clock is not known): the
   * writer's timeout less a margin for the reply's way back, on the server's
   * clock as this process reads it (see {@link #noteServerClock}).
   */
  #deadline(): string {
    const offset = Math.max(this.#clockBest, this.#clockBefore);
    if (offset === Number.NEGATIVE_INFINITY) return '';
    return String(Math.floor(performance.now() + offset + this.#timeoutMs - Math.min(DEADLINE_MARGIN_MS, this.#timeoutMs / 4)));
  }

  /** Reads the server's clock (`TIME`), as an append's reply would tell it. */
  async #readServerClock(): Promise<void> {
    const reply = (await this.#send('apply', ['TIME'])) as unknown;
    if (Array.isArray(reply) && reply.length === 2) this.#noteServerClock(Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000));
  }

  /**
   * Notes the server's clock as a reply read it: its time less this
   * process's at the reply, which is at most their difference (the reply
   * took some time to come), so the highest reading is the closest. A
   * reading from a reply this process was too busy to read at once is
   * lower, and is passed over; readings older than two windows are
   * forgotten, so that a jump of either clock is followed.
   */
  #noteServerClock(serverMs: number | undefined): void {
    if (serverMs === undefined || !Number.isFinite(serverMs)) return;
    const now = performance.now();
    const reading = serverMs - now;
    if (now - this.#clockSince >= CLOCK_WINDOW_MS) {
      this.#clockBefore = this.#clockBest;
      this.#clockBest = reading;
      this.#clockSince = now;
    } else if (reading > this.#clockBest) {
      this.#clockBest = reading;
    }
  }

  /**
   * Closes the client the store created from `url`, within about `timeoutMs`:
   * it waits that long for the replies still due, then drops the connection
   * (a stalled server would otherwise keep the close waiting forever). A
   * passed-in client is left alone. Operations after it fail with a
   * {@link BreakerStoreError} saying that the store is closed.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const owned = this.#owned;
    if (owned === undefined) return;
    if (owned.isOpen) {
      await closeWithin(owned.close(), this.#timeoutMs, () => owned.destroy());
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * The server's maxmemory policy when it may evict the store's keys: any
 * policy but `noeviction` once `maxmemory` is set (the volatile ones too:
 * every key the store writes has an expiry).
 */
function evictionPolicy(info: string): string | undefined {
  const maxmemory = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0);
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  return maxmemory > 0 && policy !== undefined && policy !== 'noeviction' ? policy : undefined;
}

/** The server does not hold the script an EVALSHA named (it restarted, or its scripts were flushed). */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** APPEND found the session's log full (see MAX_LOGGED). */
function isLogFull(error: unknown): boolean {
  return error instanceof BreakerStoreError && error.cause instanceof Error && error.cause.message.startsWith(LOG_FULL);
}

/**
 * Resolves once the client has written what it was given: node-redis writes
 * queued commands from a setImmediate callback, which runs before this one.
 */
function afterPendingWrites(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Serialises an owed snapshot, or leaves it unsent when it cannot be (the next operation that must write it reports that). */
function serialise(owed: Owed): void {
  try {
    owed.bytes = asBuffer(compressState(owed.state));
  } catch {
    // see above
  }
}

/** Bytes as a Buffer over the same memory: what the client writes as they are. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Replays another writer's operation: only its effect on the state matters here. */
function applyOp(reducer: SessionReducer, state: BreakerSessionState, op: SessionOp): BreakerSessionState {
  return reducer.apply(state, op).next ?? state;
}

/** A Redis error's message, with its code when the message does not hold it, and any URL credentials masked. */
function describeRedisError(error: unknown): string {
  return describeError(error).replace(/\/\/[^@/\s]*@/g, '//***@');
}
