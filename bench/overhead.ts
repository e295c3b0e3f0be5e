/**
 * Overhead benchmark: what the AgentBreaker costs per observed event and per
 * session, with every detector on, and how many Redis round trips a session
 * event takes with the Redis store.
 *
 * An "event" here is one step of an agent run as the breaker meets it: a model
 * round (gate + observe), a tool call (pre-execution check + observe of its
 * result), a retrieval, a sub-agent call or a user turn (observe). The
 * generated sessions are productive (new arguments, new results), so the
 * breaker does its full work on every event instead of short-circuiting on an
 * open breaker; any trip is reported.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import type { BreakerEvent } from '../src/breaker/breaker-event.ts';
import type { BreakerStore } from '../src/breaker/breaker-store.ts';
import { InMemoryBreakerStore } from '../src/breaker/in-memory-breaker-store.ts';
import { RedisBreakerStore, type RedisCommandClient } from '../src/redis/redis-breaker-store.ts';
import { pingRedis, testRedisUrl } from '../src/test-support/services.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Deterministic pseudo-random numbers, so every run measures the same sessions. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega config build deploy status report invoice order customer flight seat'.split(' ');

function words(rand: () => number, bytes: number): string {
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    const w = `${WORDS[Math.floor(rand() * WORDS.length)]}${Math.floor(rand() * 1000)}`;
    out.push(w);
    size += w.length + 1;
  }
  return out.join(' ').slice(0, bytes);
}

/** Length of the model's text per round, and of a tool result, unless a shape asks for longer ones. */
const DEFAULT_TEXT_BYTES = 300;
const DEFAULT_RESULT_BYTES = 200;

/** Sizes of the generated steps. */
export interface SessionShape {
  /** Tool-call `content` argument: a random length below this (bytes). */
  readonly maxArgBytes: number;
  /** Model replies: a random length below this; undefined: {@link DEFAULT_TEXT_BYTES} each. */
  readonly maxTextBytes?: number;
  /** Tool results: a random length below this; undefined: {@link DEFAULT_RESULT_BYTES} each. */
  readonly maxResultBytes?: number;
}

/** A length below `max`, or `fixed` when there is no maximum. */
function length(rand: () => number, max: number | undefined, fixed: number): number {
  return max === undefined ? fixed : Math.floor(rand() * max);
}

/** One step of a productive session: a model round, then tool calls, now and then other kinds. */
export function* sessionSteps(count: number, seed: number, shape: SessionShape): Generator<{ check?: 'model' | 'tool'; event: BreakerEvent }> {
  const rand = prng(seed);
  let prompt = 2000;
  for (let i = 0; i < count; i++) {
    const phase = i % 10;
    if (phase === 0 || phase === 4) {
      // Context grows slowly and is compacted now and then: no drift.
      prompt = i % 200 === 0 ? 2000 : prompt + Math.floor(rand() * 400);
      const text = words(rand, length(rand, shape.maxTextBytes, DEFAULT_TEXT_BYTES));
      yield { check: 'model', event: { kind: 'model', promptTokens: prompt, completionTokens: 200, text } };
    } else if (phase === 9) {
      yield { event: { kind: 'user', text: words(rand, 120) } };
    } else if (phase === 7) {
      yield { event: { kind: 'retrieval', query: words(rand, 80), results: [words(rand, 40), words(rand, 40)] } };
    } else if (phase === 8) {
      yield { event: { kind: 'delegation', agent: `agent${i % 3}`, input: words(rand, 200), output: words(rand, 400) } };
    } else {
      const argBytes = Math.floor(rand() * shape.maxArgBytes);
      yield {
        check: 'tool',
        event: {
          kind: 'tool_call',
          tool: ['read_file', 'search', 'update_record', 'run_tests'][i % 4] as string,
          args: { path: `src/module-${i}.ts`, query: words(rand, 40), content: words(rand, argBytes) },
          result: words(rand, length(rand, shape.maxResultBytes, DEFAULT_RESULT_BYTES)),
        },
      };
    }
  }
}

/**
 * Every detector on, defaults otherwise; only the token budget is lifted so
 * that 10,000-event sessions measure detection, not a session stopped for
 * its budget. Telemetry off: the no-op OpenTelemetry API is not what we measure.
 */
function benchOptions(store: BreakerStore): ConstructorParameters<typeof AgentBreaker>[0] {
  return { telemetry: false, store, budget: { maxTokens: Number.MAX_SAFE_INTEGER } };
}

/** The step kinds of a session, in the order the figures show them. */
const KINDS = ['model', 'tool_call', 'retrieval', 'delegation', 'user'] as const satisfies readonly BreakerEvent['kind'][];
type StepKind = (typeof KINDS)[number];

/** Time and count of the steps of one kind. */
interface KindTally {
  steps: number;
  elapsedNs: bigint;
}

function emptyTallies(): Record<StepKind, KindTally> {
  return Object.fromEntries(KINDS.map((k) => [k, { steps: 0, elapsedNs: 0n }])) as Record<StepKind, KindTally>;
}

function addTallies(into: Record<StepKind, KindTally>, from: Readonly<Record<StepKind, KindTally>>): void {
  for (const k of KINDS) {
    into[k].steps += from[k].steps;
    into[k].elapsedNs += from[k].elapsedNs;
  }
}

interface RunFigures {
  events: number;
  trips: number;
  elapsedNs: bigint;
  byKind: Record<StepKind, KindTally>;
}

async function runSession(breaker: AgentBreaker, sessionId: string, steps: Iterable<{ check?: 'model' | 'tool'; event: BreakerEvent }>): Promise<RunFigures> {
  let events = 0;
  let trips = 0;
  let elapsed = 0n;
  const byKind = emptyTallies();
  for (const { check, event } of steps) {
    const start = process.hrtime.bigint();
    let decision;
    if (check === 'model') decision = await breaker.checkModelCall(sessionId);
    else if (check === 'tool' && event.kind === 'tool_call') decision = await breaker.checkToolCall(sessionId, { tool: event.tool, args: event.args });
    if (decision === undefined || decision.action === 'allow') decision = await breaker.observe(sessionId, event);
    const took = process.hrtime.bigint() - start;
    elapsed += took;
    byKind[event.kind].steps++;
    byKind[event.kind].elapsedNs += took;
    events++;
    if (decision.action !== 'allow') trips++;
  }
  return { events, trips, elapsedNs: elapsed, byKind };
}

/** Figures for one session shape. */
export interface OverheadRow {
  readonly sessionEvents: number;
  readonly shape: SessionShape;
  readonly sessions: number;
  /** Mean cost per event (check + observe), µs. */
  readonly microsPerEvent: number;
  /** For long sessions: mean cost per event over the last 1,000 events, µs. */
  readonly microsPerEventLast1000: number | undefined;
  /**
   * Mean cost per step of each kind, µs: a model round is checkModelCall +
   * observe(model), a tool call checkToolCall + observe(tool_call), the
   * other kinds observe alone.
   */
  readonly microsPerStepByKind: Readonly<Record<StepKind, number>>;
  /** Retained heap per session after the run (bytes). */
  readonly heapBytesPerSession: number;
  /** Size of the stored session state as JSON (bytes). */
  readonly stateJsonBytes: number;
  readonly trips: number;
}

async function measureShape(sessionEvents: number, shape: SessionShape, sessions: number): Promise<OverheadRow> {
  // Warm-up on separate sessions so JIT compilation is not billed to the figures.
  {
    const warm = new AgentBreaker(benchOptions(new InMemoryBreakerStore({ maxSessions: 100_000 })));
    for (let s = 0; s < 20; s++) await runSession(warm, `warm-${s}`, sessionSteps(Math.min(sessionEvents, 200), 1000 + s, shape));
  }
  let store: InMemoryBreakerStore | undefined = new InMemoryBreakerStore({ maxSessions: 100_000 });
  let breaker: AgentBreaker | undefined = new AgentBreaker(benchOptions(store));
  let events = 0;
  let trips = 0;
  let elapsed = 0n;
  let lastElapsed = 0n;
  let lastEvents = 0;
  const byKind = emptyTallies();
  for (let s = 0; s < sessions; s++) {
    const steps = [...sessionSteps(sessionEvents, s + 1, shape)];
    if (sessionEvents > 1000) {
      const head = await runSession(breaker, `s-${s}`, steps.slice(0, sessionEvents - 1000));
      const tail = await runSession(breaker, `s-${s}`, steps.slice(sessionEvents - 1000));
      events += head.events + tail.events;
      trips += head.trips + tail.trips;
      elapsed += head.elapsedNs + tail.elapsedNs;
      lastElapsed += tail.elapsedNs;
      lastEvents += tail.events;
      addTallies(byKind, head.byKind);
      addTallies(byKind, tail.byKind);
    } else {
      const run = await runSession(breaker, `s-${s}`, steps);
      events += run.events;
      trips += run.trips;
      elapsed += run.elapsedNs;
      addTallies(byKind, run.byKind);
    }
  }
  const stored = await store.load('s-0');
  // What the sessions retain is what is freed when the breaker and its store
  // go: measuring it that way leaves compiled code and other one-off growth out.
  gc();
  gc();
  const heapWith = process.memoryUsage().heapUsed;
  store = undefined;
  breaker = undefined;
  gc();
  gc();
  const heapWithout = process.memoryUsage().heapUsed;
  const heapBefore = heapWithout;
  const heapAfter = heapWith;
  return {
    sessionEvents,
    shape,
    sessions,
    microsPerEvent: Number(elapsed) / 1000 / events,
    microsPerEventLast1000: lastEvents > 0 ? Number(lastElapsed) / 1000 / lastEvents : undefined,
    microsPerStepByKind: Object.fromEntries(
      KINDS.map((k) => [k, byKind[k].steps === 0 ? 0 : Number(byKind[k].elapsedNs) / 1000 / byKind[k].steps]),
    ) as Record<StepKind, number>,
    heapBytesPerSession: Math.max(0, (heapAfter - heapBefore) / sessions),
    stateJsonBytes: stored === undefined ? 0 : Buffer.byteLength(JSON.stringify(stored.state)),
    trips,
  };
}

/** Redis round trips of one session. */
export interface RedisFigures {
  readonly events: number;
  readonly roundTrips: number;
  /** Mean round trips per step, by step kind (a model round and a tool call include their gate / check). */
  readonly perKind: Readonly<Record<string, number>>;
  readonly byCommand: Readonly<Record<string, number>>;
  readonly microsPerEvent: number;
}

async function measureRedis(url: string): Promise<RedisFigures> {
  const { createClient } = await import('redis');
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  const byCommand: Record<string, number> = {};
  let roundTrips = 0;
  const counting: RedisCommandClient = {
    sendCommand(args, options) {
      roundTrips++;
      const name = String(args[0]).toUpperCase();
      byCommand[name] = (byCommand[name] ?? 0) + 1;
      return client.sendCommand(args, options);
    },
  };
  const prefix = `governor:bench:${process.pid}:${Date.now()}:`;
  const store: BreakerStore = new RedisBreakerStore({ client: counting, keyPrefix: prefix });
  const breaker = new AgentBreaker(benchOptions(store));
  // Load the scripts once, outside the count.
  await runSession(breaker, 'warm', sessionSteps(20, 99, { maxArgBytes: 256 }));
  roundTrips = 0;
  for (const key of Object.keys(byCommand)) delete byCommand[key];
  const kindTrips: Record<string, { steps: number; trips: number }> = {};
  let events = 0;
  let elapsed = 0n;
  for (const step of sessionSteps(500, 7, { maxArgBytes: 1024 })) {
    const before = roundTrips;
    const run = await runSession(breaker, 'measured', [step]);
    elapsed += run.elapsedNs;
    events += run.events;
    const kind = step.event.kind;
    const entry = (kindTrips[kind] ??= { steps: 0, trips: 0 });
    entry.steps++;
    entry.trips += roundTrips - before;
  }
  const keys = await client.keys(`${prefix}*`);
  if (keys.length > 0) await client.del(keys);
  await client.close();
  const perKind: Record<string, number> = {};
  for (const [kind, { steps, trips }] of Object.entries(kindTrips)) perKind[kind] = trips / steps;
  return { events, roundTrips, perKind, byCommand: { ...byCommand }, microsPerEvent: Number(elapsed) / 1000 / events };
}

/** The whole overhead benchmark. */
export interface OverheadReport {
  readonly rows: readonly OverheadRow[];
  readonly redis: RedisFigures | { readonly skipped: string };
}

export async function runOverheadBenchmark(redisUrl: string = testRedisUrl()): Promise<OverheadReport> {
  const rows: OverheadRow[] = [];
  // The last shape adds long model replies and long tool results to the largest arguments.
  for (const [sessionEvents, shape, sessions] of [
    [10, { maxArgBytes: 256 }, 2000],
    [10, { maxArgBytes: 8192 }, 2000],
    [10_000, { maxArgBytes: 256 }, 3],
    [10_000, { maxArgBytes: 8192 }, 3],
    [10_000, { maxArgBytes: 8192, maxTextBytes: 4096, maxResultBytes: 4096 }, 3],
  ] as const) {
    rows.push(await measureShape(sessionEvents, shape, sessions));
  }
  const problem = await pingRedis(redisUrl, 1000);
  const redis = problem === undefined ? await measureRedis(redisUrl) : { skipped: `no Redis server at ${redisUrl} (${problem})` };
  return { rows, redis };
}

/** Right-aligned text table, first column left-aligned. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), line(header.map((_, i) => '-'.repeat(widths[i] ?? 0))), ...rows.map(line)];
}

function shapeCells(r: OverheadRow): string[] {
  const size = (max: number | undefined, fixed: number): string => (max === undefined ? `${fixed} B` : `≤ ${max.toLocaleString('en-US')} B`);
  return [
    `${r.sessionEvents.toLocaleString('en-US')} events`,
    `${r.shape.maxArgBytes.toLocaleString('en-US')} B`,
    size(r.shape.maxTextBytes, DEFAULT_TEXT_BYTES),
    size(r.shape.maxResultBytes, DEFAULT_RESULT_BYTES),
  ];
}

/** The overhead figures as text. */
export function formatOverheadReport(report: OverheadReport): string {
  const lines = [
    'Overhead benchmark — AgentBreaker, all detectors on, in-memory store',
    '',
    ...table(
      ['Session', 'Args up to', 'Model text', 'Tool result', 'Sessions', 'µs/event', 'µs/event (last 1000)', 'Heap/session', 'State JSON', 'Trips'],
      report.rows.map((r) => [
        ...shapeCells(r),
        String(r.sessions),
        r.microsPerEvent.toFixed(1),
        r.microsPerEventLast1000 === undefined ? '-' : r.microsPerEventLast1000.toFixed(1),
        `${Math.round(r.heapBytesPerSession).toLocaleString('en-US')} B`,
        `${r.stateJsonBytes.toLocaleString('en-US')} B`,
        String(r.trips),
      ]),
    ),
    '',
    'µs/event: one step as the breaker meets it (gate or pre-execution check + observe). Heap/session: retained',
    'heap after the run divided by sessions (after GC). State JSON: serialised size of one session state.',
    'Model text, Tool result: length of each (fixed, or ≤: uniform below it).',
    '',
    'Cost per step kind, µs (same runs)',
    '',
    ...table(
      ['Session', 'Args up to', 'Model text', 'Tool result', 'model round', 'tool call', 'retrieval', 'delegation', 'user'],
      report.rows.map((r) => [...shapeCells(r), ...KINDS.map((k) => r.microsPerStepByKind[k].toFixed(1))]),
    ),
    '',
    'model round: checkModelCall + observe(model). tool call: checkToolCall + observe(tool_call).',
    'retrieval, delegation, user: observe. Steps per 10: 2 model rounds, 5 tool calls, 1 of each other kind.',
    '',
  ];
  if ('skipped' in report.redis) {
    lines.push(`Redis round trips: skipped — ${report.redis.skipped}`);
  } else {
    const r = report.redis;
    const commands = Object.entries(r.byCommand).map(([c, n]) => `${c} ${n}`).join(', ');
    const perKind = Object.entries(r.perKind).map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ');
    lines.push(
      `Redis store (one 500-event session, loopback): ${r.roundTrips} round trips, ${(r.roundTrips / r.events).toFixed(2)} per event ` +
        `(${commands}); per step kind: ${perKind}; ${r.microsPerEvent.toFixed(0)} µs/event`,
    );
  }
  return lines.join('\n');
}
