import type { BreakerEvent, ProposedToolCall } from './breaker-event.ts';
import type { BreakerSessionState } from './breaker-state.ts';
import type { AnswerPrint, TaskPrint } from './detectors/delegation-loop.ts';
import type { ResultDigest, ToolProposal } from './detectors/tool-record.ts';
import type { Outcome } from './session-logic.ts';

export type { BreakerSessionState } from './breaker-state.ts';

/**
 * One operation on a session, as the breaker judged it: enough to judge it
 * again the same way on any replica. `at` is the judging clock (epoch ms), so
 * replaying an operation gives the same result wherever and whenever it runs.
 *
 * A digested operation (see {@link SessionReducer.digest}) carries prints in
 * place of raw payloads, which are then null or empty: a tool call's
 * proposal `p` and its result's digest `d`; a sub-agent call's task print
 * `t` and answer print `a`.
 */
export type SessionOp =
  | {
      readonly k: 'observe';
      readonly at: number;
      readonly event: BreakerEvent;
      readonly surfaced?: true;
      readonly p?: ToolProposal;
      readonly d?: ResultDigest;
      readonly t?: TaskPrint;
      readonly a?: AnswerPrint;
    }
  | { readonly k: 'tool'; readonly at: number; readonly call: ProposedToolCall; readonly p?: ToolProposal; readonly t?: TaskPrint }
  | { readonly k: 'model'; readonly at: number }
  | { readonly k: 'reset'; readonly at: number; readonly evidence?: true };

/**
 * The breaker's judgement as the store sees it: a pure, deterministic
 * function from (state, operation) to an outcome. A store applies every
 * operation of a session through it, in one order shared by every writer.
 */
export interface SessionReducer {
  /** A fresh session. */
  initial(at: number): BreakerSessionState;
  /** Judges `op` against `state`; `outcome.next` is null when nothing changed. */
  apply(state: BreakerSessionState, op: SessionOp): Outcome;
  /**
   * The operation as a store that keeps operations (a log) should keep it:
   * judged the same, but holding no raw tool arguments or results, no
   * sub-agent task or answer, and no text a secret redaction would change. A store that keeps it must judge
   * this form, not the original, so that every writer judges the same thing.
   */
  digest?(op: SessionOp): SessionOp;
  /** What a store must not forget about the session yet (see {@link SessionRetention}). */
  retention(state: BreakerSessionState): SessionRetention;
}

/**
 * What a bounded store may forget. A pinned session (OPEN or HALF_OPEN
 * breaker, spent budget) is never evicted to make room for others; an idle
 * session is not expired before `until` (the end of an OPEN breaker's cooldown).
 */
export interface SessionRetention {
  readonly pinned: boolean;
  /** Epoch ms before which the session must not be expired for idleness; 0 when nothing holds it. */
  readonly until: number;
}

/** A session's state as the store holds it now. */
export interface SessionRead {
  readonly state: BreakerSessionState;
  /** Operations applied to the session so far (0 for a session never written). */
  readonly position: number;
}

/** What applying one operation gave. */
export interface AppliedOp {
  /** The operation's judgement, against the state that includes every operation ordered before it. */
  readonly outcome: Outcome;
  /** The state after it. */
  readonly state: BreakerSessionState;
  /** The operation's place in the session's order (1-based). */
  readonly position: number;
}

/** A store's own view of its health, for {@link AgentBreaker.health}. */
export interface BreakerStoreStatus {
  /** The store's server restarted (or lost its data) since this process first saw it. */
  readonly restarted?: boolean;
  /** Sessions this process had state for that the store no longer had (restart without persistence, expiry, eviction). */
  readonly sessionsLost?: number;
  /** The newest of those sessions (at most {@link RESTORED_SESSIONS_KEPT}), oldest first: whose state the store wrote back. */
  readonly restoredSessions?: readonly string[];
  /** Sessions held beyond the session cap because they may not be forgotten (open breakers, spent budgets). */
  readonly heldOverCap?: number;
  /**
   * The server's policy for freeing memory when it is full, when that
   * policy may evict the store's keys (Redis: a `maxmemory` with a
   * `maxmemory-policy` other than `noeviction`): it may then forget
   * sessions as a restart without persistence would.
   */
  readonly evictionPolicy?: string;
}

/**
 * Where AgentBreaker keeps session state. Every operation that changes a
 * session goes through {@link apply}, which must apply it exactly once, in
 * one order for the session shared by every writer, and judge it against the
 * state that includes every operation ordered before it — so no event is
 * lost or judged twice, however many breakers write one session. A store
 * shared by several processes (Redis) makes them share one breaker per session.
 */
export interface BreakerStore {
  /**
   * The session as it is now (undefined if there is none, or it expired).
   * A store may answer from state it read or wrote itself less than
   * `maxAgeMs` ago instead of asking its server.
   */
  read(sessionId: string, reducer: SessionReducer, maxAgeMs: number): Promise<SessionRead | undefined>;
  /** Applies one operation (see the interface's contract). */
  apply(sessionId: string, op: SessionOp, reducer: SessionReducer): Promise<AppliedOp>;
  /** Forgets a session. */
  delete(sessionId: string): Promise<void>;
  /**
   * Keeps steer messages for a session's next model request where every
   * replica sharing the store finds them (a door whose requests a load
   * balancer spreads over replicas, such as the model proxy). Optional: a
   * store without it leaves steers in the process that decided them.
   */
  addSteers?(sessionId: string, messages: readonly string[]): Promise<void>;
  /** Takes (removes and returns) the session's waiting steer messages, oldest first. */
  takeSteers?(sessionId: string): Promise<string[]>;
  /**
   * Marks keys as seen in a session, for every replica: for each key, true
   * when no replica sharing the store marked it before (false for a repeat
   * within `keys` too). A door that judges each request whole (the model
   * proxy) marks what it observed of one, so that a client's retry of the
   * request, which a load balancer may send to another replica, is not
   * observed twice. Optional: a store without it leaves that to each process.
   * A store keeps the session's newest {@link SEEN_KEYS_KEPT} keys (and all
   * of the latest call's), no more: each process keeps the same, so that the
   * replicas and the store agree on what is forgotten.
   */
  claimFirst?(sessionId: string, keys: readonly string[]): Promise<boolean[]>;
  /**
   * Gives a session another name every replica can look up, such as the id
   * of a response it produced, which a later request continues (the model
   * proxy and the Responses API's `previous_response_id`). Optional, with
   * {@link sessionOfAlias}: a store without them leaves that to each
   * process. Only the session's latest aliases need be kept.
   */
  addAlias?(sessionId: string, alias: string): Promise<void>;
  /** The session an alias names (see {@link addAlias}), or undefined when none does (any more). */
  sessionOfAlias?(alias: string): Promise<string | undefined>;
  /**
   * Keeps a short text about a session under a name, where every replica
   * can read it: what one replica learnt that another needs to judge what
   * comes next, such as the tool calls of a response (as prints, see
   * `AgentBreaker.printToolCall`), whose outputs the next request, on any
   * replica, brings. A later note of the same name replaces it; it goes
   * with the session. Optional, with {@link readNote}: a store without them
   * leaves that to each process.
   */
  putNote?(sessionId: string, name: string, value: string): Promise<void>;
  /** The session's note of that name (see {@link putNote}), or undefined when there is none (any more). */
  readNote?(sessionId: string, name: string): Promise<string | undefined>;
  /**
   * Ids of sessions whose breaker is OPEN and still cooling down at `now`
   * (the breaker's clock; by default the store's), when the store can tell:
   * a session whose cooldown has ended lets its next request through as a
   * probe, so it no longer counts as open.
   */
  listOpen?(now?: number): Promise<string[]>;
  /**
   * A cheap reachability check (one round trip) for health reports; rejects
   * when the store does not answer. Stores in process memory need none.
   */
  ping?(): Promise<unknown>;
  /** Counts and conditions worth a health report (no round trip). */
  status?(): BreakerStoreStatus;
}

/** How many of the sessions it wrote back a store lists in {@link BreakerStoreStatus.restoredSessions}. */
export const RESTORED_SESSIONS_KEPT = 16;

/** How many of a session's newest seen keys a store keeps (see {@link BreakerStore.claimFirst}): enough for a retried request's. */
export const SEEN_KEYS_KEPT = 32;
