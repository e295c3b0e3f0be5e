import type { BreakerCategory, BreakerEvidence, BreakerStatus } from './breaker-decision.ts';
import type { ArgsFingerprint } from './similarity/args-fingerprint.ts';
import type { AnySketch } from './similarity/token-sketch.ts';

/**
 * One executed tool call as evidence: fingerprints and hashes only, never the
 * raw arguments or result, so a session's state stays small.
 */
export interface ToolRecord {
  /** Sequence number of the event in the session. */
  readonly s: number;
  /** Tool name (shortened). */
  readonly t: string;
  /** Arguments fingerprint. */
  readonly a: ArgsFingerprint;
  /** Result hash (0 = empty / no information). */
  readonly r: number;
  /** 0 = success, 1 = error, 2 = transient error. */
  readonly e: 0 | 1 | 2;
  /** Progress flags: 1 = brought new information, 2 = changed something (non-read-only success with new arguments or result); 4 = the error rejected the request itself (a missing or invalid parameter). */
  readonly p: number;
}

/*
 * Sketches are stored packed (see PackedSketch); states stored by older
 * versions hold them as number arrays, which every comparison still takes.
 */

/** One substantive model text. */
export interface TextRecord {
  readonly s: number;
  /** Sketch of the prose (code blocks, tables and list items stripped). */
  readonly k: AnySketch;
  /** Hash of the structured part's token sequence (code blocks, tables, lists); absent when there is none. */
  readonly c?: number;
  /** 1 when a user turn before this reply brought new information: repetition evidence restarts here. */
  readonly u?: 1;
  /** Bloom filter of the reply's tokens (32-bit words); kept on the newest record only, to judge the next user turn. */
  readonly b?: readonly number[];
}

/**
 * What recent user turns said, to tell a turn that brings new information
 * from one that only repeats, complains or nudges. Absent until the first
 * user turn is noted.
 */
export interface UserTurnsState {
  /** Sequence number of the latest user turn noted. */
  readonly s: number;
  /** Some of the tokens the user turns since the latest reply added to the conversation (at most `LIMITS.userFresh`). */
  readonly f: readonly number[];
  /** How many tokens they added in all (tokens of unspaced scripts count half). */
  readonly w: number;
  /** Bloom filters of the tokens of recent user turns: the current generation, then the previous one. */
  readonly v: readonly (readonly number[])[];
  /** Tokens added to the current generation. */
  readonly n: number;
}

/** One retrieval. */
export interface RetrievalRecord {
  readonly s: number;
  /** Sketch of the query's word stems. */
  readonly q: AnySketch;
  /** Hash of the retrieved set (see passageSetHash); null when the results were not reported, 0 when nothing was retrieved. */
  readonly r: number | null;
  /** Identity of the query (see textIdentity): 0 or absent when it names nothing exactly. */
  readonly k?: number;
  /** 1 when the search reported that it found nothing ("Could not find …", "No results"); `r` is then 0. */
  readonly f?: 1;
  /** A failed search's query: the proper names it names, three numbers each — its key, its initials' key or 0, its last word's key (see queryNames); absent when none. */
  readonly n?: readonly number[];
  /** A failed search's answer: the keys of the names it offered instead, at most 12 (see offeredNames); absent when none. */
  readonly o?: readonly number[];
  /**
   * The keys of the words the query names things with, at most 8 (see
   * queryNameWords), with the keys of all its words (`v`, at most 16) and the
   * key of a capitalised first word alone (`c`); absent when it has none of them.
   */
  readonly w?: readonly number[];
  readonly v?: readonly number[];
  readonly c?: number;
}

/** One sub-agent call. */
export interface DelegationRecord {
  readonly s: number;
  /** Agent name (shortened). */
  readonly g: string;
  /** Sketch of the task's word stems. */
  readonly i: AnySketch;
  /** Answer sketch. */
  readonly o: AnySketch;
  /** Answer token count. */
  readonly n: number;
  /** Identity of the task (see textIdentity): 0 or absent when it names nothing exactly. */
  readonly k?: number;
  /** 2 when the call failed with a transient error (an outage: no answer); absent otherwise. */
  readonly e?: 2;
}

/** Token-drift run: consecutive rounds growing by at least the factor. */
export interface DriftState {
  /** Prompt tokens of the last round that reported them. */
  readonly last: number | null;
  /** Consecutive growth steps so far. */
  readonly steps: number;
  /** Prompt tokens of the latest rounds of the run, oldest first (bounded, for evidence). */
  readonly tail: readonly number[];
}

/** Session budget. */
export interface BudgetState {
  readonly tokens: number;
  readonly costUsd: number;
  /** 0 = within budget, 1 = crossed (wrap-up announced), 2 = wrap-up round used. */
  readonly phase: 0 | 1 | 2;
}

/** Cumulative counters of a session. */
export interface BreakerCounters {
  readonly events: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly retrievals: number;
  readonly delegations: number;
  readonly userEvents: number;
  readonly detections: number;
}

/**
 * Everything the breaker keeps about one session: plain JSON, bounded by the
 * detectors' windows (never by the session's length), so any store can hold
 * it and every replica can judge the session the same way.
 *
 * `status` is top level so that stores can index open sessions.
 */
export interface BreakerSessionState {
  /** Schema version of this state. */
  readonly v: 1;
  readonly status: BreakerStatus;
  /** When the breaker last opened (epoch ms). */
  readonly openedAt: number | null;
  /** Category that opened it. */
  readonly openCategory: BreakerCategory | null;
  /** Why it opened (shortened). */
  readonly openReason: string | null;
  /** The evidence of the trip that opened it (absent in states stored by older versions). */
  readonly openEvidence?: BreakerEvidence;
  /**
   * 1 while the stop that opened it has not been thrown to the caller yet (it
   * was decided on an observed event): the next gate throws it as the
   * category's error, later ones as an open breaker.
   */
  readonly openPending?: 1;
  /** Sequence number of the last observed event. */
  readonly seq: number;
  /** Sequence number of the last user / outside event that brought new information: repetition evidence starts after it. */
  readonly userSeq: number;
  /** Latest tool calls, oldest first. */
  readonly tools: readonly ToolRecord[];
  /** Hashes of recent results (tools, retrievals, sub-agents) to tell new information from old. */
  readonly seen: readonly number[];
  readonly texts: readonly TextRecord[];
  /** Recent user turns, for text repetition (absent in sessions without user turns and in states stored by older versions). */
  readonly userTurns?: UserTurnsState;
  readonly retrievals: readonly RetrievalRecord[];
  readonly delegations: readonly DelegationRecord[];
  readonly drift: DriftState;
  /**
   * The token-drift run of the sub-agents' rounds (`ModelEvent.delegated`)
   * since the session's last own round, which ends it: a sub-agent's context
   * grows apart from its lead's (absent until such a round, and in states
   * stored by older versions).
   */
  readonly delegatedDrift?: DriftState;
  readonly budget: BudgetState;
  /** Detections per category so far (drives the escalation ladders). */
  readonly escalations: Readonly<Partial<Record<BreakerCategory, number>>>;
  /**
   * The model round (`counters.modelCalls`) of each category's latest
   * escalation, in sessions that report model rounds: a stop waits for a round
   * after the rung below it (absent until an escalation, and in states stored by older versions).
   */
  readonly escalatedIn?: Readonly<Partial<Record<BreakerCategory, number>>>;
  /**
   * Tools of the last cycle the breaker escalated: a spiral on one of them
   * (the cycle's other step was blocked) is the same loop and escalates as the cycle.
   */
  readonly cycleTools?: readonly string[];
  /** Keys of recently escalated detections, so that a check and the observation that follows it escalate once. */
  readonly handled: readonly string[];
  readonly counters: BreakerCounters;
  /** Last update (epoch ms). */
  readonly updatedAt: number;
}

/** Bounds of the evidence kept per session; the record windows are the defaults, lengthened by detector options (see `EvidenceWindows`). */
export const LIMITS = {
  tools: 32,
  seen: 48,
  texts: 6,
  /** Fresh user-turn tokens kept to see whether the next reply takes them up. */
  userFresh: 16,
  /** Distinct tokens of one user turn remembered; a generation of the user-turn filter holds up to this many before it rotates. */
  userVocab: 64,
  retrievals: 8,
  delegations: 12,
  driftTail: 6,
  handled: 8,
  name: 128,
  reason: 400,
} as const;

/** A token-drift run before its first round. */
export const NO_DRIFT: DriftState = Object.freeze({ last: null, steps: 0, tail: Object.freeze([]) });

/** A fresh session. */
export function initialState(now: number): BreakerSessionState {
  return {
    v: 1,
    status: 'CLOSED',
    openedAt: null,
    openCategory: null,
    openReason: null,
    seq: 0,
    userSeq: 0,
    tools: [],
    seen: [],
    texts: [],
    retrievals: [],
    delegations: [],
    drift: NO_DRIFT,
    budget: { tokens: 0, costUsd: 0, phase: 0 },
    escalations: {},
    handled: [],
    counters: { events: 0, modelCalls: 0, toolCalls: 0, retrievals: 0, delegations: 0, userEvents: 0, detections: 0 },
    updatedAt: now,
  };
}

/** `list` with `item` appended, keeping at most `max` (the newest). */
export function pushBounded<T>(list: readonly T[], item: T, max: number): T[] {
  // Sized exactly: pushing onto a copy would leave the growth slack of a
  // backing store that is half again as large in every retained list.
  if (typeof item === 'number') return pushBoundedNumber(list as readonly number[], item, max) as T[];
  const from = list.length >= max ? list.length - max + 1 : 0;
  const out = new Array<T>(list.length - from + 1);
  for (let i = from; i < list.length; i++) out[i - from] = list[i]!;
  out[out.length - 1] = item;
  return out;
}

/**
 * {@link pushBounded} for lists of numbers, in a function of its own: V8
 * gives the arrays a function allocates the element kind it has learned
 * there, and once that function has built lists of records, a list of
 * hashes from it would box every hash (a 53-bit hash is not a small integer:
 * 24 bytes instead of 8).
 */
function pushBoundedNumber(list: readonly number[], item: number, max: number): number[] {
  const from = list.length >= max ? list.length - max + 1 : 0;
  const out = new Array<number>(list.length - from + 1);
  for (let i = from; i < list.length; i++) out[i - from] = list[i]!;
  out[out.length - 1] = item;
  return out;
}

/**
 * `state` without its `key`, or `state` itself when it has none. Rest
 * destructuring (`const { key, ...rest } = state`) copies through V8's slow
 * path, about ten times a spread, even when the key is absent, as it is in
 * most sessions; a session state is copied this way on every model round.
 */
export function omitKey<K extends keyof BreakerSessionState>(state: BreakerSessionState, key: K): Omit<BreakerSessionState, K> {
  if (!(key in state)) return state;
  const { [key]: _omitted, ...rest } = state;
  return rest;
}

/** Shortens a name or message for storage. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
