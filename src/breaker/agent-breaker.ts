import { InvalidOptionError } from '../errors/governor-error.ts';
import type { Advisor, AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { callerToolOf, currentToolOf, insideToolOf, stopInsideToolOf, watchToolCalls } from '../chat/tool-scope.ts';
import { breakerAdviseCall, breakerAdviseStream, type BreakerEngine } from './breaker-advisor.ts';
import { ALLOW, type BreakerCategory, type BreakerDecision, type BreakerStatus } from './breaker-decision.ts';
import { BreakerUnavailableError, breakerErrorFor } from './breaker-errors.ts';
import type { BreakerEvent, ModelEvent, ProposedToolCall } from './breaker-event.ts';
import { cachedPrice, priceUsage } from '../model/pricing.ts';
import type { BreakerEventRecord, BreakerListener, BreakerWarningCode } from './breaker-events.ts';
import { resolveAgentBreakerOptions, type AgentBreakerOptions, type ResolvedAgentBreakerOptions } from './breaker-options.ts';
import { initialState, type BreakerCounters, type BreakerSessionState } from './breaker-state.ts';
import type { AppliedOp, SessionOp, SessionRead } from './breaker-store.ts';
import { BreakerTelemetry } from './breaker-telemetry.ts';
import { immediateAccess, InMemoryBreakerStore, type ImmediateStore } from './in-memory-breaker-store.ts';
import { registerOpenBreakerSource, type OpenBreakerSource } from '../telemetry/instruments.ts';
import { storeFailureReason } from './store-failure-reason.ts';
import type { DetectorContext } from './detectors/detection.ts';
import { toolVerbMatcher, WRITING_VERBS } from './detectors/tool-verbs.ts';
import { proposalOf, type ToolProposal } from './detectors/tool-record.ts';
import { redact } from '../redaction/redact.ts';
import { refusedWhileOpen, SessionLogic, type Outcome } from './session-logic.ts';
import { SessionQueue } from './session-queue.ts';
import { BreakerReducer, isJudgingError } from './session-reducer.ts';
import { breakerMessage } from './breaker-messages.ts';
import { PendingSteers } from './pending-steers.ts';
import { ArgsFingerprinter } from './similarity/args-fingerprint.ts';
import { IdentityKeyMatcher } from './similarity/identity-keys.ts';

/** A session's breaker as seen from outside. */
export interface BreakerSessionSnapshot {
  readonly sessionId: string;
  /** Circuit state at the time of the snapshot (an OPEN breaker past its cooldown shows HALF_OPEN). */
  readonly state: BreakerStatus;
  /** Operations applied to the session so far (its place in the session's order); undefined for a session never written. */
  readonly version: number | undefined;
  readonly openedAt: number | null;
  readonly openCategory: BreakerCategory | null;
  readonly openReason: string | null;
  readonly counters: BreakerCounters;
  /** Detections per category so far. */
  readonly escalations: Readonly<Partial<Record<BreakerCategory, number>>>;
  readonly budget: {
    readonly tokens: number;
    readonly costUsd: number;
    readonly maxTokens: number;
    readonly maxCostUsd: number | undefined;
    /** `ok`, `wrap_up` (crossed: one wrap-up round left), `exhausted` (wrap-up round used). */
    readonly phase: 'ok' | 'wrap_up' | 'exhausted';
  };
  readonly updatedAt: number | null;
}

/** Options of {@link AgentBreaker.observe}. */
export interface ObserveOptions {
  /**
   * The caller ends the run itself on any stop this call returns (throws it,
   * or answers the agent with it), so the next model gate refuses as an open
   * breaker at once. Otherwise a stop decided on an observed event is given
   * once more, as its category's stop, by the next `checkModelCall`: where
   * an integration cannot end the run from an observation, that gate does.
   * @default false
   */
  readonly surfaced?: boolean;
  /**
   * The event is the reporting agent's own, reported where its model rounds
   * run (its tool loop's results, what its advisors retrieve), not by a tool
   * it runs: a steer decided on it is for that agent's next round. Inside a
   * governed tool call of the session (the agent is a sub-agent the call
   * runs), that is its next round inside the call, and the steer is dropped
   * with the call when it makes none; outside any, the session's next round.
   * Without it, an event reported inside a governed tool call is the tool's
   * (a retriever's search): a steer decided on it is for the next round of
   * the agent that called the tool, not of a sub-agent another call of the
   * same round runs meanwhile. The `ChatClient`'s chain reports with it
   * (`reportObservation`).
   * @default false
   */
  readonly steerHere?: boolean;
}

/** How much older than a check's `freshSince` a state may be and still be trusted (see AgentBreaker's #check). */
const FRESH_SINCE_SLACK_MS = 100;

/** Options of one check ({@link AgentBreaker.checkModelCall}, {@link AgentBreaker.checkToolCall}). */
export interface CheckOptions {
  /**
   * A time (epoch ms, as `Date.now()` gives it) since which a session state
   * this process read or wrote counts as current for this check (give or
   * take 100 ms), as well as one within the breaker's `checkFreshnessMs`. A door that has just
   * written the session passes when it began (the model proxy, checking an
   * answer's tool calls right after recording the answer), so that the check
   * does not read the store again: the state it wrote holds every event
   * ordered before it.
   * @default none: `checkFreshnessMs` alone
   */
  readonly freshSince?: number;
}

/** A check's `freshSince`. @throws {InvalidOptionError} for one that is not a time. */
function freshSince(options: CheckOptions | undefined): number | undefined {
  const since = options?.freshSince;
  if (since !== undefined && (typeof since !== 'number' || !Number.isFinite(since))) {
    throw new InvalidOptionError('options.freshSince', 'must be a time in epoch milliseconds');
  }
  return since;
}

/** What {@link AgentBreaker.health} reports. */
export interface BreakerHealth {
  /** `degraded` when the store does not answer (or its last operation failed). */
  readonly status: 'ok' | 'degraded';
  /**
   * Sessions whose breaker is OPEN, their ids redacted as in logs and spans
   * (an id may hold a token): a health report may be served as it is.
   * `openSessions()` gives them as they are, to act on.
   */
  readonly open: string[];
  /** Store failures since the breaker was created. */
  readonly storeErrors: number;
  /**
   * Whether the store answered: a fresh round trip for stores that can be
   * pinged (`RedisBreakerStore`: a PING and a write that keeps nothing, which
   * a Redis refusing the breaker's writes refuses too, a full one with
   * `noeviction` or a read-only replica), otherwise the outcome of the last
   * operation of the breaker (a refused write included).
   */
  readonly storeReachable: boolean;
  /** Why the store did not answer (its error's code and message, secrets masked). */
  readonly storeError?: string;
  /**
   * Why the latest store failure happened, as `storeError` says it, kept
   * once the store answers again: what explains `unjudged`, also when the
   * store is up but one session cannot be read (a state stored by a newer
   * version). Absent until a store operation fails.
   */
  readonly lastStoreError?: string;
  /**
   * Operations let through (fail-open) or refused (fail-closed) without
   * being judged or recorded because the store failed, since the breaker
   * was created. Also counted in `governor.breaker.unjudged`.
   */
  readonly unjudged: number;
  /**
   * Whether `budget.maxCostUsd` can be enforced: `off` without a cost cap,
   * `not_enforceable` once a round came from a model without a price (or
   * without token counts), listed in `unpricedModels`, or named neither its
   * cost nor its model; else `enforced`.
   */
  readonly costBudget: 'off' | 'enforced' | 'not_enforceable';
  /** Models whose rounds could not be priced (only tracked with a cost cap). */
  readonly unpricedModels: string[];
  /** The store's server restarted since this process first saw it (what it forgot depends on its persistence). */
  readonly storeRestarted?: boolean;
  /** Sessions this process knew that the store had forgotten (restart without persistence, expiry, eviction). */
  readonly sessionsLost?: number;
  /** Sessions kept beyond the store's session cap because they may not be forgotten (open breakers, spent budgets). */
  readonly heldOverCap?: number;
  /**
   * The store's server may evict sessions when its memory is full: its
   * eviction policy (Redis `maxmemory-policy`, e.g. `allkeys-lru`). Absent
   * when it cannot (Redis: `noeviction`, or no `maxmemory`).
   */
  readonly storeEvictionPolicy?: string;
}

/** Most sessions remembered as OPEN, to refuse them and report them while the store is unreachable: the newest trips. */
const OPEN_MEMORY_LIMIT = 10_000;
/** Most sessions whose sub-agent's stop waits for the agent that called it (see AgentBreaker's #toolStops). */
const TOOL_STOPS_KEPT = 10_000;

/**
 * The agent circuit breaker. Watches each session (conversation) for loops —
 * tool-call spirals, cycles, error loops, token drift, RAG fixation,
 * delegation loops, text repetition — and for its budget; escalates per loop
 * type (steer → block → stop); and keeps a circuit per session (CLOSED → OPEN
 * on a stop → HALF_OPEN after a cooldown or reset → CLOSED after a clean
 * probe round).
 *
 * State lives in a {@link BreakerStore}; replicas sharing a store share one
 * breaker per session. Every observed event, and every check that
 * escalates, is applied through the store exactly once, in one order per
 * session shared by all writers, and judged against the state that includes
 * everything ordered before it: concurrent writers never lose or skip an
 * event (one store round trip each). Checks read the store first (one round
 * trip) so that a trip on another replica is seen at once, unless
 * `checkFreshnessMs` lets them trust a recent read or write. A store failure
 * never throws to the caller: the breaker fails open or closed as
 * configured, counts the operation as unjudged and emits a `warning` event.
 * An error of the judgement itself (a detector's, or one thrown by the
 * arguments while they are read) is no store failure: it is thrown to the
 * caller as it is, and health still reports the store as it is.
 *
 * It is also an {@link Advisor}: placed in a ChatClient's chain just inside
 * the ToolCallAdvisor, it sees and judges every round of the tool loop.
 */
export class AgentBreaker implements Advisor {
  readonly name = 'AgentBreaker';
  /** From the `order` option. @default AdvisorOrder.BREAKER (just inside the tool loop) */
  readonly order: number;
  /** The options in force, defaults filled in. */
  readonly options: ResolvedAgentBreakerOptions;

  readonly #logic: SessionLogic;
  readonly #ctx: DetectorContext;
  readonly #reducer: BreakerReducer;
  /**
   * Sessions this process last saw OPEN, with the end of their cooldown and
   * the answer while open: what health lists, and what a call on them gets,
   * while the store is unreachable.
   */
  readonly #open = new Map<string, { readonly until: number; readonly refusal: BreakerDecision }>();
  /** Orders each session's operations on a store that answers asynchronously (the in-memory store answers at once). */
  readonly #queue = new SessionQueue();
  readonly #listeners = new Set<BreakerListener>();
  readonly #telemetry: BreakerTelemetry | undefined;
  /** Held here so the `governor.breaker.open` gauge's weak reference lives exactly as long as the breaker. */
  readonly #openSource: OpenBreakerSource | undefined;
  #storeErrors = 0;
  /** Why the store last failed (see storeFailureReason). */
  #lastStoreError: string | undefined;
  #unjudged = 0;
  readonly #steers = new PendingSteers();
  /**
   * A stop decided inside a governed tool call of a session (a sub-agent's
   * ChatClient or door), by session, until the advisor of the agent that
   * called the tool meets the open breaker: the tool may have swallowed it,
   * and the category's error says more than the open breaker's.
   */
  readonly #toolStops = new Map<string, Error>();
  readonly #warned = new Set<string>();
  readonly #unpriced = new Set<string>();
  /** A model round came without its cost or its model while a cost cap is set (see #priced). */
  #unnamedRounds = false;
  #lastStoreFailed = false;
  #warnedOverCap = false;
  #sessionsLost = 0;
  /** The latest check's proposal, for the observation of the same call right after it (see #proposal). */
  #lastCheck: { tool: string; args: unknown; shape: ArgsShape; proposal: ToolProposal } | undefined;
  /** Whether the store keeps sessions in this process's memory (texts are then judged unredacted). */
  readonly #inProcessStore: boolean;
  /** The store's operations as they run at once, when it is the in-memory store itself (see ImmediateStore). */
  readonly #immediate: ImmediateStore | undefined;

  /** @throws InvalidOptionError naming the first bad option (e.g. `toolSpiral.similarity`). */
  constructor(options?: AgentBreakerOptions) {
    this.options = resolveAgentBreakerOptions(options);
    this.order = this.options.order;
    const subAgents = new Set(this.options.delegation.subAgentTools);
    const isReadOnly = toolVerbMatcher(this.options.readOnlyTools);
    const writes = toolVerbMatcher(WRITING_VERBS);
    this.#ctx = {
      options: this.options,
      fingerprinter: new ArgsFingerprinter(new IdentityKeyMatcher(this.options.identityKeys)),
      isReadOnly,
      // A tool the caller lists as read-only is taken at its word, whatever its verb.
      isWriting: (tool) => !isReadOnly(tool) && writes(tool),
      isSubAgent: (tool) => subAgents.has(tool),
    };
    this.#inProcessStore = this.options.store instanceof InMemoryBreakerStore;
    this.#immediate = immediateAccess(this.options.store);
    this.#logic = new SessionLogic(this.#ctx);
    this.#reducer = new BreakerReducer(this.#logic, (tool, args, observed) => this.#proposal(tool, args, observed));
    this.#telemetry = this.options.telemetry ? new BreakerTelemetry() : undefined;
    if (this.options.telemetry) {
      this.#openSource = { store: this.options.store, openSessions: () => this.openSessions() };
      registerOpenBreakerSource(this.#openSource);
    }
    // Decided before the call, for the agent that makes it: a sub-agent the call runs must not take them.
    watchToolCalls(this, {
      start: (sessionId) => this.#steers.hold(sessionId, currentToolOf(this, sessionId)),
      stop: (sessionId, decision) => this.#noteToolStop(sessionId, decision),
    });
  }

  /**
   * Judges a tool call the model asked for, before it runs. `steer`: run it
   * and give the model the message; `block`: do not run it, answer the model
   * with the message; `stop`: end the run. Writes nothing unless it
   * escalates, or finds the session idle past `idleResetMs` (then it writes
   * that the evidence is forgotten).
   */
  async checkToolCall(sessionId: string, call: ProposedToolCall, options?: CheckOptions): Promise<BreakerDecision> {
    checkSessionId(sessionId);
    const since = freshSince(options);
    if (call === null || typeof call !== 'object' || typeof call.tool !== 'string' || call.tool === '') {
      throw new InvalidOptionError('call.tool', 'must be a non-empty tool name');
    }
    // Fingerprinted now, not when the session's queue gets to it: the caller may reuse and change the args object meanwhile.
    const checked = this.#reducer.digest({ k: 'tool', at: 0, call: { tool: call.tool, args: call.args } });
    return this.#check(sessionId, (at) => ({ ...checked, at }), since);
  }

  /**
   * Records something that happened in the session (a model round, an
   * executed tool call with its result, a retrieval, a sub-agent call, a user
   * turn or outside event) and judges it.
   */
  async observe(sessionId: string, event: BreakerEvent, options?: ObserveOptions): Promise<BreakerDecision> {
    const decision = await this.#observe(sessionId, event, options?.surfaced === true);
    if (event.kind === 'model' && event.costUsd === undefined && !event.model && this.options.budget.maxCostUsd !== undefined) {
      // Priced as nothing, silently, a cap its rounds never reach would read as enforced. (The ChatClient's rounds
      // do not come this way: its advisor prices them, and says so itself when it cannot.)
      this.#unnamedRounds = true;
      this.#warnOnce(
        sessionId,
        'cost_not_enforceable',
        'cost:unnamed',
        'budget.maxCostUsd is not enforceable: a model round named neither its cost (costUsd) nor its model (model); give one of them.',
      );
    }
    const note = steerNote(decision);
    if (note === undefined) return decision;
    const call = currentToolOf(this, sessionId);
    if (call === undefined || options?.steerHere === true) this.#steers.add(sessionId, note, call);
    else {
      // A tool's own report (a retriever's search) is for the agent that called the tool: not for a sub-agent
      // that a call of the same round, run in parallel, starts meanwhile.
      const caller = callerToolOf(this, sessionId);
      if (caller === undefined) this.#steers.addOutside(sessionId, note);
      else this.#steers.add(sessionId, note, caller);
    }
    return decision;
  }

  /**
   * The event has happened: a steer (or a block, with nothing left to block)
   * can only be told to the model. `call`: the governed tool call whose agent
   * it is for (see PendingSteers); none for the session's next round.
   */
  #queueSteer(sessionId: string, decision: BreakerDecision, call?: object): void {
    const note = steerNote(decision);
    if (note !== undefined) this.#steers.add(sessionId, note, call);
  }

  /**
   * Takes the steering messages waiting for the session's next model round:
   * those decided on observed events (`observe`) — a retrieval, a sub-agent's
   * answer, an executed call, a model round without tool calls. The breaker's
   * advisor delivers them itself; an integration that drives the breaker
   * directly calls this before each model round and puts the messages in the
   * request. (Steers decided by `checkToolCall` are not queued: they travel
   * with the call's result.) Messages are kept in this process, a few per session.
   *
   * Inside a governed tool call of the session (a sub-agent's round), not
   * those that were waiting when the call started: they are for the agent
   * that made the call, whose next round outside it takes them. What the
   * breaker's advisor decides on a round inside a tool call, and what is
   * decided there on an event observed with `steerHere` (the results of a
   * `ChatClient` sub-agent's own tools), is for the next round inside it,
   * and is dropped with the call.
   */
  takeSteers(sessionId: string): string[] {
    checkSessionId(sessionId);
    return this.#steers.take(sessionId, currentToolOf(this, sessionId));
  }

  /**
   * A tool call's print: what this breaker keeps of the call to judge it
   * (the fingerprint of its arguments; a sub-agent's task print), as one
   * compact string without the arguments themselves. A process that
   * observes the call's result without having seen its arguments passes
   * the print in their place (`observe` with a `tool_call` event's `print`):
   * another replica of a proxy that judged the call, for one. The print is
   * judged the same by any breaker with the same options.
   * @throws InvalidOptionError when the call has no tool name.
   */
  printToolCall(call: ProposedToolCall): string {
    if (call === null || typeof call !== 'object' || typeof call.tool !== 'string' || call.tool === '') {
      throw new InvalidOptionError('call.tool', 'must be a non-empty tool name');
    }
    return this.#reducer.print({ tool: call.tool, args: call.args });
  }

  /** `surfaced`: the caller throws any stop it gets, so the stop need not wait for the next gate. */
  #observe(sessionId: string, observed: BreakerEvent, surfaced: boolean): Promise<BreakerDecision> {
    checkSessionId(sessionId);
    checkEvent(observed);
    const event = observed.kind === 'model' && observed.model !== undefined ? this.#priced(sessionId, observed) : observed;
    const at = this.options.now();
    // Digested now, whatever the store: the arguments are fingerprinted before the caller can change the object it
    // passed. Texts are redacted for a store that keeps them outside this process (as Redis logs them); the in-memory
    // store judges them as they are: a redacted secret would make texts that differ only by it look alike.
    const op: SessionOp = this.#reducer.digest(
      event.kind === 'tool_call' && event.print !== undefined
        ? this.#reducer.printedObservation(at, { ...event, print: event.print }, surfaced)
        : surfaced
          ? { k: 'observe', at, event, surfaced: true }
          : { k: 'observe', at, event },
      !this.#inProcessStore,
    );
    const immediate = this.#immediate;
    if (immediate !== undefined) return settled(() => this.#writeNow(immediate, sessionId, op));
    return this.#queue.run(sessionId, () => this.#write(sessionId, op));
  }

  /** A model round named by its model, as the session records it: priced when it has no cost, without the name. */
  #priced(sessionId: string, { model, ...round }: ModelEvent): ModelEvent {
    if (round.costUsd !== undefined || model === undefined || model === '') return round;
    const price = cachedPrice(model);
    const usd =
      price === undefined
        ? undefined
        : priceUsage({ inputTokens: round.promptTokens ?? undefined, outputTokens: round.completionTokens ?? undefined, cachedInputTokens: undefined }, price)
            .usd;
    if (typeof usd === 'number') return { ...round, costUsd: usd };
    if (this.options.budget.maxCostUsd !== undefined) {
      const why = price === undefined ? `model "${model}" has no price` : `model "${model}" reported no token counts`;
      this.#warnOnce(
        sessionId,
        'cost_not_enforceable',
        `cost:${model}:${price === undefined}`,
        `budget.maxCostUsd is not enforceable: ${why}; price its rounds (costUsd).`,
        model,
      );
    }
    return round;
  }

  /**
   * Gate at the start of a model round: `stop` while OPEN (or after the
   * budget's wrap-up round), `allow` with `probe: true` when HALF_OPEN,
   * `steer` with the wrap-up text during a budget wrap-up round.
   */
  async checkModelCall(sessionId: string, options?: CheckOptions): Promise<BreakerDecision> {
    checkSessionId(sessionId);
    return this.#check(sessionId, (at) => ({ k: 'model', at }), freshSince(options));
  }

  /**
   * Explicit reset: an OPEN breaker becomes HALF_OPEN (next model call is a
   * probe). Budgets and evidence are kept — unless `{ evidence: true }`: then
   * what the detectors saw and the escalation counts are forgotten too, so a
   * fresh attempt is judged from scratch (the `BreakerRecoveryAdvisor` does
   * this); budgets and counters stay.
   * @throws BreakerUnavailableError when the store fails: a reset that did not happen must not look done
   */
  async reset(sessionId: string, options?: { readonly evidence?: boolean }): Promise<void> {
    checkSessionId(sessionId);
    const evidence = options?.evidence === true;
    if (evidence) this.#steers.clear(sessionId, currentToolOf(this, sessionId));
    this.#toolStops.delete(sessionId);
    await this.#check(sessionId, (at) => (evidence ? { k: 'reset', at, evidence: true } : { k: 'reset', at }), undefined, true);
  }

  /**
   * The session's circuit state, counters, budget and open reason.
   * @throws BreakerUnavailableError when the store cannot be read: a made-up
   * fresh state would read as a CLOSED session that was never written.
   */
  async snapshot(sessionId: string): Promise<BreakerSessionSnapshot> {
    checkSessionId(sessionId);
    const now = this.options.now();
    let stored: SessionRead | undefined;
    try {
      stored = await this.options.store.read(sessionId, this.#reducer, 0);
      this.#lastStoreFailed = false;
    } catch (error) {
      throw this.#unavailable(sessionId, error, "so the session's state is unknown");
    }
    const state = this.#logic.settle(stored?.state ?? initialState(now), now).state;
    const { tokens, costUsd, phase } = state.budget;
    return {
      sessionId,
      state: state.status,
      version: stored?.position,
      openedAt: state.openedAt,
      openCategory: state.openCategory,
      openReason: state.openReason,
      counters: state.counters,
      escalations: state.escalations,
      budget: {
        tokens,
        costUsd,
        maxTokens: this.options.budget.maxTokens,
        maxCostUsd: this.options.budget.maxCostUsd,
        phase: phase === 0 ? 'ok' : phase === 1 ? 'wrap_up' : 'exhausted',
      },
      updatedAt: stored === undefined ? null : state.updatedAt,
    };
  }

  /** Subscribes to escalations, state changes and warnings; returns the unsubscribe function. */
  on(listener: BreakerListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Ids of sessions whose breaker is OPEN and still cooling down (from the
   * store when it can list them, else this process's cache). One whose
   * cooldown has ended is not listed: its next request goes through as a probe.
   */
  async openSessions(): Promise<string[]> {
    const store = this.options.store;
    if (store.listOpen !== undefined) {
      try {
        // A listing is a read: it says nothing of a write that failed (a full store still lists), so it clears nothing.
        return await store.listOpen(this.options.now());
      } catch (error) {
        this.#storeFailed(error);
      }
    }
    return this.#cachedOpen();
  }

  /**
   * Health check: open breakers, and whether the store is answering (a ping
   * round trip when the store can be pinged). Never throws.
   */
  async health(): Promise<BreakerHealth> {
    const store = this.options.store;
    let pingFailed = false;
    if (store.ping !== undefined) {
      try {
        await store.ping();
      } catch (error) {
        pingFailed = true;
        this.#storeFailed(error);
      }
    }
    // An unreachable store would only fail again: report what this process saw instead.
    let open = this.#cachedOpen();
    let listFailed = false;
    if (!pingFailed && store.listOpen !== undefined) {
      try {
        open = await store.listOpen(this.options.now());
      } catch (error) {
        listFailed = true;
        this.#storeFailed(error);
      }
    }
    // A store that can be pinged is judged by this round trip; any other by the breaker's last operation, which
    // listing the open sessions (a read) must not clear: a store that refuses writes still lists them.
    const reachable = store.ping === undefined ? !this.#lastStoreFailed : !pingFailed && !listFailed;
    const storeError = reachable ? undefined : this.#lastStoreError;
    const status = store.status?.() ?? {};
    const sessionsLost = Math.max(this.#sessionsLost, status.sessionsLost ?? 0);
    return {
      status: reachable ? 'ok' : 'degraded',
      open: open.map((id) => redact(id)),
      storeErrors: this.#storeErrors,
      storeReachable: reachable,
      ...(storeError === undefined ? {} : { storeError }),
      ...(this.#lastStoreError === undefined ? {} : { lastStoreError: this.#lastStoreError }),
      unjudged: this.#unjudged,
      costBudget: this.options.budget.maxCostUsd === undefined ? 'off' : this.#unpriced.size > 0 || this.#unnamedRounds ? 'not_enforceable' : 'enforced',
      unpricedModels: [...this.#unpriced].sort(),
      ...(status.restarted === true ? { storeRestarted: true } : {}),
      ...(sessionsLost > 0 ? { sessionsLost } : {}),
      ...(status.heldOverCap ? { heldOverCap: status.heldOverCap } : {}),
      ...(status.evictionPolicy === undefined ? {} : { storeEvictionPolicy: status.evictionPolicy }),
    };
  }

  #cachedOpen(): string[] {
    const now = this.options.now();
    return [...this.#open]
      .filter(([, { until }]) => now < until)
      .map(([id]) => id)
      .sort();
  }

  /** Advisor: gates the round, passes it on, judges the model's tool calls. */
  adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    return breakerAdviseCall(this.#engine, request, chain);
  }

  /** Advisor, streaming: the same, on each round's finish event. */
  adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    return breakerAdviseStream(this.#engine, request, chain);
  }

  /** What the advisor drives: the advisor throws every stop it is given, so its observations need no pending stop. */
  #engineCache: BreakerEngine | undefined;
  get #engine(): BreakerEngine {
    return (this.#engineCache ??= this.#makeEngine());
  }

  #stopError(decision: BreakerDecision, sessionId: string): Error {
    if (insideToolOf(this, sessionId)) {
      // The doors running the enclosing calls, and this breaker's own advisor outside them, throw it as theirs.
      stopInsideToolOf(this, sessionId, decision);
      return breakerErrorFor(decision, sessionId);
    }
    const inner = this.#toolStops.get(sessionId);
    this.#toolStops.delete(sessionId);
    return inner !== undefined && decision.reason === 'breaker_open' ? inner : breakerErrorFor(decision, sessionId);
  }

  /** A stop decided inside a governed tool call of the session (see #toolStops); the first one, not a nested agent's refusals after it. */
  #noteToolStop(sessionId: string, decision: BreakerDecision): void {
    if (this.#toolStops.has(sessionId)) return;
    this.#toolStops.set(sessionId, breakerErrorFor(decision, sessionId));
    if (this.#toolStops.size > TOOL_STOPS_KEPT) this.#toolStops.delete(this.#toolStops.keys().next().value!);
  }

  #makeEngine(): BreakerEngine {
    return {
      name: this.name,
      options: this.options,
      checkModelCall: (id) => this.checkModelCall(id),
      checkToolCall: (id, call) => this.checkToolCall(id, call),
      observe: (id, event) => this.#observe(id, event, true),
      insideTool: (id) => insideToolOf(this, id),
      takeSteers: (id) => this.takeSteers(id),
      // The verdict on a round is for the agent whose round it is: inside a tool call, a sub-agent's.
      queueSteer: (id, decision) => this.#queueSteer(id, decision, currentToolOf(this, id)),
      toError: (decision, id) => this.#stopError(decision, id),
      debug: (id, message) => this.#dispatch({ type: 'debug', sessionId: id, at: this.options.now(), message }),
      warnOnce: (id, code, key, message, unpricedModel) => this.#warnOnce(id, code, key, message, unpricedModel),
    };
  }

  /**
   * A call's proposal (its arguments' fingerprint). A check is normally
   * followed at once by the observation of the same call: that observation
   * reuses the check's fingerprint, which costs as much as the rest of the
   * event. Only then, though: a loop may reuse one args object and change it
   * between calls (`args.path = next`), so anything else (every check, and any
   * observation that is not the very next use of the check's object, with
   * the same top-level values) fingerprints afresh.
   */
  #proposal(tool: string, args: unknown, observed: boolean): ToolProposal {
    const last = this.#lastCheck;
    // Taken either way, so that the cache never holds (possibly large) arguments past the next call.
    this.#lastCheck = undefined;
    if (observed && last !== undefined && last.tool === tool && last.args === args && sameShape(last.shape, args)) return last.proposal;
    const proposal = proposalOf(tool, args, this.#ctx);
    if (!observed) this.#lastCheck = { tool, args, shape: shapeOf(args), proposal };
    return proposal;
  }

  /**
   * A check: judged against the session as the store holds it now (another
   * replica may have tripped it), or as this process saw it within
   * `checkFreshnessMs`. Most checks change nothing and write nothing; one
   * that escalates is applied through the store like an observation, and
   * its judgement at its place in the session's order is the answer.
   * `strict`: a store failure throws BreakerUnavailableError instead of
   * failing open or closed (a reset, which decides nothing). With the
   * in-memory store the check runs at once, without a promise per step:
   * each operation then ends before the call returns, so none ever waits in
   * the queue for another.
   */
  #check(sessionId: string, makeOp: (at: number) => SessionOp, since?: number, strict = false): Promise<BreakerDecision> {
    const immediate = this.#immediate;
    if (immediate !== undefined) {
      return settled(() => {
        const op = makeOp(this.options.now());
        let read: SessionRead | undefined;
        try {
          read = immediate.read(sessionId);
        } catch (error) {
          return this.#failed(sessionId, 'read', error, strict);
        }
        const outcome = this.#judgeRead(sessionId, op, read);
        return outcome.next === null ? this.#checked(sessionId, op, outcome) : this.#writeNow(immediate, sessionId, op, strict);
      });
    }
    return this.#queue.run(sessionId, async () => {
      const op = makeOp(this.options.now());
      let read: SessionRead | undefined;
      try {
        // Measured now, after any operation queued before the check. The store reads its clock after this: the slack
        // keeps a state written at `since` trusted when a busy process is descheduled in between.
        const own = this.options.checkFreshnessMs;
        const maxAgeMs = since === undefined ? own : Math.max(own, Date.now() - since + FRESH_SINCE_SLACK_MS);
        read = await this.options.store.read(sessionId, this.#reducer, maxAgeMs);
      } catch (error) {
        return this.#failed(sessionId, 'read', error, strict);
      }
      const outcome = this.#judgeRead(sessionId, op, read);
      return outcome.next === null ? this.#checked(sessionId, op, outcome) : this.#write(sessionId, op, strict);
    });
  }

  /** A check's judgement of the session as read. */
  #judgeRead(sessionId: string, op: SessionOp, read: SessionRead | undefined): Outcome {
    if (read !== undefined) this.#noteOpen(sessionId, read.state);
    if (this.options.store.status !== undefined) this.#noteStoreStatus(sessionId, op.at);
    return this.#reducer.apply(read?.state ?? initialState(op.at), op);
  }

  /** A check that changed nothing: its answer, with nothing to write. */
  #checked(sessionId: string, op: SessionOp, outcome: Outcome): BreakerDecision {
    this.#lastStoreFailed = false;
    this.#emit(sessionId, op.at, outcome);
    return outcome.decision;
  }

  /** Applies one operation through the store: exactly once, in the session's order shared by every writer. */
  async #write(sessionId: string, op: SessionOp, strict = false): Promise<BreakerDecision> {
    let applied: AppliedOp;
    try {
      applied = await this.options.store.apply(sessionId, op, this.#reducer);
    } catch (error) {
      return this.#failed(sessionId, 'apply', error, strict);
    }
    return this.#written(sessionId, op, applied);
  }

  /** #write through the store's immediate form. */
  #writeNow(immediate: ImmediateStore, sessionId: string, op: SessionOp, strict = false): BreakerDecision {
    let applied: AppliedOp;
    try {
      applied = immediate.apply(sessionId, op, this.#reducer);
    } catch (error) {
      return this.#failed(sessionId, 'apply', error, strict);
    }
    return this.#written(sessionId, op, applied);
  }

  #written(sessionId: string, op: SessionOp, applied: AppliedOp): BreakerDecision {
    this.#lastStoreFailed = false;
    this.#noteOpen(sessionId, applied.state);
    this.#emit(sessionId, op.at, applied.outcome);
    if (this.options.store.status !== undefined) this.#noteStoreStatus(sessionId, op.at);
    return applied.outcome.decision;
  }

  /** A store operation that threw: its answer under the store error policy, or the error to throw. */
  #failed(sessionId: string, operation: 'read' | 'apply', error: unknown, strict: boolean): BreakerDecision {
    // An error of the judgement itself (the reducer, which the store calls) is a bug, not an outage of the
    // store: thrown as it is, as a check's judgement outside the store throws, rather than counted as unjudged.
    if (isJudgingError(error)) throw error;
    if (strict) throw this.#unavailable(sessionId, error);
    return this.#storeFailure(sessionId, operation, error);
  }

  #noteOpen(sessionId: string, state: BreakerSessionState): void {
    if (state.status !== 'OPEN' || state.openedAt === null) {
      this.#open.delete(sessionId);
      return;
    }
    const cooldownMs = this.options.cooldownMs;
    const until = state.openedAt + cooldownMs;
    if (this.#open.get(sessionId)?.until === until) return;
    // Kept in the order their cooldowns end (a trip again goes to the back), so the first ones are those to forget:
    // sessions that trip and are never seen again would otherwise fill the memory, and a later trip go unremembered.
    this.#open.delete(sessionId);
    const now = this.options.now();
    for (const [id, open] of this.#open) {
      if (open.until > now && this.#open.size < OPEN_MEMORY_LIMIT) break;
      this.#open.delete(id);
    }
    this.#open.set(sessionId, { until, refusal: refusedWhileOpen(state, cooldownMs) });
  }

  /** Warns once when the store starts keeping sessions over its cap, and whenever it finds that it forgot sessions. */
  #noteStoreStatus(sessionId: string, at: number): void {
    const status = this.options.store.status!();
    const overCap = (status.heldOverCap ?? 0) > 0;
    if (overCap && !this.#warnedOverCap) {
      this.#dispatch({
        type: 'warning',
        code: 'store_over_cap',
        sessionId,
        at,
        message: `Agent breaker store is over its session cap by ${status.heldOverCap}: every session it holds has an open breaker or a spent budget, which it may not forget; raise maxSessions.`,
      });
    }
    this.#warnedOverCap = overCap;
    const lost = status.sessionsLost ?? 0;
    if (lost > this.#sessionsLost) {
      const count = lost - this.#sessionsLost;
      this.#sessionsLost = lost;
      // Each under the session it concerns (the write back may have come with a reconnect, before any of its calls).
      const named = (status.restoredSessions ?? []).slice(-count);
      for (const restored of named) {
        this.#dispatch({
          type: 'warning',
          code: 'session_restored',
          sessionId: restored,
          at,
          message: `Agent breaker store had forgotten this session (restarted without persistence, expired or evicted); its state was restored from this process.`,
        });
      }
      if (named.length < count) {
        const others = count - named.length;
        this.#dispatch({
          type: 'warning',
          code: 'session_restored',
          sessionId,
          at,
          message: `Agent breaker store had forgotten ${others} ${others === 1 ? 'session' : 'sessions'} this process knew (restarted without persistence, expired or evicted); their state was restored from this process.`,
        });
      }
    }
  }

  /** A store failure as what an operation that cannot go on without the store throws. */
  #unavailable(sessionId: string, error: unknown, consequence = 'so nothing was changed'): BreakerUnavailableError {
    this.#storeFailed(error);
    return new BreakerUnavailableError(`The breaker store failed, ${consequence}: ${this.#lastStoreError}`, sessionId, { cause: error });
  }

  #storeFailed(error: unknown): void {
    this.#storeErrors++;
    this.#lastStoreFailed = true;
    this.#lastStoreError = storeFailureReason(error);
  }

  #storeFailure(sessionId: string, operation: string, error: unknown): BreakerDecision {
    this.#storeFailed(error);
    // A stop is not undone by an outage: what this process saw of the session judges it, under either policy.
    const open = this.#open.get(sessionId);
    if (open !== undefined && this.options.now() < open.until) {
      const message = `Agent breaker store ${operation} failed (${this.#lastStoreError}); the session's breaker is OPEN as this process last saw it: the call is refused.`;
      this.#dispatch({ type: 'warning', code: 'store_failed', sessionId, at: this.options.now(), message });
      return open.refusal;
    }
    this.#unjudged++;
    const closed = this.options.onStoreError === 'fail-closed';
    try {
      this.#telemetry?.countUnjudged(closed);
    } catch {
      // Telemetry must never break the agent it observes.
    }
    const message = `Agent breaker store ${operation} failed (${this.#lastStoreError}); failing ${closed ? 'closed: the call is refused' : 'open: the call is let through unjudged'}.`;
    this.#dispatch({ type: 'warning', code: 'store_failed', sessionId, at: this.options.now(), message });
    return closed ? { action: 'stop', reason: 'store_unavailable', message } : ALLOW;
  }

  #emit(sessionId: string, at: number, outcome: Outcome): void {
    for (const event of outcome.events) this.#dispatch({ ...event, sessionId, at });
  }

  /** `unpricedModel`: the warning says that this model's rounds cannot be priced (health lists it). */
  #warnOnce(sessionId: string, code: BreakerWarningCode, key: string, message: string, unpricedModel?: string): void {
    // Passed apart from the key: a model id may hold ':' itself (`llama3.1:8b`, Bedrock's `…-v1:0`).
    if (unpricedModel !== undefined) this.#unpriced.add(unpricedModel);
    if (this.#warned.has(key) || this.#warned.size >= 1000) return;
    this.#warned.add(key);
    this.#dispatch({ type: 'warning', code, sessionId, at: this.options.now(), message });
  }

  #dispatch(event: BreakerEventRecord): void {
    try {
      this.#telemetry?.record(event);
    } catch {
      // Telemetry must never break the agent it observes.
    }
    for (const listener of this.#listeners) {
      try {
        const returned: unknown = listener(event);
        // An async listener fails by rejecting: unhandled, that rejection would end the process.
        if (isThenable(returned)) returned.then(undefined, ignore);
      } catch {
        // A failing listener is its own problem.
      }
    }
  }
}

function checkSessionId(sessionId: string): void {
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw new InvalidOptionError('sessionId', 'must be a non-empty string');
}

function checkEvent(event: BreakerEvent): void {
  if (event === null || typeof event !== 'object') throw new InvalidOptionError('event', 'must be an object with a kind');
  switch (event.kind) {
    case 'model':
      if (!isTokenCount(event.promptTokens)) throw new InvalidOptionError('event.promptTokens', 'must be a non-negative number or null');
      if (!isTokenCount(event.completionTokens)) throw new InvalidOptionError('event.completionTokens', 'must be a non-negative number or null');
      if (event.spentTokens !== undefined && !(isTokenCount(event.spentTokens) && event.spentTokens !== null)) {
        throw new InvalidOptionError('event.spentTokens', 'must be a non-negative number');
      }
      if (event.text !== undefined && typeof event.text !== 'string') throw new InvalidOptionError('event.text', 'must be a string');
      // Infinity and NaN too: the budget could not count them, and would silently count $0.
      if (event.costUsd !== undefined && !(typeof event.costUsd === 'number' && Number.isFinite(event.costUsd) && event.costUsd >= 0)) {
        throw new InvalidOptionError('event.costUsd', 'must be a finite non-negative number');
      }
      if (event.model !== undefined && typeof event.model !== 'string') throw new InvalidOptionError('event.model', 'must be a model id string');
      if (event.delegated !== undefined && typeof event.delegated !== 'boolean') throw new InvalidOptionError('event.delegated', 'must be a boolean');
      return;
    case 'tool_call':
      if (typeof event.tool !== 'string' || event.tool === '') throw new InvalidOptionError('event.tool', 'must be a non-empty tool name');
      if (event.result !== null && event.result !== undefined && typeof event.result !== 'string') {
        throw new InvalidOptionError('event.result', 'must be a string or null');
      }
      if (event.print !== undefined) {
        if (typeof event.print !== 'string') throw new InvalidOptionError('event.print', 'must be a string from AgentBreaker.printToolCall');
        // null is how JSON leaves a value out: a message that carries the print may well say `args: null`.
        if (event.args !== undefined && event.args !== null)
          throw new InvalidOptionError('event.print', 'stands for the arguments: pass args or print, not both');
      }
      return;
    case 'retrieval':
      if (typeof event.query !== 'string') throw new InvalidOptionError('event.query', 'must be a string');
      if (event.results !== undefined && (!Array.isArray(event.results) || event.results.some((r) => typeof r !== 'string'))) {
        throw new InvalidOptionError('event.results', 'must be an array of strings');
      }
      return;
    case 'delegation':
      if (typeof event.agent !== 'string' || event.agent === '') throw new InvalidOptionError('event.agent', 'must be a non-empty name');
      if (typeof event.output !== 'string' && event.output !== null) throw new InvalidOptionError('event.output', 'must be a string');
      return;
    case 'user':
      // A message's content as an array of parts (multimodal) is the caller's to turn into its text.
      if (typeof event.text !== 'string') throw new InvalidOptionError('event.text', 'must be a string (the user turn as text)');
      return;
    default:
      throw new InvalidOptionError('event.kind', "must be 'model', 'tool_call', 'retrieval', 'delegation' or 'user'");
  }
}

/** The promise of what `run` returns, or of what it throws: the immediate path answers as the queued one does. */
function settled<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Most top-level values of an args object compared to reuse a check's fingerprint (see shapeOf). */
const MAX_SHAPE = 32;

/**
 * What tells, cheaply, whether an args object changed since its check: its
 * top-level keys and values (a reused object gets a new `path`). `primitive`
 * for a value that cannot change; null when it cannot tell (many keys, binary
 * data): then the check's fingerprint is not reused.
 */
type ArgsShape = readonly unknown[] | 'primitive' | null;

function shapeOf(args: unknown): ArgsShape {
  if (args === null || typeof args !== 'object') return 'primitive';
  if (ArrayBuffer.isView(args) || (Array.isArray(args) && args.length > MAX_SHAPE)) return null;
  const shape: unknown[] = [];
  for (const key in args) {
    if (shape.length >= 2 * MAX_SHAPE) return null;
    shape.push(key, (args as Record<string, unknown>)[key]);
  }
  return shape;
}

function sameShape(shape: ArgsShape, args: unknown): boolean {
  if (shape === null || shape === 'primitive') return shape === 'primitive';
  const now = shapeOf(args);
  if (now === null || now === 'primitive' || now.length !== shape.length) return false;
  for (let i = 0; i < shape.length; i++) if (!Object.is(shape[i], now[i])) return false;
  return true;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function ignore(): void {}

function isTokenCount(n: unknown): boolean {
  return n === null || n === undefined || (typeof n === 'number' && Number.isFinite(n) && n >= 0);
}

/**
 * What to tell the model of a steer or block decided on something that has
 * already happened: there is no call left to refuse, so a block is told as its steer.
 */
function steerNote(decision: BreakerDecision): string | undefined {
  if (decision.action === 'steer') return decision.message;
  if (decision.action !== 'block') return undefined;
  return decision.category !== undefined && decision.evidence !== undefined ? breakerMessage(decision.category, 'steer', decision.evidence) : decision.message;
}
