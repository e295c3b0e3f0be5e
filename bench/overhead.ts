/**
 * Overhead benchmark: what Governor adds to an agent run.
 *
 * 1. The AgentBreaker with every detector on, in-memory store: cost per
 *    observed event (µs, median and p99, by step kind) and retained heap per
 *    session, for sessions of 10, 1,000 and 10,000 events and tool-call
 *    arguments of 100 B, 1 KB and 8 KB.
 * 2. The same sessions through `RedisBreakerStore` on a local Redis: round
 *    trips per event (every command counted by a wrapper around the client)
 *    and the latency a Redis round trip adds to a model round.
 * 3. A ChatClient with a typical advisor chain against a bare `doGenerate`
 *    on a mock model that answers at once: what the client and its advisors
 *    cost per call.
 *
 * An "event" is one step of an agent run as the breaker meets it: a model
 * round (checkModelCall + observe), a tool call (checkToolCall + observe of
 * its result), a sub-agent tool call (the same, judged as a delegation), or a
 * retrieval, a delegation or a user turn (observe). The generated sessions
 * are productive (new arguments, new results), so the breaker does its full
 * work on every event instead of short-circuiting on an open breaker; any
 * trip is reported.
 *
 * Goals (the report computes whether the figures meet them; no test does):
 * under 20 µs per model call in memory with every detector on; memory per
 * session bounded by the detectors' windows; one Redis round trip per event.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { Rng } from './corpus/prng.ts';
import { z } from 'zod';
import { ToolCallAdvisor } from '../src/advisors/tool-call-advisor.ts';
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import type { BreakerEvent } from '../src/breaker/breaker-event.ts';
import type { AgentBreakerOptions } from '../src/breaker/breaker-options.ts';
import type { BreakerSessionState, BreakerStore } from '../src/breaker/breaker-store.ts';
import { InMemoryBreakerStore } from '../src/breaker/in-memory-breaker-store.ts';
import type { Advisor } from '../src/chat/advisor.ts';
import { CONVERSATION_ID } from '../src/chat/advisor-context.ts';
import { ChatClient } from '../src/chat/chat-client.ts';
import { InMemoryChatMemoryRepository } from '../src/memory/in-memory-chat-memory-repository.ts';
import { MessageChatMemoryAdvisor } from '../src/memory/message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from '../src/memory/message-window-chat-memory.ts';
import { RedisBreakerStore, type RedisCommandClient } from '../src/redis/redis-breaker-store.ts';
import { decodeState, encodeState } from '../src/breaker/state-codec.ts';
import { compressState, decompressState } from '../src/breaker/state-compression.ts';
import { pingRedis, redactUrl, testRedisUrl } from '../src/test-support/services.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const repoRoot = path.resolve(import.meta.dirname, '..');

// ------------------------------------------------------------------ goals

/** Most a session may keep after 1,000 events, in memory (compressed or decoded) and stored (KB). */
const GOAL_SESSION_KB = 8;
/** Most a model round may cost in memory with every detector on (median, µs). */
const GOAL_MODEL_CALL_MICROS = 20;
/** Most any event may cost in memory with every detector on, 1 KB arguments (median, µs). */
const GOAL_EVENT_MICROS = 10;
/** Most Redis round trips per observed event. */
const GOAL_ROUND_TRIPS_PER_EVENT = 1;
/**
 * Retained heap per session may grow this much from the second-longest to
 * the longest session length and still count as bounded: heap figures taken
 * after GC wobble by a few per cent, a session state that keeps history grows
 * tenfold.
 */
const MEMORY_GROWTH_TOLERANCE = 0.2;

// --------------------------------------------------------------- machine

/** The machine the figures were taken on: they depend on it. */
interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
  readonly os: string;
  readonly memoryGb: number;
}

function machineInfo(): MachineInfo {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    node: process.version,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
  };
}

// ------------------------------------------------------------ statistics

/** Distribution of timings, µs. */
export interface Summary {
  readonly n: number;
  readonly median: number;
  readonly p99: number;
  readonly mean: number;
}

/** A growable list of timings (µs) that does not box each number. */
class Samples {
  #values = new Float64Array(1024);
  #n = 0;

  push(micros: number): void {
    if (this.#n === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#n++] = micros;
  }

  get size(): number {
    return this.#n;
  }

  summary(): Summary {
    const n = this.#n;
    if (n === 0) return { n: 0, median: Number.NaN, p99: Number.NaN, mean: Number.NaN };
    const sorted = this.#values.slice(0, n).sort();
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i] ?? 0;
    // Nearest rank: the value at or below which that share of the samples lie.
    const rank = (p: number): number => sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))] ?? Number.NaN;
    return { n, median: rank(0.5), p99: rank(0.99), mean: sum / n };
  }
}

function elapsedMicros(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1000;
}

// ------------------------------------------------------ generated sessions

/** Deterministic pseudo-random numbers, so every run measures the same sessions. */
export function prng(seed: number): () => number {
  const rng = new Rng(`overhead-${seed}`);
  return () => rng.next();
}

const WORDS = 'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega config build deploy status report invoice order customer flight seat'.split(
  ' ',
);

/** Random words, exactly `bytes` long (ASCII). */
export function words(rand: () => number, bytes: number): string {
  const out: string[] = [];
  // The joined length is `size - 1`: stop only once it reaches `bytes`.
  let size = 0;
  while (size <= bytes && bytes > 0) {
    const w = `${WORDS[Math.floor(rand() * WORDS.length)]}${Math.floor(rand() * 1000)}`;
    out.push(w);
    size += w.length + 1;
  }
  return out.join(' ').slice(0, bytes);
}

/** The tool that runs a sub-agent: its calls are judged as delegations. */
export const SUB_AGENT_TOOL = 'ask_researcher';

/** Length of each model reply and each tool result unless a shape says otherwise. */
const DEFAULT_TEXT_BYTES = 300;
const DEFAULT_RESULT_BYTES = 200;

/** Sizes of the generated steps. */
export interface SessionShape {
  /** Size of each tool call's arguments, as JSON (bytes). */
  readonly argBytes: number;
  /** Length of each model reply (bytes). @default 300 */
  readonly textBytes?: number;
  /** Length of each tool and sub-agent result (bytes). @default 200 */
  readonly resultBytes?: number;
}

/** One step as the benchmark drives it: `check` says which gate runs before the observation. */
export interface SessionStep {
  readonly check?: 'model' | 'tool';
  readonly event: BreakerEvent;
}

/** Fills `content` so that the arguments serialise to `bytes` bytes of JSON (or as close above as the other fields allow). */
function sizedArgs(rand: () => number, fields: Record<string, string>, key: string, bytes: number): Record<string, string> {
  const fixed = Buffer.byteLength(JSON.stringify({ ...fields, [key]: '' }));
  return { ...fields, [key]: words(rand, Math.max(0, bytes - fixed)) };
}

/**
 * A productive session: per 10 steps, 2 model rounds, 4 tool calls (one of
 * them failing now and then, with a new error), 1 sub-agent tool call, 1
 * retrieval, 1 delegation and 1 user turn. Arguments, results, queries and
 * replies are new every time; the prompt grows slowly and is compacted every
 * 200 steps, so nothing should trip.
 */
export function* sessionSteps(count: number, seed: number, shape: SessionShape): Generator<SessionStep> {
  const rand = prng(seed);
  const textBytes = shape.textBytes ?? DEFAULT_TEXT_BYTES;
  const resultBytes = shape.resultBytes ?? DEFAULT_RESULT_BYTES;
  let prompt = 2000;
  for (let i = 0; i < count; i++) {
    const phase = i % 10;
    if (phase === 0 || phase === 4) {
      prompt = i % 200 === 0 ? 2000 : prompt + Math.floor(rand() * 400);
      yield { check: 'model', event: { kind: 'model', promptTokens: prompt, completionTokens: 200, text: words(rand, textBytes) } };
    } else if (phase === 9) {
      yield { event: { kind: 'user', text: words(rand, 120) } };
    } else if (phase === 7) {
      yield { event: { kind: 'retrieval', query: words(rand, 80), results: [words(rand, 40), words(rand, 40)] } };
    } else if (phase === 8) {
      yield { event: { kind: 'delegation', agent: `agent${i % 3}`, input: words(rand, 200), output: words(rand, 400) } };
    } else if (phase === 6) {
      const args = sizedArgs(rand, {}, 'task', shape.argBytes);
      yield { check: 'tool', event: { kind: 'tool_call', tool: SUB_AGENT_TOOL, args, result: words(rand, resultBytes) } };
    } else {
      const name = phase === 1 ? 'read_file' : phase === 2 ? 'search' : phase === 3 ? 'update_record' : 'run_tests';
      const args = sizedArgs(rand, { path: `src/module-${i}.ts`, query: words(rand, 24) }, 'content', shape.argBytes);
      const failed = name === 'run_tests' && i % 30 === 5;
      const result = failed ? `FAIL ${words(rand, 60)}` : words(rand, resultBytes);
      yield { check: 'tool', event: { kind: 'tool_call', tool: name, args, result, ...(failed ? { error: true } : {}) } };
    }
  }
}

/** The step kinds, in the order the figures show them. */
export const STEP_KINDS = ['model', 'tool_call', 'sub_agent', 'retrieval', 'delegation', 'user'] as const;
type StepKind = (typeof STEP_KINDS)[number];

const KIND_LABELS: Readonly<Record<StepKind, string>> = {
  model: 'model round',
  tool_call: 'tool call',
  sub_agent: 'sub-agent call',
  retrieval: 'retrieval',
  delegation: 'delegation',
  user: 'user turn',
};

function kindOf(event: BreakerEvent): StepKind {
  if (event.kind === 'tool_call' && event.tool === SUB_AGENT_TOOL) return 'sub_agent';
  return event.kind;
}

/**
 * Every detector explicitly on, the sub-agent tool declared, defaults
 * otherwise. Only the token budget is lifted, so that long sessions measure
 * detection rather than a session stopped for its budget (the budget is
 * still counted on every model round).
 */
export function allDetectorsOn(store: BreakerStore | undefined, telemetry: boolean): AgentBreakerOptions {
  return {
    ...(store === undefined ? {} : { store }),
    telemetry,
    toolSpiral: { enabled: true },
    cycle: { enabled: true },
    errorLoop: { enabled: true },
    tokenDrift: { enabled: true },
    ragFixation: { enabled: true },
    delegation: { enabled: true, subAgentTools: [SUB_AGENT_TOOL] },
    textRepetition: { enabled: true },
    budget: { enabled: true, maxTokens: Number.MAX_SAFE_INTEGER },
  };
}

// ------------------------------------------------------ driving the breaker

/** Where one run's figures go. */
class StepRecorder {
  readonly all = new Samples();
  readonly byKind = Object.fromEntries(STEP_KINDS.map((k) => [k, new Samples()])) as Record<StepKind, Samples>;
  /** For long sessions: the first and the last 1,000 events of each, to see whether cost grows with the session. */
  readonly first1000 = new Samples();
  readonly last1000 = new Samples();
  readonly trips: Record<string, number> = {};
  /** Round trips by step kind, when a counter is given. */
  readonly roundTripsByKind = Object.fromEntries(STEP_KINDS.map((k) => [k, 0])) as Record<StepKind, number>;
  /** Round trips of each session's first step (the only one that must read an unknown session). */
  firstStepRoundTrips = 0;
  /** Each turn of the event loop between sessions (see {@link turnBetweenSessions}), µs. */
  readonly turns = new Samples();
}

/**
 * Lets the event loop turn once, as a server's does between one session's
 * requests and another's, and times the turn: the in-memory store compresses
 * there the sessions pushed out of its decoded set (work that is in no
 * event's figure, so the benchmark prints it on its own).
 */
async function turnBetweenSessions(into: StepRecorder): Promise<void> {
  const start = process.hrtime.bigint();
  await setImmediate();
  into.turns.push(elapsedMicros(start));
}

async function runSession(
  breaker: AgentBreaker,
  sessionId: string,
  steps: readonly SessionStep[],
  into: StepRecorder,
  roundTrips?: () => number,
): Promise<void> {
  const long = steps.length >= 2000;
  for (let i = 0; i < steps.length; i++) {
    const { check, event } = steps[i]!;
    const tripsBefore = roundTrips?.() ?? 0;
    const start = process.hrtime.bigint();
    let decision: Awaited<ReturnType<AgentBreaker['observe']>> | undefined;
    if (check === 'model') decision = await breaker.checkModelCall(sessionId);
    else if (check === 'tool' && event.kind === 'tool_call') decision = await breaker.checkToolCall(sessionId, { tool: event.tool, args: event.args });
    if (decision === undefined || decision.action === 'allow') decision = await breaker.observe(sessionId, event);
    const micros = elapsedMicros(start);
    const kind = kindOf(event);
    into.all.push(micros);
    into.byKind[kind].push(micros);
    if (long && i < 1000) into.first1000.push(micros);
    if (long && i >= steps.length - 1000) into.last1000.push(micros);
    if (roundTrips !== undefined) {
      const trips = roundTrips() - tripsBefore;
      into.roundTripsByKind[kind] += trips;
      if (i === 0) into.firstStepRoundTrips += trips;
    }
    if (decision.action !== 'allow') {
      const key = `${decision.category ?? decision.reason ?? 'unknown'}:${decision.action}`;
      into.trips[key] = (into.trips[key] ?? 0) + 1;
    }
  }
}

/** Runs `sessions` sessions of one shape; the steps of a session are generated before it is timed. */
async function runSessions(
  breaker: AgentBreaker,
  prefix: string,
  sessions: number,
  sessionEvents: number,
  shape: SessionShape,
  into: StepRecorder,
  roundTrips?: () => number,
): Promise<void> {
  for (let s = 0; s < sessions; s++) {
    const steps = [...sessionSteps(sessionEvents, s + 1, shape)];
    await runSession(breaker, `${prefix}${s}`, steps, into, roundTrips);
    await turnBetweenSessions(into);
  }
}

/** Runs throwaway sessions of every shape, so JIT compilation is not billed to the figures. */
async function warmUp(shapes: readonly SessionShape[], sessionsPerShape: number, eventsPerSession: number): Promise<void> {
  const store = new InMemoryBreakerStore({ maxSessions: 100_000 });
  const breaker = new AgentBreaker(allDetectorsOn(store, false));
  const sink = new StepRecorder();
  for (const [i, shape] of shapes.entries()) await runSessions(breaker, `warm-${i}-`, sessionsPerShape, eventsPerSession, shape, sink);
  // Left as they are, the sessions would keep the store's idle sweep armed, and the store with them, for decodedIdleMs:
  // the sweep compressing them, then the store going, would lower the heap in the middle of a later cell's figure.
  for (const [i] of shapes.entries()) for (let s = 0; s < sessionsPerShape; s++) await store.delete(`warm-${i}-${s}`);
}

// ------------------------------------------------------- in-memory matrix

/** Figures for one session length × shape, in-memory store. */
interface BreakerCell {
  readonly sessionEvents: number;
  readonly shape: Required<SessionShape>;
  readonly sessions: number;
  readonly events: number;
  /** Every step, whatever its kind. */
  readonly perEvent: Summary;
  readonly byKind: Readonly<Record<StepKind, Summary>>;
  /** Sessions of 2,000 events or more: their first and last 1,000 events. */
  readonly first1000: Summary | undefined;
  readonly last1000: Summary | undefined;
  /** Retained heap per session after the run (bytes, after GC). */
  readonly heapBytesPerSession: number;
  /** Size of one session's stored state as JSON (bytes). */
  readonly stateJsonBytes: number;
  /** Size of one session's state as stores keep it serialised (compressState; bytes). */
  readonly storedBytes: number;
  /** The same by top-level part of the state (bytes of each part's JSON value). */
  readonly stateJsonByPart: Readonly<Record<string, number>>;
  /** The encoded state (encodeState, before compression) by top-level part (bytes of each part in the encoded form; the name table as `names`). */
  readonly storedByPart: Readonly<Record<string, number>>;
  /** Median µs to encode one session's state (encodeState) and to decode it again (decodeState), and the same compressed (compressState, decompressState). */
  readonly codecMicros: { readonly encode: number; readonly decode: number; readonly compress: number; readonly decompress: number };
  /**
   * Retained heap per session by top-level part of the state (bytes, after
   * GC), largest first; measured for the longest sessions of the main matrix
   * only (empty otherwise). What is left of `heapBytesPerSession` is the
   * store's entry and the state object itself.
   */
  readonly stateHeapByPart: Readonly<Record<string, number>>;
  /** Non-allow decisions, by `category:action`. Productive sessions should have none. */
  readonly trips: Readonly<Record<string, number>>;
  /** The turns of the event loop between sessions, µs (see {@link turnBetweenSessions}). */
  readonly turns: Summary;
}

function fullShape(shape: SessionShape): Required<SessionShape> {
  return { argBytes: shape.argBytes, textBytes: shape.textBytes ?? DEFAULT_TEXT_BYTES, resultBytes: shape.resultBytes ?? DEFAULT_RESULT_BYTES };
}

function kindSummaries(recorder: StepRecorder): Record<StepKind, Summary> {
  return Object.fromEntries(STEP_KINDS.map((k) => [k, recorder.byKind[k].summary()])) as Record<StepKind, Summary>;
}

async function measureCell(sessionEvents: number, shape: SessionShape, sessions: number, heapByPart: boolean): Promise<BreakerCell> {
  const recorder = new StepRecorder();
  // Held only here, and dropped once measured.
  const held: { store?: InMemoryBreakerStore; breaker?: AgentBreaker } = {};
  // The figures are those of decoded sessions: the idle sweep must not compress the first ones while the last run.
  held.store = new InMemoryBreakerStore({ maxSessions: 100_000, decodedIdleMs: 3_600_000 });
  held.breaker = new AgentBreaker(allDetectorsOn(held.store, false));
  await runSessions(held.breaker, 's-', sessions, sessionEvents, shape, recorder);
  const { stateJsonBytes, storedBytes, stateJsonByPart, storedByPart, codecMicros, holders } = await describeStates(held.store, sessions, heapByPart);
  // What the sessions retain is what deleting them from the store frees:
  // measured that way, one-off growth elsewhere stays out, and so does what
  // the breaker and its store hold whatever the sessions (options, caches),
  // which divided by the few sessions of the long cells would read as a
  // cost per session.
  const heapWith = await dataHeapBytes();
  for (let s = 0; s < sessions; s++) await held.store.delete(`s-${s}`);
  const stateHeapByPart: Record<string, number> = {};
  let before = await dataHeapBytes();
  for (const [key, holder] of holders) {
    holder.fill(undefined);
    const after = await dataHeapBytes();
    stateHeapByPart[key] = Math.max(0, (before - after) / sessions);
    before = after;
  }
  const heapWithout = holders.size > 0 ? before : await dataHeapBytes();
  delete held.store;
  delete held.breaker;
  return {
    sessionEvents,
    shape: fullShape(shape),
    sessions,
    events: recorder.all.size,
    perEvent: recorder.all.summary(),
    byKind: kindSummaries(recorder),
    first1000: recorder.first1000.size > 0 ? recorder.first1000.summary() : undefined,
    last1000: recorder.last1000.size > 0 ? recorder.last1000.summary() : undefined,
    heapBytesPerSession: Math.max(0, (heapWith - heapWithout) / sessions),
    stateJsonBytes,
    storedBytes,
    stateJsonByPart,
    storedByPart,
    codecMicros,
    stateHeapByPart: Object.fromEntries(Object.entries(stateHeapByPart).sort((a, b) => b[1] - a[1])),
    trips: { ...recorder.trips },
    turns: recorder.turns.summary(),
  };
}

/** Figures for many sessions at once, more than the store keeps decoded. */
interface ScaleCell {
  readonly sessions: number;
  readonly sessionEvents: number;
  readonly argBytes: number;
  /** The store's decodedSessions: how many of the sessions are kept as objects. */
  readonly decoded: number;
  /** Retained heap per session, every session held (bytes, after GC). */
  readonly heapBytesPerSession: number;
  /** Every event, the sessions taking turns one event at a time (each use of a session not in the decoded set decodes it). */
  readonly rotating: Summary;
  /** The turns of the event loop after each session's turn, µs: by default, where the store compresses the sessions pushed out of the set. */
  readonly rotatingTurns: Summary;
  /** The same sessions and events with every session kept decoded (decodedSessions ≥ sessions). */
  readonly allDecoded: Summary;
  /** Its turns of the event loop: turns with nothing to compress. */
  readonly allDecodedTurns: Summary;
  /** Retained heap per session with every session kept decoded. */
  readonly allDecodedHeapBytesPerSession: number;
  /** Sessions of the every-session-compressed run (fewer: each of its operations pays a decompression and a compression). */
  readonly allEncodedSessions: number;
  /** Every event with no session kept decoded between operations (decodedSessions: 0). */
  readonly allEncoded: Summary;
  /** Retained heap per session kept compressed: what each session beyond the decoded set costs. */
  readonly allEncodedHeapBytesPerSession: number;
  /** decodedIdleMs of the at-rest run: how long its sessions rested before its heap figure. */
  readonly restMs: number;
  /** Sessions of the at-rest run (as many as the every-session-compressed run). */
  readonly atRestSessions: number;
  /** Retained heap per session of a default store whose sessions have all been idle for restMs and were compressed by its sweep. */
  readonly atRestHeapBytesPerSession: number;
}

/**
 * `sessions` sessions of `sessionEvents` events each, driven in turns (10
 * events of each session, then the next round), through `store`: the
 * per-event cost when the sessions in use outnumber what the store keeps
 * decoded, and the heap per session at scale (what this process retains for
 * them: for Redis, its cache).
 */
async function measureRotating(
  sessions: number,
  sessionEvents: number,
  shape: SessionShape,
  store: BreakerStore,
  rest?: () => Promise<void>,
): Promise<{ perEvent: Summary; turns: Summary; heapBytesPerSession: number; atRestHeapBytesPerSession: number | undefined }> {
  const recorder = new StepRecorder();
  const held: { breaker?: AgentBreaker } = {};
  held.breaker = new AgentBreaker(allDetectorsOn(store, false));
  const generators = Array.from({ length: sessions }, (_, s) => sessionSteps(sessionEvents, s + 1, shape));
  const chunk = 10;
  for (let done = 0; done < sessionEvents; done += chunk) {
    for (let s = 0; s < sessions; s++) {
      // A few events at a time per session, generated before they are timed.
      const steps: SessionStep[] = [];
      for (let i = 0; i < chunk; i++) {
        const next = generators[s]!.next();
        if (next.done === true) break;
        steps.push(next.value);
      }
      for (const step of steps) await runSession(held.breaker, `r-${s}`, [step], recorder);
      await turnBetweenSessions(recorder);
    }
  }
  generators.length = 0;
  const heapWith = await dataHeapBytes();
  let heapAtRest: number | undefined;
  if (rest !== undefined) {
    await rest();
    heapAtRest = await dataHeapBytes();
  }
  for (let s = 0; s < sessions; s++) await store.delete(`r-${s}`);
  const heapWithout = await dataHeapBytes();
  delete held.breaker;
  return {
    perEvent: recorder.all.summary(),
    turns: recorder.turns.summary(),
    heapBytesPerSession: Math.max(0, (heapWith - heapWithout) / sessions),
    atRestHeapBytesPerSession: heapAtRest === undefined ? undefined : Math.max(0, (heapAtRest - heapWithout) / sessions),
  };
}

/** Waits until the store's idle sweep has compressed every session (polling; it runs `decodedIdleMs` after their last use). */
async function untilAllCompressed(store: InMemoryBreakerStore): Promise<void> {
  const deadline = Date.now() + store.decodedIdleMs + 60_000;
  while (store.decoded > 0) {
    if (Date.now() > deadline) throw new Error(`the store still keeps ${store.decoded} sessions decoded ${store.decodedIdleMs} ms after their last use`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * {@link measureRotating} through an in-memory store keeping `decodedSessions` decoded (its default when undefined);
 * with `restMs`, its decodedIdleMs, also the heap once every session rested that long.
 */
function measureInMemoryRotating(sessions: number, sessionEvents: number, shape: SessionShape, decodedSessions: number | undefined, restMs?: number) {
  const store = new InMemoryBreakerStore({
    maxSessions: 100_000,
    ...(decodedSessions === undefined ? {} : { decodedSessions }),
    ...(restMs === undefined ? {} : { decodedIdleMs: restMs }),
  });
  return measureRotating(sessions, sessionEvents, shape, store, restMs === undefined ? undefined : () => untilAllCompressed(store));
}

async function measureScale(sessions: number, sessionEvents: number, argBytes: number, restMs: number): Promise<ScaleCell> {
  const shape = { argBytes };
  const rotating = await measureInMemoryRotating(sessions, sessionEvents, shape, undefined);
  const allDecoded = await measureInMemoryRotating(sessions, sessionEvents, shape, sessions);
  // Heap per session does not depend on how many there are; the time per event does not either once none is kept decoded.
  const allEncodedSessions = Math.min(sessions, 100);
  const allEncoded = await measureInMemoryRotating(allEncodedSessions, sessionEvents, shape, 0);
  // A run of its own: the wait for the sweep would let the process's baseline heap settle between the in-use figure and its reference.
  const atRest = await measureInMemoryRotating(allEncodedSessions, sessionEvents, shape, undefined, restMs);
  return {
    sessions,
    sessionEvents,
    argBytes,
    decoded: Math.min(sessions, new InMemoryBreakerStore().decodedSessions),
    heapBytesPerSession: rotating.heapBytesPerSession,
    rotating: rotating.perEvent,
    rotatingTurns: rotating.turns,
    allDecoded: allDecoded.perEvent,
    allDecodedTurns: allDecoded.turns,
    allDecodedHeapBytesPerSession: allDecoded.heapBytesPerSession,
    allEncodedSessions,
    allEncoded: allEncoded.perEvent,
    allEncodedHeapBytesPerSession: allEncoded.heapBytesPerSession,
    restMs,
    atRestSessions: allEncodedSessions,
    atRestHeapBytesPerSession: atRest.atRestHeapBytesPerSession ?? 0,
  };
}

/**
 * One session's stored state as JSON, in all and by part, and (when
 * `byPart`) each part of every session's state, held apart so that dropping
 * one part at a time, once the store is gone, shows the heap it keeps. A
 * function of its own, so that no state stays reachable from the caller's
 * frame once it returns (an async frame keeps what its locals held).
 */
async function describeStates(
  store: InMemoryBreakerStore,
  sessions: number,
  byPart: boolean,
): Promise<{
  stateJsonBytes: number;
  storedBytes: number;
  stateJsonByPart: Record<string, number>;
  storedByPart: Record<string, number>;
  codecMicros: { encode: number; decode: number; compress: number; decompress: number };
  holders: Map<string, unknown[]>;
}> {
  const holders = new Map<string, unknown[]>();
  const stored = await store.read('s-0');
  if (stored === undefined)
    return {
      stateJsonBytes: 0,
      storedBytes: 0,
      stateJsonByPart: {},
      storedByPart: {},
      codecMicros: { encode: 0, decode: 0, compress: 0, decompress: 0 },
      holders,
    };
  if (byPart) {
    const states: Record<string, unknown>[] = [];
    for (let s = 0; s < sessions; s++) {
      const read = await store.read(`s-${s}`);
      if (read !== undefined) states.push(read.state as unknown as Record<string, unknown>);
    }
    for (const key of Object.keys(stored.state))
      holders.set(
        key,
        states.map((state) => state[key]),
      );
  }
  const encoded = encodeState(stored.state);
  // The encoded form is a marker, then JSON: [name table, state with its lists rewritten].
  const [names, parts] = JSON.parse(encoded.slice(2)) as [string[], object];
  return {
    stateJsonBytes: Buffer.byteLength(JSON.stringify(stored.state)),
    storedBytes: compressState(stored.state).length,
    stateJsonByPart: jsonByPart(stored.state),
    storedByPart: jsonByPart({ ...parts, names }),
    codecMicros: codecTimes(stored.state, encoded),
    holders,
  };
}

/** Median µs of encodeState, decodeState, compressState and decompressState on one state, over a few hundred runs after a warm-up. */
function codecTimes(state: BreakerSessionState, encoded: string): { encode: number; decode: number; compress: number; decompress: number } {
  const runs = 300;
  const time = (work: () => unknown): number => {
    for (let i = 0; i < 50; i++) work();
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = process.hrtime.bigint();
      work();
      samples.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    return samples.sort((a, b) => a - b)[runs >> 1]!;
  };
  const compressed = compressState(state);
  return {
    encode: time(() => encodeState(state)),
    decode: time(() => decodeState(encoded)),
    compress: time(() => compressState(state)),
    decompress: time(() => decompressState(compressed)),
  };
}

/** Bytes of each top-level part of a state as JSON, largest first. */
function jsonByPart(state: object): Record<string, number> {
  const parts = Object.entries(state).map(([key, value]) => [key, Buffer.byteLength(JSON.stringify(value) ?? '')] as const);
  return Object.fromEntries(parts.sort((a, b) => b[1] - a[1]));
}

/**
 * Bytes of live JavaScript data after a full GC. Code spaces are left out:
 * the optimised code of the breaker's closures is freed with the breaker and
 * grows with how long the JIT has watched it, not with what sessions keep.
 * The event loop turns between the collections: node:test maps every
 * promise a test creates to its test until the promise's destroy hook has
 * run, which happens from the event loop after the GC that collected it;
 * counted or not, that map moved a test's small run by up to 1.6 MB.
 */
async function dataHeapBytes(): Promise<number> {
  gc();
  await setImmediate();
  gc();
  gc();
  let bytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (!/code|trusted|read_only|shared/.test(space.space_name)) bytes += space.space_used_size;
  }
  return bytes;
}

/** Sessions to run for one cell: enough events for stable percentiles, enough sessions for a heap figure. */
function sessionsFor(sessionEvents: number, eventsPerCell: number, minSessions: number, maxSessions: number): number {
  return Math.min(maxSessions, Math.max(minSessions, Math.ceil(eventsPerCell / sessionEvents)));
}

// ------------------------------------------------------------------ Redis

/** A Redis server to measure against, or why there is none. */
type RedisTarget = { readonly url: string; readonly started: boolean } | { readonly skipped: string };

/**
 * Pings Redis at `url`; when it does not answer and `start` is set, runs
 * scripts/test-services.ts (which starts the local test Redis, and the test
 * PostgreSQL with it) and pings again.
 */
async function prepareRedis(url: string, start: boolean): Promise<RedisTarget> {
  const first = await pingRedis(url, 1000);
  if (first === undefined) return { url, started: false };
  const where = redactUrl(url);
  if (!start) return { skipped: `no Redis server at ${where} (${first})` };
  const script = path.join(repoRoot, 'scripts', 'test-services.ts');
  const run = spawnSync(process.execPath, [script], { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 });
  const second = await pingRedis(url, 1000);
  if (second === undefined) return { url, started: true };
  const output = `${run.stdout ?? ''}\n${run.stderr ?? ''}\n${run.error?.message ?? ''}`;
  const redisLine = output.split('\n').find((l) => l.startsWith('redis')) ?? output.trim().split('\n').at(-1) ?? 'no output';
  return { skipped: `no Redis server at ${where} (${second}); scripts/test-services.ts could not start one: ${redisLine.trim()}` };
}

/** Figures for one session length × argument size through RedisBreakerStore. */
interface RedisCell {
  readonly sessionEvents: number;
  readonly argBytes: number;
  readonly checkFreshnessMs: number;
  readonly sessions: number;
  readonly events: number;
  readonly roundTrips: number;
  readonly roundTripsPerEvent: number;
  /**
   * Round trips per event after each session's first step: that step must
   * read a session this process has not seen yet (one extra round trip per
   * session, not per event).
   */
  readonly roundTripsPerEventAfterFirst: number;
  /** Mean round trips per step of each kind (a model round and a tool call include their check). */
  readonly roundTripsByKind: Readonly<Record<StepKind, number>>;
  readonly byCommand: Readonly<Record<string, number>>;
  readonly perEvent: Summary;
  /** checkModelCall + observe(model) through Redis. */
  readonly modelRound: Summary;
  readonly trips: Readonly<Record<string, number>>;
}

/** Many sessions on Redis at once, more than a process keeps folded by default. */
interface RedisScaleCell {
  readonly sessions: number;
  readonly sessionEvents: number;
  readonly argBytes: number;
  /** The store's default cacheSessions. */
  readonly cached: number;
  /** Every event, the sessions taking turns 10 events at a time, default store. */
  readonly rotating: Summary;
  /** Heap this process retains per session, default store (bytes, after GC). */
  readonly heapBytesPerSession: number;
  /** The same with every session kept (cacheSessions ≥ sessions). */
  readonly allCached: Summary;
  readonly allCachedHeapBytesPerSession: number;
}

/** The Redis at-scale row's default size. */
export const DEFAULT_REDIS_SCALE = { sessions: 600, events: 100 } as const;

/** Redis figures: one cell per session length × argument size, plus a variant with checks that always read. */
type RedisSection =
  | {
      readonly url: string;
      readonly started: boolean;
      /** A bare PING through the same client: the floor under every store round trip (µs). */
      readonly ping: Summary;
      readonly cells: readonly RedisCell[];
      readonly readingChecks: RedisCell | undefined;
      readonly scale?: RedisScaleCell;
    }
  | { readonly skipped: string };

async function measureRedis(
  url: string,
  cells: readonly { sessionEvents: number; argBytes: number; sessions: number; checkFreshnessMs?: number }[],
): Promise<{ ping: Summary; cells: RedisCell[] }> {
  const { createClient } = await import('redis');
  // The PINGs go as the store sends its commands: without a timer of node-redis's own per command.
  const client = createClient({ url, commandOptions: { timeout: 0 } });
  client.on('error', () => {});
  await client.connect();
  const pings = new Samples();
  for (let i = 0; i < 3_000; i++) {
    const start = process.hrtime.bigint();
    await client.sendCommand(['PING']);
    if (i >= 500) pings.push(elapsedMicros(start));
  }
  let roundTrips = 0;
  const byCommand: Record<string, number> = {};
  const counting: RedisCommandClient = {
    sendCommand(args, options) {
      roundTrips++;
      const name = String(args[0]).toUpperCase();
      byCommand[name] = (byCommand[name] ?? 0) + 1;
      return client.sendCommand(args, options);
    },
    // As the client itself: the store sends to a ready client without an abort signal.
    get isReady() {
      return client.isReady;
    },
  };
  const prefix = `governor:bench:${process.pid}:${Date.now()}:`;
  const out: RedisCell[] = [];
  try {
    for (const [c, cell] of cells.entries()) {
      const options = allDetectorsOn(new RedisBreakerStore({ client: counting, keyPrefix: `${prefix}${c}:` }), false);
      const breaker = new AgentBreaker(cell.checkFreshnessMs === undefined ? options : { ...options, checkFreshnessMs: cell.checkFreshnessMs });
      const shape = { argBytes: cell.argBytes };
      // Loads the Lua script into Redis and warms the connection, outside the count.
      await runSessions(breaker, 'warm-', 3, 50, shape, new StepRecorder());
      roundTrips = 0;
      for (const key of Object.keys(byCommand)) delete byCommand[key];
      const recorder = new StepRecorder();
      await runSessions(breaker, 's-', cell.sessions, cell.sessionEvents, shape, recorder, () => roundTrips);
      const events = recorder.all.size;
      const perKind = Object.fromEntries(
        STEP_KINDS.map((k) => [k, recorder.byKind[k].size === 0 ? 0 : recorder.roundTripsByKind[k] / recorder.byKind[k].size]),
      ) as Record<StepKind, number>;
      out.push({
        sessionEvents: cell.sessionEvents,
        argBytes: cell.argBytes,
        checkFreshnessMs: breaker.options.checkFreshnessMs,
        sessions: cell.sessions,
        events,
        roundTrips,
        roundTripsPerEvent: roundTrips / events,
        roundTripsPerEventAfterFirst: events > cell.sessions ? (roundTrips - recorder.firstStepRoundTrips) / (events - cell.sessions) : Number.NaN,
        roundTripsByKind: perKind,
        byCommand: { ...byCommand },
        perEvent: recorder.all.summary(),
        modelRound: recorder.byKind.model.summary(),
        trips: { ...recorder.trips },
      });
    }
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
    await client.close();
  }
  return { ping: pings.summary(), cells: out };
}

/**
 * The at-scale row through Redis: `sessions` sessions taking turns 10 events
 * at a time, through a store of default options and through one that keeps
 * every session. Its own client; deletes every key it wrote. Run it after
 * anything timed in the same process: its many sessions leave the heap in a
 * state that slows what comes after.
 */
export async function measureRedisScale(
  url: string,
  scale: { readonly sessions: number; readonly events: number },
  progress: (what: string) => void,
): Promise<RedisScaleCell> {
  progress(`Redis at scale: ${scale.sessions} sessions of ${scale.events} events taking turns, arguments 1024 B`);
  const { createClient } = await import('redis');
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  const prefix = `governor:bench:${process.pid}:${Date.now()}:scale:`;
  try {
    const shape = { argBytes: 1024 };
    const byDefault = new RedisBreakerStore({ client, keyPrefix: `${prefix}default:` });
    const rotating = await measureRotating(scale.sessions, scale.events, shape, byDefault);
    const everyone = new RedisBreakerStore({ client, keyPrefix: `${prefix}all:`, cacheSessions: scale.sessions });
    const allCached = await measureRotating(scale.sessions, scale.events, shape, everyone);
    return {
      sessions: scale.sessions,
      sessionEvents: scale.events,
      argBytes: shape.argBytes,
      cached: Math.min(scale.sessions, byDefault.cacheSessions),
      rotating: rotating.perEvent,
      heapBytesPerSession: rotating.heapBytesPerSession,
      allCached: allCached.perEvent,
      allCachedHeapBytesPerSession: allCached.heapBytesPerSession,
    };
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
    await client.close();
  }
}

// -------------------------------------------------------------- ChatClient

/** One way of making a model call, and what it costs per call. */
interface ChatVariant {
  readonly name: string;
  readonly description: string;
  readonly perCall: Summary;
  /** Median and p99 minus the bare doGenerate's (µs). */
  readonly overheadMedian: number;
  readonly overheadP99: number;
  /** Calls that threw (a breaker trip would). */
  readonly errors: number;
}

interface ChatClientFigures {
  /** Timed calls per variant. */
  readonly calls: number;
  /** Calls per conversation before the next one starts. */
  readonly callsPerConversation: number;
  readonly variants: readonly ChatVariant[];
  /** What the AgentBreaker adds to a call inside the chain: median with it minus median without (µs). */
  readonly breakerInChainMedian: number;
  readonly breakerInChainP99: number;
}

const REPLY_WORDS = words(prng(7), 4096).split(' ');

/**
 * A different answer each call, as a real conversation has: a model that
 * gave the same answer to the same question over and over would be a loop,
 * which the breaker rightly stops.
 */
function replyText(call: number): string {
  const start = (call * 13) % (REPLY_WORDS.length - 20);
  return `Your order ships from the Lyon warehouse: ${REPLY_WORDS.slice(start, start + 16).join(' ')}.`;
}

/** What the mock model returns: a short answer, no tool call, realistic usage. A new object per call, as a provider would make. */
function mockResult(call: number): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'text', text: replyText(call) }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 1200, noCache: 1200, cacheRead: 0, cacheWrite: undefined },
      outputTokens: { total: 28, text: 28, reasoning: undefined },
    },
    warnings: [],
  };
}

async function measureChatClient(calls: number, warmupCalls: number, batch: number): Promise<ChatClientFigures> {
  let call = 0;
  const model = new MockLanguageModelV4({ doGenerate: async () => mockResult(call++) });
  const lookupOrder = tool({
    description: 'Looks up an order by id.',
    inputSchema: z.object({ orderId: z.string(), fields: z.array(z.string()).optional() }),
    execute: async ({ orderId }) => `order ${orderId}: shipped`,
  });
  const system = 'You are a support agent for an online shop. Answer briefly and look orders up when asked.';
  const client = (...advisors: Advisor[]): ChatClient =>
    ChatClient.builder(model)
      .defaultSystem(system)
      .defaultTools({ lookup_order: lookupOrder })
      .defaultAdvisors(...advisors)
      .build();
  const breaker = (): AgentBreaker => new AgentBreaker(allDetectorsOn(undefined, true));
  const memory = (): MessageChatMemoryAdvisor =>
    new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository(), maxMessages: 20 }) });
  const callsPerConversation = 20;
  const userText = (i: number): string => `Where is my order ${1000 + (i % 97)}? It was due on day ${i % 28}.`;

  // The bare call gets exactly the options the ChatClient sends (prompt and tool definitions already converted).
  await client().prompt(userText(0)).call().chatResponse();
  const bareOptions: LanguageModelV4CallOptions | undefined = model.doGenerateCalls[0];
  if (bareOptions === undefined) throw new Error('the mock model was not called');

  const variants: { name: string; description: string; run: (i: number) => PromiseLike<unknown> }[] = [
    { name: 'bare doGenerate', description: 'model.doGenerate(options), options prepared once', run: () => model.doGenerate(bareOptions) },
    { name: 'ChatClient', description: 'no advisors: prompt and tools converted per call', run: viaClient(client()) },
    { name: '+ ToolCallAdvisor', description: 'the tool loop (one round: the model calls no tool)', run: viaClient(client(new ToolCallAdvisor())) },
    {
      name: '+ AgentBreaker',
      description: 'ToolCallAdvisor + AgentBreaker, every detector on (user turn, gate, observe)',
      run: viaClient(client(new ToolCallAdvisor(), breaker())),
    },
    {
      name: '+ AgentBreaker, telemetry off',
      description: 'the same, breaker option telemetry: false',
      run: viaClient(client(new ToolCallAdvisor(), new AgentBreaker(allDetectorsOn(undefined, false)))),
    },
    {
      name: '+ chat memory',
      description: 'ToolCallAdvisor + AgentBreaker + MessageChatMemoryAdvisor (20-message window, in-memory repository)',
      run: viaClient(client(new ToolCallAdvisor(), breaker(), memory())),
    },
  ];

  function viaClient(c: ChatClient): (i: number) => Promise<unknown> {
    return (i) =>
      c
        .prompt(userText(i))
        .advisors((a) => a.param(CONVERSATION_ID, `conversation-${Math.floor(i / callsPerConversation)}`))
        .call()
        .chatResponse();
  }

  const counters = variants.map(() => 0);
  const errors = variants.map(() => 0);
  const samples = variants.map(() => new Samples());
  const runBatch = async (v: number, size: number, record: boolean): Promise<void> => {
    const variant = variants[v]!;
    for (let k = 0; k < size; k++) {
      const i = counters[v]!++;
      const start = process.hrtime.bigint();
      try {
        await variant.run(i);
      } catch {
        errors[v]!++;
      }
      if (record) samples[v]!.push(elapsedMicros(start));
    }
    // The mock records every call; keep that from growing the heap.
    model.doGenerateCalls.length = 0;
  };
  for (let v = 0; v < variants.length; v++) await runBatch(v, warmupCalls, false);
  for (let v = 0; v < variants.length; v++) errors[v] = 0;
  // Interleaved batches, so that a slow phase of the machine hits every variant alike.
  for (let done = 0; done < calls; done += batch) {
    for (let v = 0; v < variants.length; v++) await runBatch(v, Math.min(batch, calls - done), true);
  }
  const summaries = samples.map((s) => s.summary());
  const bare = summaries[0]!;
  const out: ChatVariant[] = variants.map((variant, v) => ({
    name: variant.name,
    description: variant.description,
    perCall: summaries[v]!,
    overheadMedian: summaries[v]!.median - bare.median,
    overheadP99: summaries[v]!.p99 - bare.p99,
    errors: errors[v]!,
  }));
  const withoutBreaker = summaries[2]!;
  const withBreaker = summaries[3]!;
  return {
    calls,
    callsPerConversation,
    variants: out,
    breakerInChainMedian: withBreaker.median - withoutBreaker.median,
    breakerInChainP99: withBreaker.p99 - withoutBreaker.p99,
  };
}

// ------------------------------------------------------------------ report

/** One goal, the figure that checks it, and whether it is met (undefined: not measured in this run). */
interface GoalCheck {
  readonly goal: string;
  readonly figure: string;
  readonly measured: string;
  readonly met: boolean | undefined;
}

/** What the benchmark ran with. */
interface OverheadSettings {
  readonly sessionLengths: readonly number[];
  readonly argBytes: readonly number[];
  readonly eventsPerCell: number;
  readonly minSessions: number;
  readonly longTexts: boolean;
  readonly redisEventsPerCell: number;
  readonly chatCalls: number;
}

/** The whole overhead benchmark. */
export interface OverheadReport {
  readonly machine: MachineInfo;
  readonly settings: OverheadSettings;
  readonly breaker: readonly BreakerCell[];
  /** Many sessions at once, more than the in-memory store keeps decoded (absent when not run). */
  readonly scale?: ScaleCell;
  readonly redis: RedisSection;
  readonly chatClient: ChatClientFigures;
  readonly goals: readonly GoalCheck[];
  /** Non-allow decisions over every productive session of the run. */
  readonly trips: number;
  readonly durationSeconds: number;
}

/** Options of {@link runOverheadBenchmark}; the defaults are the full benchmark (about a minute or two). */
export interface OverheadBenchmarkOptions {
  /** Events per session. @default [10, 1000, 10000] */
  readonly sessionLengths?: readonly number[];
  /** Size of each tool call's arguments as JSON (bytes). @default [100, 1024, 8192] */
  readonly argBytes?: readonly number[];
  /** Timed events per cell of the in-memory matrix (sessions = this / length, within the bounds below). @default 40_000 */
  readonly eventsPerCell?: number;
  /** Fewest sessions per cell, for the heap figure. @default 10 */
  readonly minSessions?: number;
  /** Add a row with the longest sessions, the largest arguments and 4 KB replies and tool results. @default true */
  readonly longTexts?: boolean;
  /** Warm-up: sessions per shape and events per session before timing. @default { sessions: 20, events: 300 } */
  readonly warmUp?: { readonly sessions: number; readonly events: number };
  /** Redis to measure against; `false` skips the Redis rows. @default testRedisUrl() */
  readonly redisUrl?: string | false;
  /** When Redis does not answer, try to start it with scripts/test-services.ts. @default true */
  readonly startRedis?: boolean;
  /** Timed events per cell through Redis. @default 6_000 */
  readonly redisEventsPerCell?: number;
  /** Timed ChatClient calls per variant. @default 10_000 */
  readonly chatCalls?: number;
  /** Untimed ChatClient calls per variant first. @default 2_000 */
  readonly chatWarmupCalls?: number;
  /**
   * The at-scale row (1 KB arguments): sessions and events per session, and how long the at-rest run's sessions rest
   * before its heap figure (its store's decodedIdleMs; the store's default is 10 s); false skips it.
   * @default { sessions: 1_000, events: 1_000, restMs: 1_000 }
   */
  readonly scale?: { readonly sessions: number; readonly events: number; readonly restMs?: number } | false;
  /** The at-scale row through Redis (1 KB arguments), measured last (see measureRedisScale); false skips it. @default { sessions: 600, events: 100 } */
  readonly redisScale?: { readonly sessions: number; readonly events: number } | false;
  /** Told what is being measured, for a progress line. */
  readonly onProgress?: (what: string) => void;
}

export async function runOverheadBenchmark(options: OverheadBenchmarkOptions = {}): Promise<OverheadReport> {
  const started = process.hrtime.bigint();
  const progress = options.onProgress ?? (() => {});
  const sessionLengths = [...(options.sessionLengths ?? [10, 1000, 10_000])].sort((a, b) => a - b);
  const argSizes = [...(options.argBytes ?? [100, 1024, 8192])].sort((a, b) => a - b);
  const eventsPerCell = options.eventsPerCell ?? 40_000;
  const minSessions = options.minSessions ?? 10;
  const longTexts = options.longTexts ?? true;
  const redisEventsPerCell = options.redisEventsPerCell ?? 6_000;
  const chatCalls = options.chatCalls ?? 10_000;
  const warm = options.warmUp ?? { sessions: 20, events: 300 };
  const longest = sessionLengths.at(-1);
  const largest = argSizes.at(-1);

  const shapes: { sessionEvents: number; shape: SessionShape }[] = [];
  for (const sessionEvents of sessionLengths) for (const argBytes of argSizes) shapes.push({ sessionEvents, shape: { argBytes } });
  if (longTexts && longest !== undefined && largest !== undefined) {
    shapes.push({ sessionEvents: longest, shape: { argBytes: largest, textBytes: 4096, resultBytes: 4096 } });
  }

  progress('warming up');
  await warmUp(
    shapes.map((s) => s.shape),
    warm.sessions,
    warm.events,
  );
  const breaker: BreakerCell[] = [];
  for (const { sessionEvents, shape } of shapes) {
    const sessions = sessionsFor(sessionEvents, eventsPerCell, minSessions, 5_000);
    progress(`breaker, in memory: ${sessions} sessions of ${sessionEvents} events, arguments ${shape.argBytes} B`);
    const heapByPart = sessionEvents === longest && shape.textBytes === undefined;
    breaker.push(await measureCell(sessionEvents, shape, sessions, heapByPart));
  }

  const scaleRow = options.scale ?? { sessions: 1_000, events: 1_000 };
  let scale: ScaleCell | undefined;
  if (scaleRow !== false) {
    progress(`breaker, in memory at scale: ${scaleRow.sessions} sessions of ${scaleRow.events} events taking turns, arguments 1024 B`);
    scale = await measureScale(scaleRow.sessions, scaleRow.events, 1024, scaleRow.restMs ?? 1_000);
  }

  let redis: RedisSection;
  let redisUrl: string | undefined;
  if (options.redisUrl === false) {
    redis = { skipped: 'not requested (redisUrl: false)' };
  } else {
    progress('Redis: checking the server (starting it with scripts/test-services.ts if it does not answer)');
    const target = await prepareRedis(options.redisUrl ?? testRedisUrl(), options.startRedis ?? true);
    if ('skipped' in target) {
      redis = target;
    } else {
      const cells = [];
      for (const sessionEvents of sessionLengths) {
        for (const argBytes of argSizes) {
          cells.push({ sessionEvents, argBytes, sessions: sessionsFor(sessionEvents, redisEventsPerCell, 1, 2_000) });
        }
      }
      const middle = sessionLengths[Math.floor(sessionLengths.length / 2)]!;
      const midArgs = argSizes[Math.floor(argSizes.length / 2)]!;
      const reading = { sessionEvents: middle, argBytes: midArgs, sessions: sessionsFor(middle, redisEventsPerCell, 1, 2_000), checkFreshnessMs: 0 };
      progress(`Redis: ${cells.length + 1} cells at ${redactUrl(target.url)}`);
      const measured = await measureRedis(target.url, [...cells, reading]);
      redisUrl = target.url;
      redis = {
        url: redactUrl(target.url),
        started: target.started,
        ping: measured.ping,
        cells: measured.cells.slice(0, -1),
        readingChecks: measured.cells.at(-1),
      };
    }
  }

  progress(`ChatClient: ${chatCalls} calls per variant`);
  const chatClient = await measureChatClient(chatCalls, options.chatWarmupCalls ?? 2_000, Math.max(1, Math.min(500, Math.ceil(chatCalls / 10))));

  // Last: see measureRedisScale.
  const redisScale = options.redisScale ?? DEFAULT_REDIS_SCALE;
  if ('cells' in redis && redisUrl !== undefined && redisScale !== false) {
    redis = { ...redis, scale: await measureRedisScale(redisUrl, redisScale, progress) };
  }

  const trips =
    breaker.reduce((n, c) => n + countTrips(c.trips), 0) +
    ('cells' in redis ? redis.cells.reduce((n, c) => n + countTrips(c.trips), 0) + countTrips(redis.readingChecks?.trips ?? {}) : 0) +
    chatClient.variants.reduce((n, v) => n + v.errors, 0);
  const settings: OverheadSettings = { sessionLengths, argBytes: argSizes, eventsPerCell, minSessions, longTexts, redisEventsPerCell, chatCalls };
  const partial = { machine: machineInfo(), settings, breaker, ...(scale === undefined ? {} : { scale }), redis, chatClient, trips };
  return { ...partial, goals: checkGoals(partial), durationSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function countTrips(trips: Readonly<Record<string, number>>): number {
  return Object.values(trips).reduce((a, b) => a + b, 0);
}

// ------------------------------------------------------------------ goals

/** A cell of the sessions × arguments matrix (not the stress row with long replies and results). */
function hasDefaultTexts(c: BreakerCell): boolean {
  return c.shape.textBytes === DEFAULT_TEXT_BYTES && c.shape.resultBytes === DEFAULT_RESULT_BYTES;
}

/** The item with the largest figure (the first of equals); undefined when there is none. */
function largest<T>(items: readonly T[], figure: (item: T) => number): T | undefined {
  let worst: T | undefined;
  for (const item of items) if (worst === undefined || figure(item) > figure(worst)) worst = item;
  return worst;
}

/** A cell's median model round. */
const modelRound = (c: BreakerCell): number => c.byKind.model.median;

/** Per argument size (main matrix only): heap per session at the two longest session lengths. */
interface MemoryGrowth {
  readonly argBytes: number;
  readonly shorter: BreakerCell;
  readonly longer: BreakerCell;
  /** longer / shorter − 1. */
  readonly growth: number;
  readonly bounded: boolean;
}

function memoryGrowth(report: Pick<OverheadReport, 'breaker' | 'settings'>): MemoryGrowth[] {
  const lengths = report.settings.sessionLengths;
  if (lengths.length < 2) return [];
  const [shorterLength, longerLength] = [lengths.at(-2)!, lengths.at(-1)!];
  const main = report.breaker.filter(hasDefaultTexts);
  const out: MemoryGrowth[] = [];
  for (const argBytes of report.settings.argBytes) {
    const shorter = main.find((c) => c.sessionEvents === shorterLength && c.shape.argBytes === argBytes);
    const longer = main.find((c) => c.sessionEvents === longerLength && c.shape.argBytes === argBytes);
    if (shorter === undefined || longer === undefined) continue;
    const growth = shorter.heapBytesPerSession > 0 ? longer.heapBytesPerSession / shorter.heapBytesPerSession - 1 : Number.POSITIVE_INFINITY;
    out.push({ argBytes, shorter, longer, growth, bounded: growth <= MEMORY_GROWTH_TOLERANCE });
  }
  return out;
}

function checkGoals(report: Omit<OverheadReport, 'goals' | 'durationSeconds'>): GoalCheck[] {
  const goals: GoalCheck[] = [];
  const matrix = report.breaker.filter(hasDefaultTexts);
  const worst = largest(matrix, modelRound);
  goals.push({
    goal: `under ${GOAL_MODEL_CALL_MICROS} µs per model call in memory, every detector on`,
    figure: 'median model round (checkModelCall + observe), worst cell of the sessions × arguments matrix',
    measured: worst === undefined ? 'not measured' : `${fmt(worst.byKind.model.median)} µs (${cellLabel(worst)})`,
    met: worst === undefined ? undefined : worst.byKind.model.median < GOAL_MODEL_CALL_MICROS,
  });
  const stress = largest(
    report.breaker.filter((c) => !hasDefaultTexts(c)),
    modelRound,
  );
  if (stress !== undefined) {
    goals.push({
      goal: `under ${GOAL_MODEL_CALL_MICROS} µs per model call in memory, every detector on`,
      figure: `the same with ${size(stress.shape.textBytes)} replies and ${size(stress.shape.resultBytes)} tool results (stress row, beyond the matrix)`,
      measured: `${fmt(stress.byKind.model.median)} µs (${cellLabel(stress)})`,
      met: stress.byKind.model.median < GOAL_MODEL_CALL_MICROS,
    });
  }
  // Any step kind counts, not only model rounds: a session pays for every event it observes.
  const slowest = largest(
    matrix.filter((c) => c.shape.argBytes === 1024),
    (c) => c.perEvent.median,
  );
  goals.push({
    goal: `≤ ${GOAL_EVENT_MICROS} µs per event in memory, every detector on`,
    figure: 'median event (any step kind), worst session length with 1 KB arguments',
    measured: slowest === undefined ? 'not measured' : `${fmt(slowest.perEvent.median)} µs (${cellLabel(slowest)})`,
    met: slowest === undefined ? undefined : slowest.perEvent.median <= GOAL_EVENT_MICROS,
  });
  const chat = report.chatClient;
  goals.push({
    goal: `under ${GOAL_MODEL_CALL_MICROS} µs per model call in memory, every detector on`,
    figure: 'AgentBreaker inside a ChatClient: median per call with it − without it',
    measured: `${fmt(chat.breakerInChainMedian)} µs`,
    met: chat.breakerInChainMedian < GOAL_MODEL_CALL_MICROS,
  });
  const growth = memoryGrowth(report);
  const lengths = report.settings.sessionLengths;
  const worstGrowth = largest(growth, (g) => g.growth);
  goals.push({
    goal: 'memory per session bounded by the windows',
    figure:
      lengths.length < 2
        ? 'heap per session at two session lengths'
        : `heap per session, ${count(lengths.at(-2)!)} → ${count(lengths.at(-1)!)} events, worst argument size (bounded: ≤ +${MEMORY_GROWTH_TOLERANCE * 100}%)`,
    measured: worstGrowth === undefined ? 'not measured' : `${signedPercent(worstGrowth.growth)} (${size(worstGrowth.argBytes)} arguments)`,
    met: worstGrowth === undefined ? undefined : growth.every((g) => g.bounded),
  });
  const sc = report.scale;
  if (sc !== undefined) {
    goals.push({
      goal: `≤ ${GOAL_SESSION_KB} KB per session after ${count(sc.sessionEvents)} events, in memory`,
      figure: `heap per session at rest: default store, every session idle for decodedIdleMs (${count(sc.restMs)} ms), ${size(sc.argBytes)} arguments`,
      measured: `${kb(sc.atRestHeapBytesPerSession)} (${count(sc.atRestSessions)} sessions)`,
      met: sc.atRestHeapBytesPerSession <= GOAL_SESSION_KB * 1024,
    });
    goals.push({
      goal: `≤ ${GOAL_SESSION_KB} KB per session after ${count(sc.sessionEvents)} events, in memory`,
      figure: `heap per session in use, default store: the ${count(sc.decoded)} most recently used decoded, the rest compressed`,
      measured: `${kb(sc.heapBytesPerSession)} (${count(sc.sessions)} sessions; compressed ${kb(sc.allEncodedHeapBytesPerSession)})`,
      met: sc.heapBytesPerSession <= GOAL_SESSION_KB * 1024,
    });
  }
  const storedCell = matrix.find((c) => c.sessionEvents === 1_000 && c.shape.argBytes === 1024);
  if (storedCell !== undefined) {
    goals.push({
      goal: `≤ ${GOAL_SESSION_KB} KB per session after 1,000 events, stored`,
      figure: 'the state as compressState writes it, 1 KB arguments (Redis adds its log: see Stored per session)',
      measured: kb(storedCell.storedBytes),
      met: storedCell.storedBytes <= GOAL_SESSION_KB * 1024,
    });
  }
  if ('cells' in report.redis && report.redis.cells.length > 0) {
    const worstTrips = Math.max(...report.redis.cells.map((c) => c.roundTripsPerEventAfterFirst));
    const worstAll = Math.max(...report.redis.cells.map((c) => c.roundTripsPerEvent));
    goals.push({
      goal: `${GOAL_ROUND_TRIPS_PER_EVENT} Redis round trip per event`,
      figure: "round trips per event after each session's first step, worst cell (first step: +1 read per new session)",
      measured: `${worstTrips.toFixed(3)} (with first steps: ${worstAll.toFixed(3)})`,
      met: worstTrips <= GOAL_ROUND_TRIPS_PER_EVENT + 1e-9,
    });
  } else {
    goals.push({
      goal: `${GOAL_ROUND_TRIPS_PER_EVENT} Redis round trip per event`,
      figure: 'round trips per event through RedisBreakerStore',
      measured: `skipped: ${'skipped' in report.redis ? report.redis.skipped : 'no cells'}`,
      met: undefined,
    });
  }
  return goals;
}

// ------------------------------------------------------------- formatting

/** Right-aligned text table, first column left-aligned. */
function table(header: readonly string[], rows: readonly (readonly string[])[], leftColumns = 1): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(header.map((_, i) => '-'.repeat(widths[i] ?? 0))), ...rows.map(line)];
}

function fmt(micros: number): string {
  if (!Number.isFinite(micros)) return '-';
  return Math.abs(micros) >= 100 ? micros.toFixed(0) : micros.toFixed(1);
}

function signed(micros: number): string {
  return Number.isFinite(micros) ? `${micros >= 0 ? '+' : ''}${fmt(micros)}` : '-';
}

function signedPercent(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)}%` : 'unbounded';
}

/** An integer with thousands separators. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

function size(bytes: number): string {
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${count(bytes)} B`;
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function verdict(met: boolean | undefined): string {
  return met === undefined ? 'n/a' : met ? 'yes' : 'NO';
}

function cellLabel(c: BreakerCell): string {
  const texts = hasDefaultTexts(c) ? '' : `, ${size(c.shape.textBytes)} replies and results`;
  return `${count(c.sessionEvents)} events, ${size(c.shape.argBytes)} arguments${texts}`;
}

function textsCell(c: BreakerCell): string {
  return `${size(c.shape.textBytes)} / ${size(c.shape.resultBytes)}`;
}

function tripsCell(trips: Readonly<Record<string, number>>): string {
  const entries = Object.entries(trips);
  return entries.length === 0 ? '0' : entries.map(([k, n]) => `${n} ${k}`).join(', ');
}

function commands(cells: readonly RedisCell[]): string {
  const total: Record<string, number> = {};
  for (const c of cells) for (const [name, n] of Object.entries(c.byCommand)) total[name] = (total[name] ?? 0) + n;
  return Object.entries(total)
    .map(([name, n]) => `${name} ${count(n)}`)
    .join(', ');
}

function pair(s: Summary): string {
  return `${fmt(s.median)} / ${fmt(s.p99)}`;
}

function medianAndMean(s: Summary): string {
  return `${fmt(s.median)} / ${fmt(s.mean)}`;
}

/** The overhead figures as text: aligned tables, each naming the goal it checks. */
export function formatOverheadReport(report: OverheadReport): string {
  const m = report.machine;
  const s = report.settings;
  const lines: string[] = [
    'Overhead benchmark — agent-governor',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB · Node ${m.node} · ${m.os}`,
    `Run: ${report.durationSeconds.toFixed(0)} s; ≥ ${count(s.eventsPerCell)} timed events per in-memory cell, ` +
      `≥ ${count(s.redisEventsPerCell)} per Redis cell, ${count(s.chatCalls)} ChatClient calls per variant, after warm-up.`,
    'Times are per step, from process.hrtime.bigint(), in µs; p50 = median.',
    '',
  ];

  // 1. Cost per event.
  const modelGoal = (c: BreakerCell): string => verdict(c.byKind.model.median < GOAL_MODEL_CALL_MICROS);
  lines.push(
    `1. AgentBreaker, every detector on, in-memory store — cost per event (goal: model round under ${GOAL_MODEL_CALL_MICROS} µs, median)`,
    '',
    ...table(
      [
        'Session',
        'Args',
        'Reply / result',
        'Sessions',
        'Events',
        'event p50',
        'event p99',
        'model p50',
        'model p99',
        `< ${GOAL_MODEL_CALL_MICROS} µs`,
        'Trips',
        'loop turn p50 / mean',
      ],
      report.breaker.map((c) => [
        `${count(c.sessionEvents)} events`,
        size(c.shape.argBytes),
        textsCell(c),
        count(c.sessions),
        count(c.events),
        fmt(c.perEvent.median),
        fmt(c.perEvent.p99),
        fmt(c.byKind.model.median),
        fmt(c.byKind.model.p99),
        modelGoal(c),
        tripsCell(c.trips),
        medianAndMean(c.turns),
      ]),
      2,
    ),
    '',
    "Args: each tool call's arguments as JSON. event: any step. model: a model round = checkModelCall + observe(model).",
    "loop turn: µs of the turn of the event loop after each session, as a server has between requests (work in no event's",
    `figure): the store keeps ${count(new InMemoryBreakerStore().decodedSessions)} sessions decoded and compresses there those new sessions push out, in`,
    'batches (sessions of 10 events: p50 a turn with nothing to compress, mean with the batches); the longer cells hold fewer',
    "sessions than that: theirs are bare turns, where V8's own pending work, such as garbage collection, runs too).",
    '',
    '2. Cost per step kind, µs, p50 / p99 (same runs)',
    '',
    ...table(
      ['Session', 'Args', 'Reply / result', ...STEP_KINDS.map((k) => KIND_LABELS[k]), 'first 1k p50', 'last 1k p50'],
      report.breaker.map((c) => [
        `${count(c.sessionEvents)} events`,
        size(c.shape.argBytes),
        textsCell(c),
        ...STEP_KINDS.map((k) => pair(c.byKind[k])),
        c.first1000 === undefined ? '-' : fmt(c.first1000.median),
        c.last1000 === undefined ? '-' : fmt(c.last1000.median),
      ]),
      2,
    ),
    '',
    'tool call, sub-agent call: checkToolCall + observe(tool_call); the sub-agent tool is judged as a delegation.',
    'retrieval, delegation, user turn: observe. Per 10 steps: 2 model rounds, 4 tool calls, 1 of each other kind.',
    'first/last 1k: median of the first and the last 1,000 events of sessions of 2,000 events or more (cost must not grow).',
    '',
  );

  // 3. Memory.
  const growth = memoryGrowth(report);
  const lengths = s.sessionLengths;
  const main = report.breaker.filter(hasDefaultTexts);
  lines.push(
    `3. Memory per session (goal: bounded by the windows — heap at the longest sessions ≤ +${MEMORY_GROWTH_TOLERANCE * 100}% of the next shorter)`,
    '',
  );
  lines.push(
    ...table(
      [
        'Args',
        ...lengths.map((n) => `heap @ ${count(n)}`),
        ...lengths.map((n) => `stored @ ${count(n)}`),
        ...lengths.map((n) => `JSON @ ${count(n)}`),
        'growth',
        'bounded',
      ],
      s.argBytes.map((argBytes) => {
        const cells = lengths.map((n) => main.find((c) => c.sessionEvents === n && c.shape.argBytes === argBytes));
        const g = growth.find((x) => x.argBytes === argBytes);
        return [
          size(argBytes),
          ...cells.map((c) => (c === undefined ? '-' : kb(c.heapBytesPerSession))),
          ...cells.map((c) => (c === undefined ? '-' : kb(c.storedBytes))),
          ...cells.map((c) => (c === undefined ? '-' : kb(c.stateJsonBytes))),
          g === undefined ? '-' : signedPercent(g.growth),
          verdict(g?.bounded),
        ];
      }),
    ),
    '',
    'heap: retained heap per session: live data (code spaces left out) after GC, minus the same once the sessions are deleted',
    'from the store, divided by the sessions. Where a cell holds no more sessions than the store keeps decoded, every one is',
    'an object; where it holds more (the many short sessions), all but the most recently used are kept compressed.',
    "stored: one session's state as compressState writes it (the Redis snapshot; how the in-memory store keeps sessions beyond",
    'its decoded set). JSON: the same state as plain JSON, as older versions stored it.',
  );
  if (report.scale !== undefined) {
    const sc = report.scale;
    lines.push(
      '',
      `At scale: ${count(sc.sessions)} sessions of ${count(sc.sessionEvents)} events, ${size(sc.argBytes)} arguments, taking turns 10 events at a time;`,
      `the store (default options) keeps ${count(sc.decoded)} decoded, the other ${count(sc.sessions - sc.decoded)} compressed.`,
      ...table(
        ['store', 'heap/session', 'p50/event', 'p99/event', 'mean/event', 'loop turn p50 / mean'],
        [
          [
            `default (${count(sc.decoded)} decoded)`,
            kb(sc.heapBytesPerSession),
            fmt(sc.rotating.median),
            fmt(sc.rotating.p99),
            fmt(sc.rotating.mean),
            medianAndMean(sc.rotatingTurns),
          ],
          [`default, at rest (${count(sc.atRestSessions)} sessions)`, kb(sc.atRestHeapBytesPerSession), '-', '-', '-', '-'],
          [
            `every session decoded`,
            kb(sc.allDecodedHeapBytesPerSession),
            fmt(sc.allDecoded.median),
            fmt(sc.allDecoded.p99),
            fmt(sc.allDecoded.mean),
            medianAndMean(sc.allDecodedTurns),
          ],
          [
            `none decoded (${count(sc.allEncodedSessions)} sessions)`,
            kb(sc.allEncodedHeapBytesPerSession),
            fmt(sc.allEncoded.median),
            fmt(sc.allEncoded.p99),
            fmt(sc.allEncoded.mean),
            '-',
          ],
        ],
      ),
      'none decoded: decodedSessions 0, every operation decompresses its session and compresses it again (a check and an',
      'observe each: twice per event); its heap per session is what each session beyond the decoded set costs, so N sessions',
      'hold about min(N, decoded) × the decoded figure + the rest × this.',
      `at rest: default options but decodedIdleMs ${count(sc.restMs)} ms (10 s by default), heap once every session was idle that long`,
      'and the store compressed it.',
      'Turns of 10 events: a session not in the decoded set is decompressed at its first event of a turn, so with more sessions',
      'in use than the set holds, 1 event in 10 pays that. The sessions it pushes out of the set are compressed, in batches, when',
      "the event loop turns, as it does between the turns here (loop turn: µs of that turn, in no event's figure; every session",
      'decoded: the same turn with nothing to compress).',
    );
  }
  const partsCell = main.find((c) => c.sessionEvents === lengths.at(-1) && c.shape.argBytes === 1024);
  if (partsCell !== undefined) {
    const parts = (byPart: Readonly<Record<string, number>>) =>
      `${Object.entries(byPart)
        .filter(([, bytes]) => bytes >= 100)
        .map(([key, bytes]) => `${key} ${kb(bytes)}`)
        .join(', ')}; the rest under 0.1 KB each.`;
    lines.push(
      `By part of the state (${cellLabel(partsCell)}):`,
      `  heap: ${parts(partsCell.stateHeapByPart)}`,
      `  JSON: ${parts(partsCell.stateJsonByPart)}`,
      `  encoded (before compression): ${parts(partsCell.storedByPart)}`,
      `Encoding one such state (encodeState) takes ${fmt(partsCell.codecMicros.encode)} µs, decoding it ${fmt(partsCell.codecMicros.decode)} µs; compressing it`,
      `(compressState: encoding, then deflate) ${fmt(partsCell.codecMicros.compress)} µs, decompressing it ${fmt(partsCell.codecMicros.decompress)} µs (medians of 300):`,
      'what a session leaving the decoded set, or coming back, costs, and what each Redis snapshot costs its writer.',
    );
  }
  const longCell = report.breaker.find((c) => !main.includes(c));
  if (longCell !== undefined) {
    lines.push(
      `With ${size(longCell.shape.textBytes)} replies and results (${cellLabel(longCell)}): heap ${kb(longCell.heapBytesPerSession)}, ` +
        `state JSON ${kb(longCell.stateJsonBytes)} per session.`,
    );
  }
  lines.push('');

  // 4. Redis.
  lines.push(`4. RedisBreakerStore on a local Redis (goal: ${GOAL_ROUND_TRIPS_PER_EVENT} round trip per event)`, '');
  if ('skipped' in report.redis) {
    lines.push(`Skipped: ${report.redis.skipped}`, '');
  } else {
    const r = report.redis;
    const memory = (c: RedisCell): BreakerCell | undefined => main.find((b) => b.sessionEvents === c.sessionEvents && b.shape.argBytes === c.argBytes);
    const rows = [...r.cells, ...(r.readingChecks === undefined ? [] : [r.readingChecks])];
    lines.push(
      `Server: ${r.url}${r.started ? ' (started by this run with scripts/test-services.ts)' : ''}, no other writer. ` +
        `A bare PING through the same client: ${fmt(r.ping.median)} µs p50, ${fmt(r.ping.p99)} µs p99.`,
      '',
      ...table(
        [
          'Session',
          'Args',
          'Checks',
          'Sessions',
          'Events',
          'RT/event',
          'RT/event after 1st',
          'RT model',
          'RT tool',
          'RT other',
          'model p50',
          'model p99',
          'added p50',
          'added p99',
          'event p50',
          `≤ ${GOAL_ROUND_TRIPS_PER_EVENT} RT`,
        ],
        rows.map((c) => {
          const mem = memory(c);
          const other = (c.roundTripsByKind.retrieval + c.roundTripsByKind.delegation + c.roundTripsByKind.user) / 3;
          return [
            `${count(c.sessionEvents)} events`,
            size(c.argBytes),
            c.checkFreshnessMs === 0 ? 'always read' : `fresh ${count(c.checkFreshnessMs)} ms`,
            count(c.sessions),
            count(c.events),
            c.roundTripsPerEvent.toFixed(3),
            c.roundTripsPerEventAfterFirst.toFixed(3),
            c.roundTripsByKind.model.toFixed(2),
            c.roundTripsByKind.tool_call.toFixed(2),
            other.toFixed(2),
            fmt(c.modelRound.median),
            fmt(c.modelRound.p99),
            mem === undefined ? '-' : signed(c.modelRound.median - mem.byKind.model.median),
            mem === undefined ? '-' : signed(c.modelRound.p99 - mem.byKind.model.p99),
            fmt(c.perEvent.median),
            c.checkFreshnessMs === 0 ? 'n/a' : verdict(c.roundTripsPerEventAfterFirst <= GOAL_ROUND_TRIPS_PER_EVENT + 1e-9),
          ];
        }),
        3,
      ),
      '',
      'RT: Redis round trips (every command sent, counted by a wrapper around the client). RT/event after 1st: without each',
      "session's first step, which reads a session this process has not seen (one read per new session). RT model / tool /",
      'other: mean per model round (gate + observe), tool call (check + observe), and retrieval, delegation or user turn.',
      'added: model round through Redis minus the same cell in memory (table 1). Checks: "fresh" is the default',
      'checkFreshnessMs (checks trust a recent read or write); "always read" is checkFreshnessMs: 0, shown for comparison.',
      `Commands, default checks (all cells): ${commands(r.cells)}.`,
      ...(r.readingChecks === undefined ? [] : [`Commands, checks that always read: ${commands([r.readingChecks])}.`]),
      `Trips: ${tripsCell(Object.assign({}, ...rows.map((c) => c.trips)) as Record<string, number>)}.`,
      '',
    );
    const sc = r.scale;
    if (sc !== undefined) {
      lines.push(
        `At scale on Redis: ${count(sc.sessions)} sessions of ${count(sc.sessionEvents)} events, ${size(sc.argBytes)} arguments, taking turns 10 events at a time;`,
        `the store (default options) keeps ${count(sc.cached)} of them folded in this process.`,
        ...table(
          ['store', 'process heap/session', 'p50/event', 'p99/event', 'mean/event'],
          [
            [`default (${count(sc.cached)} kept)`, kb(sc.heapBytesPerSession), fmt(sc.rotating.median), fmt(sc.rotating.p99), fmt(sc.rotating.mean)],
            [
              `every session kept (cacheSessions ${count(sc.sessions)})`,
              kb(sc.allCachedHeapBytesPerSession),
              fmt(sc.allCached.median),
              fmt(sc.allCached.p99),
              fmt(sc.allCached.mean),
            ],
          ],
        ),
        'process heap: what this process retains per session (its cache), measured as in table 3; Redis holds the rest (see',
        'Stored per session). A session not kept is read again at its first event of a turn: its snapshot and the operations',
        'logged after it come with the append, and are decoded and folded, so with more sessions in use than the cache keeps,',
        '1 event in 10 pays that.',
        '',
      );
    }
  }

  // 5. ChatClient.
  const chat = report.chatClient;
  lines.push(
    `5. ChatClient + advisors vs a bare doGenerate on a mock model that answers at once — µs per call (goal: AgentBreaker in the chain under ${GOAL_MODEL_CALL_MICROS} µs per model call)`,
    '',
    ...table(
      ['Variant', 'p50', 'p99', 'overhead p50', 'overhead p99', 'Errors', 'What runs'],
      chat.variants.map((v) => [
        v.name,
        fmt(v.perCall.median),
        fmt(v.perCall.p99),
        signed(v.overheadMedian),
        signed(v.overheadP99),
        String(v.errors),
        v.description,
      ]),
      1,
    ),
    '',
    `AgentBreaker in the chain (+ AgentBreaker − + ToolCallAdvisor): ${signed(chat.breakerInChainMedian)} µs p50, ${signed(chat.breakerInChainP99)} µs p99 per call ` +
      `→ under ${GOAL_MODEL_CALL_MICROS} µs: ${verdict(chat.breakerInChainMedian < GOAL_MODEL_CALL_MICROS)}.`,
    `${count(chat.calls)} calls per variant in interleaved batches; a new conversation every ${chat.callsPerConversation} calls; one tool declared;`,
    'breaker telemetry at its default (on; no OpenTelemetry provider registered, so the API is a no-op), as is whatever',
    'tracing the ChatClient does without a provider. Each call is one user turn and one model round.',
    '',
  );

  // Goals.
  lines.push(
    'Goals',
    '',
    ...table(
      ['Goal', 'Checked by', 'Measured', 'Met'],
      report.goals.map((g) => [g.goal, g.figure, g.measured, verdict(g.met)]),
      3,
    ),
    '',
    report.trips === 0 ? 'No trip on any productive session.' : `TRIPS on productive sessions: ${report.trips} (see the Trips columns).`,
  );
  return lines.join('\n');
}
