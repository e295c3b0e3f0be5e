import { AdvisorOrder } from '../chat/advisor.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, MAX_TIMER_MS } from '../errors/validate-options.ts';
import { LIMITS } from './breaker-state.ts';
import type { BreakerStore } from './breaker-store.ts';
import { InMemoryBreakerStore } from './in-memory-breaker-store.ts';
import { OptionReader } from './option-reader.ts';
import { DEFAULT_IDENTITY_KEYS } from './similarity/identity-keys.ts';

/** Actions an escalation ladder may hold. */
export type EscalationAction = 'steer' | 'block' | 'stop';

/**
 * What the 1st, 2nd, 3rd … detection of one category in a session does; past
 * the end, the last step repeats.
 */
export type EscalationLadder = readonly EscalationAction[];

/** Per-tool overrides of {@link ToolSpiralOptions}. */
export interface ToolSpiralToolOptions {
  /** Turn spiral detection off for this tool (e.g. a clock or a queue poller). */
  readonly enabled?: boolean;
  /** See {@link ToolSpiralOptions.maxRepeats}. */
  readonly maxRepeats?: number;
  /** See {@link ToolSpiralOptions.maxIdenticalRepeats}. */
  readonly maxIdenticalRepeats?: number;
  /** See {@link ToolSpiralOptions.similarity}. */
  readonly similarity?: number;
}

/**
 * Tool-call spiral: the same tool called again and again with near-identical
 * arguments while its results bring nothing new. Judged in `checkToolCall`,
 * before the repeat runs. A repeat whose result differs from the previous one
 * (a new page, a changed status, the next chunk) is progress and restarts the
 * count, and so does new information from another tool or a user turn.
 */
export interface ToolSpiralOptions {
  /** @default true */
  readonly enabled?: boolean;
  /**
   * The call that would be the n-th near-identical call in a row with
   * unchanged results is judged a spiral. Errors are judged by
   * {@link ErrorLoopOptions} instead, which is quicker: a rejected request
   * repeated is a stronger signal than a repeated read.
   * @default 4
   */
  readonly maxRepeats?: number;
  /**
   * The same for calls with identical arguments (after canonical JSON):
   * the same question with the same answer is the strongest sign, so the
   * third time is judged. Never above `maxRepeats`.
   * @default 3
   */
  readonly maxIdenticalRepeats?: number;
  /**
   * How many of the tool's latest calls one repeat chain may reach back over.
   * At least `maxRepeats - 1` (of every `perTool` entry too), to which it is
   * lengthened when left out.
   * @default 5, or the largest `maxRepeats` - 1 when that is more
   */
  readonly window?: number;
  /** Lowest argument similarity (0–1) for two calls to count as near-identical. @default 0.8 */
  readonly similarity?: number;
  /**
   * Lowest argument similarity for a call to count as a repeat of earlier
   * calls that all returned the same non-empty result: re-spelling a request
   * (a paraphrased query, an extra no-op flag, `cd` before the same command)
   * that keeps returning the same thing is not progress. Identity fields
   * (paths, ids, pages, dates) must still match exactly, so a sweep over
   * different items is never a repeat. Never above `similarity`.
   * @default 0.5
   */
  readonly sameResultSimilarity?: number;
  /** @default ['steer', 'block', 'stop'] */
  readonly escalation?: EscalationLadder;
  /** Overrides by tool name. */
  readonly perTool?: Readonly<Record<string, ToolSpiralToolOptions>>;
}

/** Per-tool overrides of {@link ErrorLoopOptions}. */
export interface ErrorLoopToolOptions {
  readonly enabled?: boolean;
  readonly maxRepeats?: number;
  readonly maxTransientRepeats?: number;
  readonly similarity?: number;
}

/**
 * Error loop: the same call (near-identical arguments) failing with the same
 * normalised error again and again. Judged before the next attempt runs.
 * Transient failures (HTTP 429/5xx, timeouts, rate limits, dropped
 * connections) are an outage, not a loop: they get the separate, higher
 * `maxTransientRepeats` limit.
 */
export interface ErrorLoopOptions {
  /** @default true */
  readonly enabled?: boolean;
  /**
   * The n-th attempt of a call that failed the same way n-1 times in a row is
   * judged a loop; a request reworded on every attempt (each related to the
   * next) and rejected with the very same error, at attempt n + 1.
   * @default 3
   */
  readonly maxRepeats?: number;
  /** Same, for transient errors (bounded retries of an outage are fine). @default 5 */
  readonly maxTransientRepeats?: number;
  /** Lowest argument similarity (0–1) for two attempts to count as the same call. @default 0.8 */
  readonly similarity?: number;
  /**
   * Whether a user turn clears the evidence. Off by default: a deterministic
   * rejection of an unchanged request is not fixed by talking about it, and
   * real agents do resend a rejected request after every user turn. Evidence
   * is cleared by a successful state-changing action (see `readOnlyTools`), by
   * the call changing, or by a different result.
   * @default false
   */
  readonly resetOnUserEvent?: boolean;
  /** @default ['steer', 'block', 'stop'] */
  readonly escalation?: EscalationLadder;
  /** Overrides by tool name. */
  readonly perTool?: Readonly<Record<string, ErrorLoopToolOptions>>;
}

/**
 * Cycle: a short sequence of calls (A, B, A, B … or any period up to
 * `maxPeriod`) repeating with unchanged results. Judged before the call that
 * would start the `repeats`-th round of the cycle.
 */
export interface CycleOptions {
  /** @default true */
  readonly enabled?: boolean;
  /** Longest cycle looked for (calls per period). @default 5 */
  readonly maxPeriod?: number;
  /**
   * The call that would begin the n-th round of the cycle is judged (at least
   * 3: two full rounds are needed to see that the results did not change).
   * @default 3
   */
  readonly repeats?: number;
  /** Lowest argument similarity (0–1) for two calls to be the same step of a cycle. @default 0.8 */
  readonly similarity?: number;
  /** @default ['steer', 'block', 'stop'] */
  readonly escalation?: EscalationLadder;
}

/**
 * Token drift: prompt tokens growing geometrically. A fall (compaction,
 * summarisation, a trimmed memory) restarts the count; rounds without a token
 * count are skipped.
 */
export interface TokenDriftOptions {
  /** @default true */
  readonly enabled?: boolean;
  /** Growth factor between consecutive rounds that counts as drift. @default 1.35 */
  readonly growthFactor?: number;
  /** Consecutive rounds, each at least `growthFactor` × the one before, that trip. @default 3 */
  readonly consecutive?: number;
  /**
   * Growth is counted only from a prompt at least this large: early in a
   * session the context legitimately multiplies as the first files and
   * records are read (a 2k-token start reaching 14k in three rounds is
   * accumulation); drift is compounding growth of a context that already
   * holds material.
   * @default 5000
   */
  readonly minPromptTokens?: number;
  /** @default ['steer', 'stop'] */
  readonly escalation?: EscalationLadder;
}

/**
 * RAG fixation: retrieval queries that search for the same thing and
 * retrieve nothing new. Queries are compared by their word stems; queries
 * naming different things (numbers, paths, file names) are never the same
 * search. A query whose retrieved documents change is exploring, not fixated;
 * the same documents in another order or with other scores are unchanged.
 * Searches that each answer that they found nothing ("Could not find …",
 * "No results") are one outcome however the answers are worded: reworded
 * queries for one target that keep failing trip, even with failed searches
 * for other targets between them.
 */
export interface RagFixationOptions {
  /** @default true */
  readonly enabled?: boolean;
  /** Consecutive retrievals of the same search with unchanged results that trip. @default 3 */
  readonly consecutive?: number;
  /**
   * Lowest query similarity (0–1, Jaccard of word stems) for two queries to
   * be the same search on their own: used when results are not reported or
   * nothing was retrieved.
   * @default 0.75
   */
  readonly similarity?: number;
  /**
   * Lowest query relatedness (0–1: share of the shorter query's word stems
   * found in the other) for two queries that retrieved the very same
   * documents to be the same search. Lower than `similarity` because the
   * retriever has already judged them equivalent: rewordings of one question
   * share few exact words. Failed searches must be related by more than this
   * to the query that followed them.
   * @default 0.5
   */
  readonly sameDocumentsSimilarity?: number;
  /** @default ['steer', 'stop'] */
  readonly escalation?: EscalationLadder;
}

/** Per-agent overrides of {@link DelegationOptions}. */
export interface DelegationAgentOptions {
  readonly enabled?: boolean;
  readonly maxCalls?: number;
  readonly answerSimilarity?: number;
}

/**
 * Delegation loop: a sub-agent asked the same task again and again while
 * asking again brings nothing new, or giving (nearly) the same answer to a
 * re-ask. Tasks are compared by their word stems and by what they name
 * exactly (paths, file names, numbers): "Review src/a.ts" and "Review
 * src/b.ts", or chunk 2 and chunk 3 of a text, are different tasks.
 */
export interface DelegationOptions {
  /** @default true */
  readonly enabled?: boolean;
  /**
   * The n-th ask of one sub-agent with the same task since the last
   * informative user turn is judged a loop, when the earlier asks brought
   * nothing new: the very same request repeated word for word counts
   * whatever came back; a reworded one counts only when it got the answer
   * the ask before it got (a different answer means a different question, or
   * progress). Apart from that count, a re-ask answered as the ask before it
   * was (see `answerSimilarity`) is a loop at once.
   * @default 3
   */
  readonly maxCalls?: number;
  /**
   * Lowest task similarity (0–1: share of the shorter task's word stems found
   * in the other) for two asks to count as the same task. Tasks that name
   * different things never do.
   * @default 0.5
   */
  readonly inputSimilarity?: number;
  /** Lowest answer similarity (0–1) for a re-ask's answer to count as the same answer. @default 0.65 */
  readonly answerSimilarity?: number;
  /** Tool names that run a sub-agent: their tool calls are judged as delegations. @default [] */
  readonly subAgentTools?: readonly string[];
  /** Overrides by sub-agent (tool) name. */
  readonly perAgent?: Readonly<Record<string, DelegationAgentOptions>>;
  /** @default ['steer', 'block', 'stop'] */
  readonly escalation?: EscalationLadder;
}

/**
 * Text repetition: the model's own text repeating, across rounds with nothing
 * new in between (no tool call, retrieval or sub-agent call, and no user turn
 * that brought new information), or within one reply. Similarity is judged on
 * the prose: code blocks, tables and list items never make replies alike, and
 * replies whose code blocks, tables or lists differ are different replies.
 */
export interface TextRepetitionOptions {
  /** @default true */
  readonly enabled?: boolean;
  /** How many times the same reply (near-identical prose) since anything new happened trips, in a row or not. @default 3 */
  readonly repeats?: number;
  /** Lowest similarity (0–1) of two replies' prose to count as the same. @default 0.85 */
  readonly similarity?: number;
  /** Replies with fewer tokens (after stripping) are not judged, unless their code blocks, tables or lists have that many. @default 8 */
  readonly minTokens?: number;
  /** Also judge repetition inside one reply (a sentence said 3+ times, degenerate n-grams). @default true */
  readonly withinText?: boolean;
  /**
   * A user turn between two replies is new information when it adds at least
   * this many tokens the conversation has not used lately (the user's recent
   * turns and the model's latest reply; tokens of unspaced scripts count
   * half), or when the model's next reply takes up any token it added. A
   * turn that only repeats what was said, complains or nudges ("please look
   * again", "same as before", a harness's "you did not call a tool") does not
   * reset the evidence.
   * @default 8
   */
  readonly userTurnNewTokens?: number;
  /** @default ['steer', 'stop'] */
  readonly escalation?: EscalationLadder;
}

/**
 * Session budget. Counts prompt + completion tokens, and cost (an event's
 * `costUsd`, or its tokens priced by its `model` id), over the whole session;
 * never reset by `reset()`, by approvals or by retries. On reaching a cap the model is told to wrap up
 * and further tool calls are blocked; one more model round is allowed for the
 * answer, and any round after that is stopped.
 */
export interface BudgetOptions {
  /** @default true */
  readonly enabled?: boolean;
  /**
   * Token cap per session (prompt + completion tokens summed over every
   * round). The default is a backstop against a run that nothing else
   * stopped, set above what long productive coding sessions spend (a
   * 100-round run re-sends a 20–40k-token context each round: 2–4 million);
   * a cap cannot tell work from a loop, so set it to what a session is worth
   * to you.
   * @default 10_000_000
   */
  readonly maxTokens?: number;
  /**
   * Cost cap per session in USD: each model event's `costUsd`, or its tokens
   * priced by its `model` id from the price table (`DEFAULT_PRICES`, or the
   * client's telemetry `prices`); a model without a price makes the
   * cap not enforceable (`health().costBudget`).
   * @default undefined (no cost cap)
   */
  readonly maxCostUsd?: number;
  /** Leave the model one wrap-up round after the crossing; `false` stops at once. @default true */
  readonly wrapUpTurn?: boolean;
}

/** Options of the AgentBreaker. Every field is optional; defaults are documented per field. */
export interface AgentBreakerOptions {
  /** Where session state lives. Share one store between replicas to share breakers. @default new InMemoryBreakerStore({ now }), on the breaker's clock */
  readonly store?: BreakerStore;
  /** Clock in epoch milliseconds (inject one in tests). @default Date.now */
  readonly now?: () => number;
  /** How long an OPEN breaker rejects calls before letting a probe through (HALF_OPEN). @default 60_000 */
  readonly cooldownMs?: number;
  /**
   * A session in which nothing was observed for this long starts its next
   * action (a tool-call check or a model-call gate) from fresh evidence, as
   * after `reset(sessionId, { evidence: true })`: what the detectors saw and
   * the escalation ladders are forgotten; budgets, counters and an OPEN
   * breaker's cooldown are kept. For sessions whose repeats come from people,
   * not from a loop: an MCP connection that lives for days, where the same
   * question hours apart makes the same call, and no user turn tells the
   * breaker that someone asked again. An agent's loop has no such pause
   * between its steps. `0` never forgets.
   * @default 0 (`governor mcp`: 15 minutes)
   */
  readonly idleResetMs?: number;
  /**
   * What to do when the store fails (load or write throws): `fail-open` lets
   * the call through, `fail-closed` stops it. Both emit a `warning` event; the
   * caller never sees the store's exception.
   * @default 'fail-open'
   */
  readonly onStoreError?: 'fail-open' | 'fail-closed';
  /**
   * Kept for compatibility and ignored: stores apply every operation in one
   * order shared by all writers, so writes no longer conflict or retry.
   * @default 8
   */
  readonly maxStoreRetries?: number;
  /**
   * How long (ms) a session state this process has just read or written
   * counts as current for checks (`checkModelCall`, `checkToolCall`). With 0
   * every check reads the store, so a trip on another replica is seen by the
   * very next check. With a shared remote store, a value such as 1000 makes
   * checks free (a tool loop then costs one round trip per observed event);
   * another replica's trip is then seen within that time, or at once by the
   * next observation, which is judged after every operation ordered before
   * it. The default keeps a
   * shared store at one round trip per observed event; set 0 when every check
   * must see other replicas' trips at once.
   * @default 1000
   */
  readonly checkFreshnessMs?: number;
  /**
   * Tools that only read: their results are information but cannot change
   * the outcome of another call, so they do not clear error-loop evidence. A
   * tool is read-only when its snake_cased name equals an entry or starts with
   * an entry followed by `_`; entries with `*` are globs. The list replaces
   * the default one: to add to it, pass `[...DEFAULT_READ_ONLY_TOOLS, 'audit_*']`.
   * @default DEFAULT_READ_ONLY_TOOLS
   */
  readonly readOnlyTools?: readonly string[];
  /**
   * Extra argument keys compared exactly (added to DEFAULT_IDENTITY_KEYS):
   * exact names or `*_suffix` / `prefix_*` globs. An exact name of
   * RETRY_KEYS (left out of comparisons by default) is compared exactly too.
   * @default []
   */
  readonly identityKeys?: readonly string[];
  /** Emit OpenTelemetry span events and the `governor.breaker.escalations` counter. @default true */
  readonly telemetry?: boolean;
  /**
   * The breaker's advisor order. It judges every round only inside the tool
   * loop: keep it greater than the ToolCallingAdvisor's order (a breaker
   * outside the loop sees one round per call and warns once).
   * @default AdvisorOrder.BREAKER (just inside the tool loop)
   */
  readonly order?: number;
  readonly toolSpiral?: ToolSpiralOptions;
  readonly errorLoop?: ErrorLoopOptions;
  readonly cycle?: CycleOptions;
  readonly tokenDrift?: TokenDriftOptions;
  readonly ragFixation?: RagFixationOptions;
  readonly delegation?: DelegationOptions;
  readonly textRepetition?: TextRepetitionOptions;
  readonly budget?: BudgetOptions;
}

/** Tools treated as read-only unless `readOnlyTools` says otherwise. */
export const DEFAULT_READ_ONLY_TOOLS: readonly string[] = [
  'get',
  'search',
  'find',
  'list',
  'read',
  'lookup',
  'look_up',
  'fetch',
  'query',
  'retrieve',
  'view',
  'show',
  'describe',
  'inspect',
  'check',
  'count',
  'think',
  'calculate',
  'calc',
  'compute',
  'grep',
  'cat',
  'ls',
  'head',
  'tail',
  'wc',
  'stat',
  'pwd',
  'which',
  'whoami',
  'echo',
  // Pages a provider opens or fetches itself (see hosted-calls.ts): reading one changes nothing.
  'open_page',
  'web_fetch',
];

type Required<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/** Options with every default filled in. */
export interface ResolvedAgentBreakerOptions {
  readonly store: BreakerStore;
  readonly now: () => number;
  readonly cooldownMs: number;
  readonly idleResetMs: number;
  readonly onStoreError: 'fail-open' | 'fail-closed';
  readonly maxStoreRetries: number;
  readonly checkFreshnessMs: number;
  readonly readOnlyTools: readonly string[];
  readonly identityKeys: readonly string[];
  readonly telemetry: boolean;
  readonly order: number;
  readonly toolSpiral: Required<Omit<ToolSpiralOptions, 'perTool'>> & { readonly perTool: Readonly<Record<string, ToolSpiralToolOptions>> };
  readonly errorLoop: Required<Omit<ErrorLoopOptions, 'perTool'>> & { readonly perTool: Readonly<Record<string, ErrorLoopToolOptions>> };
  readonly cycle: Required<CycleOptions>;
  readonly tokenDrift: Required<TokenDriftOptions>;
  readonly ragFixation: Required<RagFixationOptions>;
  readonly delegation: Required<Omit<DelegationOptions, 'perAgent'>> & { readonly perAgent: Readonly<Record<string, DelegationAgentOptions>> };
  readonly textRepetition: Required<TextRepetitionOptions>;
  readonly budget: Required<Omit<BudgetOptions, 'maxCostUsd'>> & { readonly maxCostUsd: number | undefined };
  /** How much evidence a session keeps, derived from the detectors' options. */
  readonly windows: EvidenceWindows;
}

/**
 * How many records of each kind a session keeps. Each window is its default
 * (`LIMITS`) or, when the options ask a detector to look further back (more
 * repeats, a longer cycle), long enough for it, with room for as many other
 * records between the repeats: a count the window cannot hold would never be
 * reached.
 */
export interface EvidenceWindows {
  readonly tools: number;
  readonly delegations: number;
  readonly retrievals: number;
  readonly texts: number;
}

function evidenceWindows(o: Omit<ResolvedAgentBreakerOptions, 'windows'>): EvidenceWindows {
  const spiral = [o.toolSpiral, ...Object.values(o.toolSpiral.perTool)];
  const errors = [o.errorLoop, ...Object.values(o.errorLoop.perTool)];
  const toolRepeats = Math.max(
    o.toolSpiral.window + 1,
    ...spiral.flatMap((t) => [t.maxRepeats ?? 0, t.maxIdenticalRepeats ?? 0]),
    // A reworded request is a loop one attempt after a repeated one.
    ...errors.flatMap((t) => [(t.maxRepeats ?? 0) + 1, t.maxTransientRepeats ?? 0]),
  );
  const calls = Math.max(o.delegation.maxCalls, ...Object.values(o.delegation.perAgent).map((a) => a.maxCalls ?? 0));
  return {
    tools: Math.max(LIMITS.tools, o.cycle.maxPeriod * (o.cycle.repeats - 1), 2 * (toolRepeats - 1)),
    delegations: Math.max(LIMITS.delegations, 2 * (calls - 1)),
    retrievals: Math.max(LIMITS.retrievals, 2 * o.ragFixation.consecutive),
    texts: Math.max(LIMITS.texts, 2 * (o.textRepetition.repeats - 1)),
  };
}

const TOOL_LADDER: EscalationLadder = ['steer', 'block', 'stop'];
const OBSERVED_LADDER: EscalationLadder = ['steer', 'stop'];
const SIMILARITY = { min: 0, max: 1, exclusiveMin: true } as const;
const COUNT = { min: 2, max: 100, integer: true } as const;

function ladder(reader: OptionReader, key: string, fallback: EscalationLadder): EscalationLadder {
  const v = reader.raw(key);
  if (v === undefined) return fallback;
  if (!Array.isArray(v) || v.length === 0 || v.some((a) => a !== 'steer' && a !== 'block' && a !== 'stop')) {
    throw new InvalidOptionError(reader.name(key), "must be a non-empty array of 'steer', 'block', 'stop'");
  }
  return [...(v as EscalationAction[])];
}

/**
 * A time option in whole milliseconds from 0 to the timer maximum: a longer
 * one is refused like every other time option, naming it and the range.
 */
function timeMs(reader: OptionReader, key: string, fallback: number): number {
  const v = reader.raw(key);
  if (v !== undefined) is.timeMs(0)(v, reader.name(key));
  return reader.number(key, fallback, { min: 0, max: MAX_TIMER_MS, integer: true });
}

function overrides<T>(reader: OptionReader, key: string, allowed: readonly string[], read: (entry: OptionReader) => T): Readonly<Record<string, T>> {
  const raw = reader.record(key);
  const out: Record<string, T> = {};
  for (const name of Object.keys(raw)) out[name] = read(new OptionReader(raw[name], `${reader.name(key)}.${name}`, allowed));
  return out;
}

/** Validates options and fills in defaults; throws InvalidOptionError naming the first bad option. */
export function resolveAgentBreakerOptions(options: AgentBreakerOptions = {}): ResolvedAgentBreakerOptions {
  const top = new OptionReader(options, '', [
    'store',
    'now',
    'cooldownMs',
    'idleResetMs',
    'onStoreError',
    'maxStoreRetries',
    'checkFreshnessMs',
    'readOnlyTools',
    'identityKeys',
    'telemetry',
    'order',
    'toolSpiral',
    'errorLoop',
    'cycle',
    'tokenDrift',
    'ragFixation',
    'delegation',
    'textRepetition',
    'budget',
  ]);
  const store = top.raw('store');
  if (store !== undefined) checkStore(store);

  const spiral = new OptionReader(top.raw('toolSpiral'), 'toolSpiral', [
    'enabled',
    'maxRepeats',
    'maxIdenticalRepeats',
    'window',
    'similarity',
    'sameResultSimilarity',
    'escalation',
    'perTool',
  ]);
  const spiralRepeats = spiral.number('maxRepeats', 4, COUNT);
  const spiralPerTool = overrides(spiral, 'perTool', ['enabled', 'maxRepeats', 'maxIdenticalRepeats', 'similarity'], (r) =>
    withoutUndefined({
      enabled: r.bool('enabled', true),
      maxRepeats: r.optionalNumber('maxRepeats', COUNT),
      maxIdenticalRepeats: r.optionalNumber('maxIdenticalRepeats', COUNT),
      similarity: r.optionalNumber('similarity', SIMILARITY),
    }),
  );
  // A chain of n repeats reaches back over n - 1 calls: the window left out is lengthened to the longest one asked for.
  const longestRepeats = Math.max(spiralRepeats, ...Object.values(spiralPerTool).map((o) => o.maxRepeats ?? 0));
  const spiralWindow = spiral.number('window', Math.max(5, longestRepeats - 1), { min: 1, max: 100, integer: true });
  if (spiralWindow < longestRepeats - 1) {
    const which = longestRepeats === spiralRepeats ? 'maxRepeats' : 'the largest perTool maxRepeats';
    throw new InvalidOptionError(
      'toolSpiral.window',
      `must be at least ${which} - 1 (${longestRepeats - 1}) so a chain can reach the threshold; leave it out to have it lengthened to match`,
    );
  }

  const errors = new OptionReader(top.raw('errorLoop'), 'errorLoop', [
    'enabled',
    'maxRepeats',
    'maxTransientRepeats',
    'similarity',
    'resetOnUserEvent',
    'escalation',
    'perTool',
  ]);
  const cycle = new OptionReader(top.raw('cycle'), 'cycle', ['enabled', 'maxPeriod', 'repeats', 'similarity', 'escalation']);
  const drift = new OptionReader(top.raw('tokenDrift'), 'tokenDrift', ['enabled', 'growthFactor', 'consecutive', 'minPromptTokens', 'escalation']);
  const rag = new OptionReader(top.raw('ragFixation'), 'ragFixation', ['enabled', 'consecutive', 'similarity', 'sameDocumentsSimilarity', 'escalation']);
  const delegation = new OptionReader(top.raw('delegation'), 'delegation', [
    'enabled',
    'maxCalls',
    'inputSimilarity',
    'answerSimilarity',
    'subAgentTools',
    'perAgent',
    'escalation',
  ]);
  const text = new OptionReader(top.raw('textRepetition'), 'textRepetition', [
    'enabled',
    'repeats',
    'similarity',
    'minTokens',
    'withinText',
    'userTurnNewTokens',
    'escalation',
  ]);
  const budget = new OptionReader(top.raw('budget'), 'budget', ['enabled', 'maxTokens', 'maxCostUsd', 'wrapUpTurn']);

  const now = top.fn<() => number>('now') ?? Date.now;
  const resolved = {
    // The default store keeps time with the breaker: a clock given for tests expires its idle sessions too.
    store: (store as BreakerStore | undefined) ?? new InMemoryBreakerStore({ now }),
    now,
    cooldownMs: timeMs(top, 'cooldownMs', 60_000),
    idleResetMs: timeMs(top, 'idleResetMs', 0),
    onStoreError: top.oneOf('onStoreError', 'fail-open', ['fail-open', 'fail-closed'] as const),
    maxStoreRetries: top.number('maxStoreRetries', 8, { min: 0, max: 100, integer: true }),
    checkFreshnessMs: timeMs(top, 'checkFreshnessMs', 1_000),
    readOnlyTools: top.strings('readOnlyTools', DEFAULT_READ_ONLY_TOOLS),
    identityKeys: [...DEFAULT_IDENTITY_KEYS, ...top.strings('identityKeys', [])],
    telemetry: top.bool('telemetry', true),
    order: top.number('order', AdvisorOrder.BREAKER, { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    toolSpiral: {
      enabled: spiral.bool('enabled', true),
      maxRepeats: spiralRepeats,
      maxIdenticalRepeats: spiral.number('maxIdenticalRepeats', 3, COUNT),
      window: spiralWindow,
      similarity: spiral.number('similarity', 0.8, SIMILARITY),
      sameResultSimilarity: spiral.number('sameResultSimilarity', 0.5, SIMILARITY),
      escalation: ladder(spiral, 'escalation', TOOL_LADDER),
      perTool: spiralPerTool,
    },
    errorLoop: {
      enabled: errors.bool('enabled', true),
      maxRepeats: errors.number('maxRepeats', 3, COUNT),
      maxTransientRepeats: errors.number('maxTransientRepeats', 5, COUNT),
      similarity: errors.number('similarity', 0.8, SIMILARITY),
      resetOnUserEvent: errors.bool('resetOnUserEvent', false),
      escalation: ladder(errors, 'escalation', TOOL_LADDER),
      perTool: overrides(errors, 'perTool', ['enabled', 'maxRepeats', 'maxTransientRepeats', 'similarity'], (r) =>
        withoutUndefined({
          enabled: r.bool('enabled', true),
          maxRepeats: r.optionalNumber('maxRepeats', COUNT),
          maxTransientRepeats: r.optionalNumber('maxTransientRepeats', COUNT),
          similarity: r.optionalNumber('similarity', SIMILARITY),
        }),
      ),
    },
    cycle: {
      enabled: cycle.bool('enabled', true),
      maxPeriod: cycle.number('maxPeriod', 5, { min: 2, max: 8, integer: true }),
      repeats: cycle.number('repeats', 3, { min: 3, max: 10, integer: true }),
      similarity: cycle.number('similarity', 0.8, SIMILARITY),
      escalation: ladder(cycle, 'escalation', TOOL_LADDER),
    },
    tokenDrift: {
      enabled: drift.bool('enabled', true),
      growthFactor: drift.number('growthFactor', 1.35, { min: 1, exclusiveMin: true, max: 100 }),
      consecutive: drift.number('consecutive', 3, { min: 1, max: 50, integer: true }),
      minPromptTokens: drift.number('minPromptTokens', 5000, { min: 0, integer: true }),
      escalation: ladder(drift, 'escalation', OBSERVED_LADDER),
    },
    ragFixation: {
      enabled: rag.bool('enabled', true),
      consecutive: rag.number('consecutive', 3, { min: 2, max: 50, integer: true }),
      similarity: rag.number('similarity', 0.75, SIMILARITY),
      sameDocumentsSimilarity: rag.number('sameDocumentsSimilarity', 0.5, SIMILARITY),
      escalation: ladder(rag, 'escalation', OBSERVED_LADDER),
    },
    delegation: {
      enabled: delegation.bool('enabled', true),
      maxCalls: delegation.number('maxCalls', 3, COUNT),
      inputSimilarity: delegation.number('inputSimilarity', 0.5, SIMILARITY),
      answerSimilarity: delegation.number('answerSimilarity', 0.65, SIMILARITY),
      subAgentTools: delegation.strings('subAgentTools', []),
      perAgent: overrides(delegation, 'perAgent', ['enabled', 'maxCalls', 'answerSimilarity'], (r) =>
        withoutUndefined({
          enabled: r.bool('enabled', true),
          maxCalls: r.optionalNumber('maxCalls', COUNT),
          answerSimilarity: r.optionalNumber('answerSimilarity', SIMILARITY),
        }),
      ),
      escalation: ladder(delegation, 'escalation', TOOL_LADDER),
    },
    textRepetition: {
      enabled: text.bool('enabled', true),
      repeats: text.number('repeats', 3, COUNT),
      similarity: text.number('similarity', 0.85, SIMILARITY),
      minTokens: text.number('minTokens', 8, { min: 1, max: 10_000, integer: true }),
      withinText: text.bool('withinText', true),
      userTurnNewTokens: text.number('userTurnNewTokens', 8, { min: 1, max: 10_000, integer: true }),
      escalation: ladder(text, 'escalation', OBSERVED_LADDER),
    },
    budget: {
      enabled: budget.bool('enabled', true),
      maxTokens: budget.number('maxTokens', 10_000_000, { min: 1, integer: true }),
      maxCostUsd: budget.optionalNumber('maxCostUsd', { min: 0, exclusiveMin: true }),
      wrapUpTurn: budget.bool('wrapUpTurn', true),
    },
  };
  return { ...resolved, windows: evidenceWindows(resolved) };
}

function withoutUndefined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

const STORE_METHODS = ['read', 'apply', 'delete'] as const satisfies readonly (keyof BreakerStore)[];
const OPTIONAL_STORE_METHODS = [
  'addSteers',
  'takeSteers',
  'claimFirst',
  'addAlias',
  'sessionOfAlias',
  'putNote',
  'readNote',
  'listOpen',
  'ping',
  'status',
] as const satisfies readonly (keyof BreakerStore)[];

/**
 * A store is used long after the breaker is built (`delete` only on a
 * reset), so a missing or misspelt method is refused here rather than
 * failing in the middle of a run.
 */
function checkStore(store: unknown): void {
  if (store === null || typeof store !== 'object')
    throw new InvalidOptionError('store', `must implement BreakerStore (${STORE_METHODS.join(', ')}), got ${store === null ? 'null' : typeof store}`);
  const methods = store as Record<string, unknown>;
  const missing = STORE_METHODS.filter((name) => typeof methods[name] !== 'function');
  if (missing.length > 0)
    throw new InvalidOptionError(
      'store',
      `must implement BreakerStore (${STORE_METHODS.join(', ')}): ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not a function`,
    );
  for (const name of OPTIONAL_STORE_METHODS) {
    if (methods[name] !== undefined && typeof methods[name] !== 'function')
      throw new InvalidOptionError(`store.${name}`, `must be a function when present, got ${typeof methods[name]}`);
  }
}
