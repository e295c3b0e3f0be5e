/**
 * Breaker state under contention and per-event cost on Redis, for
 * `npm run bench:overhead`:
 *
 * 1. 8 breakers × 1 session × 200 events each (1 KB tool arguments), each
 *    breaker on its own RedisBreakerStore and connection, all at once: in one
 *    process, and in 8 processes. Events recorded (the session's counter)
 *    against events sent, store warnings, operations not judged, and the
 *    cost per event (check + observe) at p50 / p90. Medians of 3 repeats.
 * 2. One breaker, one session of 10,000 events: the cost of an observed
 *    event against a PING on the same connection (interleaved), over the
 *    first 10 events of 100 new sessions (spread over the long session's),
 *    events 901–1,000 and the last 100 of the long one, the median of 3
 *    runs; and what Redis holds for the session (MEMORY USAGE
 *    of its keys) over its 10th event, two snapshot cycles from its 1,000th
 *    and up to its last, and the same for sessions of every kind of event
 *    (300 B and 4 KB replies) up to their 1,031st.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { createClient, RESP_TYPES } from 'redis';
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import type { BreakerDecision } from '../src/breaker/breaker-decision.ts';
import type { ToolCallEvent } from '../src/breaker/breaker-event.ts';
import type { BreakerEventRecord } from '../src/breaker/breaker-events.ts';
import { RedisBreakerStore, type RedisCommandClient } from '../src/redis/redis-breaker-store.ts';
import { percentile as nearestRank } from './detection-metrics.ts';
import { allDetectorsOn, count, sessionSteps } from './overhead.ts';

/** Nearest-rank percentile (`p` in 0..1) of `values` (µs); NaN for none. */
function percentile(values: readonly number[], p: number): number {
  return nearestRank(values, p * 100) ?? Number.NaN;
}

/** The lower middle value (nearest rank), so every figure is one that was measured. */
function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

function micros(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** What one writer did. */
export interface WriterResult {
  /** Observations sent (a step whose check blocked or stopped sends none). */
  readonly observed: number;
  readonly warnings: number;
  readonly unjudged: number;
  /** Cost of each step (check + observe), µs. */
  readonly latencies: readonly number[];
  /** Escalations and state changes, `category:action`. */
  readonly trips: readonly string[];
}

/**
 * One writer: warms its connection and the scripts on a session of its own,
 * signals `ready`, waits for `go`, then runs `events` generated steps on
 * the shared session.
 */
export async function runWriter(options: {
  client: RedisCommandClient;
  keyPrefix: string;
  sessionId: string;
  writer: number;
  events: number;
  argBytes: number;
  ready: () => void;
  go: Promise<void>;
}): Promise<WriterResult> {
  const store = new RedisBreakerStore({ client: options.client, keyPrefix: options.keyPrefix });
  const breaker = new AgentBreaker({ ...allDetectorsOn(store, false), checkFreshnessMs: 0 });
  const shape = { argBytes: options.argBytes };
  for (const step of sessionSteps(100, 1_000 + options.writer, shape)) await breaker.observe(`warm-${options.writer}`, step.event);
  let warnings = 0;
  const trips: string[] = [];
  breaker.on((e: BreakerEventRecord) => {
    if (e.type === 'warning') warnings++;
    else if (e.type === 'escalation') trips.push(`${e.category}:${e.action}`);
  });
  const steps = [...sessionSteps(options.events, options.writer + 1, shape)];
  options.ready();
  await options.go;
  const latencies: number[] = [];
  let observed = 0;
  for (const { check, event } of steps) {
    const start = process.hrtime.bigint();
    let decision: BreakerDecision | undefined;
    if (check === 'model') decision = await breaker.checkModelCall(options.sessionId);
    else if (check === 'tool' && event.kind === 'tool_call') decision = await breaker.checkToolCall(options.sessionId, { tool: event.tool, args: event.args });
    if (decision === undefined || decision.action === 'allow' || decision.action === 'steer') {
      observed++;
      await breaker.observe(options.sessionId, event);
    }
    latencies.push(micros(start));
  }
  return { observed, warnings, unjudged: (await breaker.health()).unjudged, latencies, trips };
}

/** One contention run: all writers at once on one session. */
interface ContentionRun {
  readonly sent: number;
  readonly recorded: number;
  readonly warnings: number;
  readonly unjudged: number;
  readonly p50: number;
  readonly p90: number;
}

interface ContentionFigures {
  readonly mode: 'one process' | 'separate processes';
  readonly writers: number;
  readonly eventsPerWriter: number;
  readonly argBytes: number;
  /** Each repeat's figures. */
  readonly runs: readonly ContentionRun[];
  /** Medians over the repeats. */
  readonly median: ContentionRun;
}

async function recordedEvents(client: RedisCommandClient, keyPrefix: string, sessionId: string): Promise<number> {
  const snapshot = await new AgentBreaker({ telemetry: false, store: new RedisBreakerStore({ client, keyPrefix }) }).snapshot(sessionId);
  return snapshot.counters.events;
}

function summarise(results: readonly WriterResult[], recorded: number): ContentionRun {
  const latencies = results.flatMap((r) => r.latencies);
  return {
    sent: results.reduce((n, r) => n + r.observed, 0),
    recorded,
    warnings: results.reduce((n, r) => n + r.warnings, 0),
    unjudged: results.reduce((n, r) => n + r.unjudged, 0),
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
  };
}

async function inOneProcess(url: string, keyPrefix: string, writers: number, events: number, argBytes: number): Promise<ContentionRun> {
  const clients = await Promise.all(
    Array.from({ length: writers }, async () => {
      const c = createClient({ url });
      c.on('error', () => {});
      await c.connect();
      return c;
    }),
  );
  try {
    let start!: () => void;
    const go = new Promise<void>((resolve) => (start = resolve));
    let ready = 0;
    const allReady = new Promise<void>((resolve) => {
      const results = clients.map((client, writer) =>
        runWriter({ client, keyPrefix, sessionId: 'shared', writer, events, argBytes, go, ready: () => ++ready === writers && resolve() }),
      );
      void Promise.all(results).then((r) => (finished = r));
    });
    let finished: WriterResult[] | undefined;
    await allReady;
    start();
    while (finished === undefined) await new Promise((r) => setTimeout(r, 5));
    return summarise(finished, await recordedEvents(clients[0]!, keyPrefix, 'shared'));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

async function inProcesses(url: string, keyPrefix: string, writers: number, events: number, argBytes: number): Promise<ContentionRun> {
  const worker = path.join(import.meta.dirname, 'contention-worker.ts');
  const children = Array.from({ length: writers }, (_, writer) =>
    fork(worker, [], {
      env: {
        ...process.env,
        CONTENTION_REDIS_URL: url,
        CONTENTION_KEY_PREFIX: keyPrefix,
        CONTENTION_SESSION: 'shared',
        CONTENTION_WRITER: String(writer),
        CONTENTION_EVENTS: String(events),
        CONTENTION_ARG_BYTES: String(argBytes),
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  const ready = children.map(
    (c) =>
      new Promise<void>((resolve, reject) => {
        c.on('message', (m: unknown) => (m as { ready?: boolean }).ready && resolve());
        c.on('exit', (code) => reject(new Error(`contention worker exited (${code}) before it was ready`)));
      }),
  );
  const results = children.map(
    (c) =>
      new Promise<WriterResult>((resolve, reject) => {
        c.on('message', (m: unknown) => {
          const result = (m as { result?: WriterResult }).result;
          if (result !== undefined) resolve(result);
        });
        c.on('exit', (code) => code !== 0 && reject(new Error(`contention worker exited (${code})`)));
      }),
  );
  await Promise.all(ready);
  for (const c of children) c.send({ go: true });
  const done = await Promise.all(results);
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  try {
    return summarise(done, await recordedEvents(client, keyPrefix, 'shared'));
  } finally {
    await client.close();
  }
}

function medianRun(runs: readonly ContentionRun[]): ContentionRun {
  const pick = (f: (r: ContentionRun) => number) => median(runs.map(f));
  return {
    sent: pick((r) => r.sent),
    recorded: pick((r) => r.recorded),
    warnings: pick((r) => r.warnings),
    unjudged: pick((r) => r.unjudged),
    p50: pick((r) => r.p50),
    p90: pick((r) => r.p90),
  };
}

/** Per-event cost against PING over a window of a long session. */
interface EventCostWindow {
  /** Which events of the session (1-based, inclusive). */
  readonly from: number;
  readonly to: number;
  /** Median observe (µs). */
  readonly observe: number;
  /** 90th percentile of the same observes (µs): where the events that write a snapshot show. */
  readonly observeP90: number;
  /** Median PING on the same connection, interleaved (µs). */
  readonly ping: number;
  readonly ratio: number;
  /** Median observe of the same events by a breaker in memory, interleaved (µs): the detectors' own work. */
  readonly inMemory: number;
  /**
   * Where an observe's time goes (medians, µs): until its append is handed to
   * the client (digesting the event, fingerprinting its arguments, encoding
   * it), from then until the reply comes back (a round trip, the script on
   * the server, and what overlaps them: the detectors' judgement), and after
   * the reply (folding it in, the caller's answer).
   */
  readonly beforeSend: number;
  readonly sendToReply: number;
  readonly afterReply: number;
  /**
   * The same events checked first, as the adapters call a tool
   * (`checkToolCall`, judged in memory within `checkFreshnessMs`; the tool;
   * then `observe`, which reuses the check's fingerprint): median observe,
   * the PING before it, and its time before the send (µs).
   */
  readonly checked: { readonly observe: number; readonly ping: number; readonly ratio: number; readonly beforeSend: number };
  /** The ratio of each timed run, in run order (the window's figures are those of the median run). */
  readonly runRatios?: readonly number[];
}

/**
 * Stored size over a window of events that spans whole snapshot cycles:
 * between snapshots the log grows by one operation per event, so one
 * reading would report wherever in its cycle the count happened to fall.
 */
interface StoredSize {
  /** Which session: tool calls only (the one timed against PING), or every kind of event (with 300 B or 4 KB replies and results). */
  readonly session: StoredSession;
  /** First and last event of the window (one reading after each). */
  readonly from: number;
  readonly to: number;
  /** MEMORY USAGE of the session's hash and log (bytes): least, mean and most over the window. */
  readonly redisBytes: { readonly min: number; readonly mean: number; readonly max: number };
  /** Length of the stored snapshot after the window's last event (bytes). */
  readonly snapshotBytes: number;
  /** Most operations the log held over the window. */
  readonly maxLogLength: number;
}

/** Readings of the stored size per window: at least two snapshot cycles (a snapshot is written every 16 events or 1 KB of log, whichever comes first). */
const STORED_WINDOW = 32;

type StoredSession = 'tool calls' | 'every kind' | 'every kind, 4 KB';

/** Windows of readings for a session of `events`: its 10th event, and two snapshot cycles from its 1,000th and up to its last. */
function storedWindows(events: number): [number, number][] {
  const windows: [number, number][] = [];
  for (const [from, to] of [
    [10, 10],
    [1_000, 1_000 + STORED_WINDOW - 1],
    [events - STORED_WINDOW + 1, events],
  ] as const) {
    if (from >= 1 && to <= events && from > (windows.at(-1)?.[1] ?? 0)) windows.push([from, to]);
  }
  return windows;
}

/** Reads what Redis holds for one session after every event of its windows. */
class StoredReadings {
  readonly sizes: StoredSize[] = [];
  readonly #client: RedisCommandClient;
  readonly #keys: readonly [hash: string, log: string];
  readonly #windows: readonly [number, number][];
  readonly #session: StoredSession;
  #readings: { bytes: number; log: number }[] = [];

  constructor(client: RedisCommandClient, keyPrefix: string, sessionId: string, events: number, session: StoredSession) {
    this.#client = client;
    this.#keys = [`${keyPrefix}session:${sessionId}`, `${keyPrefix}log:${sessionId}`];
    this.#windows = storedWindows(events);
    this.#session = session;
  }

  /** Call after the session's `n`th event. */
  async after(n: number): Promise<void> {
    const window = this.#windows.find(([from, to]) => n >= from && n <= to);
    if (window === undefined) return;
    const [hash, log] = this.#keys;
    const bytes = await Promise.all([hash, log].map((k) => this.#client.sendCommand(['MEMORY', 'USAGE', k])));
    const length = Number(await this.#client.sendCommand(['LLEN', log]));
    this.#readings.push({ bytes: bytes.reduce<number>((a, b) => a + Number(b ?? 0), 0), log: length });
    if (n !== window[1]) return;
    // The snapshot is binary (see compressState): read as bytes, not as text.
    const snap = await this.#client.sendCommand(['HGET', hash, 'snap'], { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } });
    const sizes = this.#readings.map((r) => r.bytes);
    this.sizes.push({
      session: this.#session,
      from: window[0],
      to: n,
      redisBytes: { min: Math.min(...sizes), mean: sizes.reduce((a, b) => a + b, 0) / sizes.length, max: Math.max(...sizes) },
      snapshotBytes: Buffer.isBuffer(snap) ? snap.length : 0,
      maxLogLength: Math.max(...this.#readings.map((r) => r.log)),
    });
    this.#readings = [];
  }
}

interface RedisCostFigures {
  readonly argBytes: number;
  /** Timed runs of the sessions; each window shows its median run. */
  readonly repeats: number;
  readonly windows: readonly EventCostWindow[];
  readonly stored: readonly StoredSize[];
  /**
   * The server's own time per command over the timed runs (µs, from INFO
   * commandstats): the append script each observe runs, and PING. What is
   * left of "beyond PING" is this process's work and the extra hops.
   * `inScript`: of an append's time, what the commands it runs (TIME, HMGET,
   * RPUSH, and a snapshot's writes) take; the rest is the script's own.
   */
  readonly server: { readonly append: number; readonly ping: number; readonly inScript: number };
}

/** Calls and µs spent per command so far, by command. */
type CommandStats = Map<string, { calls: number; usec: number }>;

/** {@link CommandStats} from INFO commandstats (`cmdstat_evalsha:calls=2000,usec=48487,…`). */
async function commandStats(client: RedisCommandClient): Promise<CommandStats> {
  const info = String(await client.sendCommand(['INFO', 'commandstats']));
  const stats: CommandStats = new Map();
  for (const match of info.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)) stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  return stats;
}

/** µs per call of `commands` (summed) between two readings of {@link commandStats}; NaN when none ran. */
function serverMicros(before: CommandStats, after: CommandStats, commands: readonly string[]): number {
  const { calls, usec } = spent(before, after, commands);
  return calls > 0 ? usec / calls : Number.NaN;
}

/** Calls and µs of `commands` (summed) between two readings of {@link commandStats}. */
function spent(before: CommandStats, after: CommandStats, commands: Iterable<string>): { calls: number; usec: number } {
  let calls = 0;
  let usec = 0;
  for (const command of commands) {
    calls += (after.get(command)?.calls ?? 0) - (before.get(command)?.calls ?? 0);
    usec += (after.get(command)?.usec ?? 0) - (before.get(command)?.usec ?? 0);
  }
  return { calls, usec };
}

/** What this benchmark's client itself sends beside the store's scripts (and MEMORY USAGE, over the first run). */
const OWN_COMMANDS = new Set(['evalsha', 'eval', 'ping', 'info', 'memory']);

/** µs per append spent in the commands the scripts ran (every command but the client's own), between two readings. */
function inScriptMicros(before: CommandStats, after: CommandStats): number {
  const appends = spent(before, after, ['evalsha', 'eval']).calls;
  const inside = spent(
    before,
    after,
    [...after.keys()].filter((command) => !OWN_COMMANDS.has(command)),
  );
  return appends > 0 ? inside.usec / appends : Number.NaN;
}

interface Samples {
  readonly observe: number[];
  readonly ping: number[];
  readonly memory: number[];
  readonly beforeSend: number[];
  readonly sendToReply: number[];
  readonly afterReply: number[];
  readonly checked: number[];
  readonly checkedPing: number[];
  readonly checkedBeforeSend: number[];
}

function samples(): Samples {
  return { observe: [], ping: [], memory: [], beforeSend: [], sendToReply: [], afterReply: [], checked: [], checkedPing: [], checkedBeforeSend: [] };
}

/** The samples of events `from` to `to` (1-based, inclusive) of a session timed from its first event. */
function sliceSamples(times: Samples, from: number, to: number): Samples {
  const out = samples();
  for (const key of Object.keys(out) as (keyof Samples)[]) out[key].push(...times[key].slice(from - 1, to));
  return out;
}

function costWindow(from: number, to: number, times: Samples): EventCostWindow {
  const observe = median(times.observe);
  const ping = median(times.ping);
  return {
    from,
    to,
    observe,
    observeP90: percentile(times.observe, 0.9),
    ping,
    ratio: observe / ping,
    inMemory: median(times.memory),
    beforeSend: median(times.beforeSend),
    sendToReply: median(times.sendToReply),
    afterReply: median(times.afterReply),
    checked: checkedWindow(times),
  };
}

function checkedWindow(times: Samples): EventCostWindow['checked'] {
  const observe = median(times.checked);
  const ping = median(times.checkedPing);
  return { observe, ping, ratio: observe / ping, beforeSend: median(times.checkedBeforeSend) };
}

/**
 * The client as the store sees it, noting when the first command of an
 * observe is handed to it and when its reply comes back: the append (or the
 * EVAL it falls back to), as no other command precedes it.
 */
function timedClient(client: RedisCommandClient): { client: RedisCommandClient; first(): { sent: bigint; replied: bigint } | undefined; clear(): void } {
  let sent: bigint | undefined;
  let replied: bigint | undefined;
  return {
    client: {
      sendCommand(args, options) {
        const reply = client.sendCommand(args, options);
        if (sent !== undefined) return reply;
        sent = process.hrtime.bigint();
        // The first reaction to the reply: it runs before the store's own.
        const settled = () => {
          replied = process.hrtime.bigint();
        };
        reply.then(settled, settled);
        return reply;
      },
      get isReady() {
        return client.isReady;
      },
    },
    first: () => (sent === undefined || replied === undefined ? undefined : { sent, replied }),
    clear() {
      sent = undefined;
      replied = undefined;
    },
  };
}

/** Per window, the run whose ratio is the median of the runs' (the lower middle one for an even count). */
function medianWindows(runs: readonly (readonly EventCostWindow[])[]): EventCostWindow[] {
  return runs[0]!.map((_, i) => {
    const sorted = runs.map((run) => run[i]!).sort((a, b) => a.ratio - b.ratio);
    return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, runRatios: runs.map((run) => run[i]!.ratio) };
  });
}

async function eventCost(url: string, keyPrefix: string, argBytes: number, events: number, repeats: number): Promise<RedisCostFigures> {
  // The PINGs go as the store sends its commands: without a timer of node-redis's own per command.
  const client = createClient({ url, commandOptions: { timeout: 0 } });
  client.on('error', () => {});
  await client.connect();
  try {
    const timing = timedClient(client);
    const store = new RedisBreakerStore({ client: timing.client, keyPrefix });
    const breaker = new AgentBreaker({ ...allDetectorsOn(store, false), checkFreshnessMs: 0 });
    const inMemory = new AgentBreaker({ ...allDetectorsOn(undefined, false), checkFreshnessMs: 0 });
    // As the adapters call a tool: checked first (with the default checkFreshnessMs), then observed.
    const checking = new AgentBreaker(allDetectorsOn(new RedisBreakerStore({ client: timing.client, keyPrefix }), false));
    // Observed tool calls only: 1 KB arguments every time.
    const steps = [...sessionSteps(events * 2, 7, { argBytes })]
      .map((s) => s.event)
      .filter((e): e is ToolCallEvent => e.kind === 'tool_call')
      .slice(0, events);
    for (const step of sessionSteps(500, 99, { argBytes })) {
      await breaker.observe('warm', step.event);
      await inMemory.observe('warm', step.event);
    }
    /** The append of the observe just timed, which every observe sends. */
    const appended = (sessionId: string) => {
      const append = timing.first();
      if (append === undefined) throw new Error(`an observe of ${sessionId} sent nothing to Redis`);
      return append;
    };
    /**
     * Times one observe with a PING before it, the same observe in memory after it, and the same call checked and
     * then observed on a session of its own after a PING of its own, each on its own.
     */
    const timed = async (sessionId: string, event: ToolCallEvent, into: Samples) => {
      let start = process.hrtime.bigint();
      await client.sendCommand(['PING']);
      into.ping.push(micros(start));
      timing.clear();
      start = process.hrtime.bigint();
      await breaker.observe(sessionId, event);
      let end = process.hrtime.bigint();
      into.observe.push(Number(end - start) / 1_000);
      const append = appended(sessionId);
      into.beforeSend.push(Number(append.sent - start) / 1_000);
      into.sendToReply.push(Number(append.replied - append.sent) / 1_000);
      into.afterReply.push(Number(end - append.replied) / 1_000);
      await client.sendCommand(['PING']);
      start = process.hrtime.bigint();
      await inMemory.observe(sessionId, event);
      into.memory.push(micros(start));
      const checkedId = `checked-${sessionId}`;
      await checking.checkToolCall(checkedId, { tool: event.tool, args: event.args });
      start = process.hrtime.bigint();
      await client.sendCommand(['PING']);
      into.checkedPing.push(micros(start));
      timing.clear();
      start = process.hrtime.bigint();
      await checking.observe(checkedId, event);
      end = process.hrtime.bigint();
      into.checked.push(Number(end - start) / 1_000);
      into.checkedBeforeSend.push(Number(appended(checkedId).sent - start) / 1_000);
    };
    // What Redis holds is read over the first run only: it does not depend on the run, and the reads are not timed.
    const stored = new StoredReadings(client, keyPrefix, 'long-0', steps.length, 'tool calls');
    const runs: EventCostWindow[][] = [];
    // Another client of the same server would add its own calls: a shared server's figure is only indicative.
    const statsBefore = await commandStats(client);
    // The first run also reads what Redis holds, which no script does: what scripts run is counted over the later runs.
    let statsAfterFirst: CommandStats | undefined;
    for (let run = 0; run < repeats; run++) {
      if (run === 1) statsAfterFirst = await commandStats(client);
      // The first events of a session: 100 new sessions, so that window has as many samples as the others. Their
      // events are spread over the long session's (one new session every 1/100 of it), so that every window is timed
      // under the same load and at the same point of the process's warm-up: timed first, they read the highest.
      const fresh = samples();
      const long = samples();
      const newSessions = 100;
      const every = Math.max(1, Math.floor(steps.length / newSessions));
      let started = 0;
      for (let i = 0; i < steps.length || started < newSessions; i++) {
        if (i % every === 0 && started < newSessions) {
          const s = started++;
          for (let k = 0; k < 10; k++) await timed(`new-${run}-${s}`, steps[(s * 10 + k) % steps.length]!, fresh);
        }
        if (i >= steps.length) continue;
        await timed(`long-${run}`, steps[i]!, long);
        if (run === 0) await stored.after(i + 1);
      }
      const windows = [costWindow(1, 10, fresh)];
      for (const [from, to] of [
        [901, 1_000],
        [events - 99, events],
      ] as const) {
        if (to > steps.length || from < 1 || windows.some((w) => w.to === to)) continue;
        windows.push(costWindow(from, to, sliceSamples(long, from, to)));
      }
      runs.push(windows);
    }
    const statsAfter = await commandStats(client);
    // An append goes as EVAL only when the server lost the script (NOSCRIPT).
    const server = {
      append: serverMicros(statsBefore, statsAfter, ['evalsha', 'eval']),
      ping: serverMicros(statsBefore, statsAfter, ['ping']),
      inScript: inScriptMicros(statsAfterFirst ?? statsBefore, statsAfter),
    };
    // Sessions of every kind of event (replies, queries, passages and user turns are logged as text), up to their 1,031st.
    const mixedEvents = Math.min(events, 1_000 + STORED_WINDOW - 1);
    const mixed: StoredSize[] = [];
    for (const [session, shape] of [
      ['every kind', { argBytes }],
      ['every kind, 4 KB', { argBytes, textBytes: 4096, resultBytes: 4096 }],
    ] as const) {
      const readings = new StoredReadings(client, keyPrefix, session, mixedEvents, session);
      let n = 0;
      for (const step of sessionSteps(mixedEvents, 11, shape)) {
        await breaker.observe(session, step.event);
        await readings.after(++n);
      }
      mixed.push(...readings.sizes);
    }
    return { argBytes, repeats, windows: medianWindows(runs), stored: [...stored.sizes, ...mixed], server };
  } finally {
    await client.close();
  }
}

export interface ContentionReport {
  readonly contention: readonly ContentionFigures[];
  readonly cost: RedisCostFigures;
}

/** Runs both parts against the Redis at `url`; deletes every key it wrote. */
export async function runContentionBenchmark(
  url: string,
  options: { writers?: number; eventsPerWriter?: number; argBytes?: number; repeats?: number; longSession?: number; onProgress?: (what: string) => void } = {},
): Promise<ContentionReport> {
  const writers = options.writers ?? 8;
  const events = options.eventsPerWriter ?? 200;
  const argBytes = options.argBytes ?? 1024;
  const repeats = options.repeats ?? 3;
  const progress = options.onProgress ?? (() => {});
  const prefix = `governor:bench:contention:${process.pid}:${Date.now()}:`;
  const contention: ContentionFigures[] = [];
  try {
    for (const mode of ['one process', 'separate processes'] as const) {
      const runs: ContentionRun[] = [];
      for (let r = 0; r < repeats; r++) {
        progress(`contention: ${writers} breakers × ${events} events on one session, ${mode}, run ${r + 1} of ${repeats}`);
        const keyPrefix = `${prefix}${mode === 'one process' ? 'p' : 'm'}${r}:`;
        runs.push(
          mode === 'one process' ? await inOneProcess(url, keyPrefix, writers, events, argBytes) : await inProcesses(url, keyPrefix, writers, events, argBytes),
        );
      }
      contention.push({ mode, writers, eventsPerWriter: events, argBytes, runs, median: medianRun(runs) });
    }
    progress(`Redis: cost per event against PING over a session of ${options.longSession ?? 10_000} events`);
    const cost = await eventCost(url, `${prefix}cost:`, argBytes, options.longSession ?? 10_000, repeats);
    return { contention, cost };
  } finally {
    const client = createClient({ url });
    client.on('error', () => {});
    await client.connect();
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.del(keys);
    }
    await client.close();
  }
}

function us(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(0)} µs` : 'n/a';
}

/** The two tables, as text. */
export function formatContentionReport(report: ContentionReport): string {
  const lines: string[] = [];
  lines.push('', 'Breaker state under contention (Redis): writers × events on ONE session, each writer its own store and connection');
  lines.push('mode                  writers  events sent  recorded  warnings  unjudged  p50/event  p90/event');
  for (const c of report.contention) {
    const m = c.median;
    lines.push(
      `${c.mode.padEnd(22)}${String(c.writers).padStart(7)}  ${String(m.sent).padStart(11)}  ${String(m.recorded).padStart(8)}  ${String(m.warnings).padStart(8)}  ${String(m.unjudged).padStart(8)}  ${us(m.p50).padStart(9)}  ${us(m.p90).padStart(9)}`,
    );
  }
  lines.push(
    `  ${report.contention[0]?.argBytes ?? ''} B tool arguments; an event is a check + observe (or an observe); medians of ${report.contention[0]?.runs.length ?? 0} repeats.`,
  );
  lines.push(
    `  Goal: recorded = sent, 0 warnings, 0 unjudged: ${report.contention.every((c) => c.runs.every((r) => r.recorded === r.sent && r.warnings === 0 && r.unjudged === 0)) ? 'met' : 'NOT met'}`,
  );
  const runs = report.cost.repeats;
  lines.push(
    '',
    `Cost of one observed event on Redis against PING on the same connection (${report.cost.argBytes} B arguments, medians; median of ${runs} runs)`,
  );
  lines.push('events of the session   observe  observe p90      PING  ratio  beyond PING  in memory  store beyond both  ratio of each run');
  for (const w of report.cost.windows) {
    lines.push(
      `${`${w.from}–${w.to}`.padEnd(22)}${us(w.observe).padStart(9)}  ${us(w.observeP90).padStart(11)}  ${us(w.ping).padStart(8)}  ${w.ratio.toFixed(2).padStart(5)}  ${us(w.observe - w.ping).padStart(11)}  ${us(w.inMemory).padStart(9)}  ${us(w.observe - w.ping - w.inMemory).padStart(17)}  ${(w.runRatios ?? [w.ratio]).map((r) => r.toFixed(2)).join(' / ')}`,
    );
  }
  lines.push(`  Goal: ≤ 1.5× PING, flat: ${report.cost.windows.every((w) => w.ratio <= 1.5) ? 'met' : 'NOT met'}`);
  const server = report.cost.server;
  if (Number.isFinite(server.append)) {
    lines.push(
      `  On the server (INFO commandstats over the timed runs): ${server.append.toFixed(1)} µs per append script (${server.inScript.toFixed(1)} µs of it in the`,
      `  commands the script runs, the rest the script's own), ${server.ping.toFixed(2)} µs per PING; the rest of "beyond PING" is spent`,
      '  in this process and on the way.',
    );
  }
  lines.push(
    '  observe p90: the 90th percentile of the observes, of the median run; the events that write a snapshot show there.',
    '  in memory: the same events observed by a breaker with the in-memory store, each after a PING of its own as the observe on',
    "  Redis is (the detectors' own work, argument fingerprints included, which a Redis write needs before it is sent); store",
    `  beyond both: observe − PING − in memory. Each run times a new long session and 100 new ones, whose first 10 events are`,
    `  spread over the long one's; a window's figures are those of its median run (by ratio).`,
  );
  lines.push("  Where an observe's time goes (medians, of the same runs):");
  lines.push('  events of the session   before the send  send to reply  reply − PING  after the reply');
  for (const w of report.cost.windows) {
    lines.push(
      `  ${`${w.from}–${w.to}`.padEnd(22)}${us(w.beforeSend).padStart(15)}  ${us(w.sendToReply).padStart(13)}  ${us(w.sendToReply - w.ping).padStart(12)}  ${us(w.afterReply).padStart(15)}`,
    );
  }
  lines.push(
    '  before the send: from the call until the append is handed to the Redis client (the event digested, its arguments',
    '  fingerprinted, the operation encoded); send to reply: until its reply is back (a round trip, the script on the server,',
    "  and the detectors' judgement, which runs meanwhile); after the reply: the reply folded in and the answer given.",
  );
  lines.push('  Checked first, as the adapters call a tool (the same events: checkToolCall, judged in memory within checkFreshnessMs,');
  lines.push("  then observe, which reuses the check's fingerprint; the goal above is the observe alone):");
  lines.push('  events of the session   observe      PING  ratio  before the send');
  for (const w of report.cost.windows) {
    const c = w.checked;
    lines.push(
      `  ${`${w.from}–${w.to}`.padEnd(22)}${us(c.observe).padStart(7)}  ${us(c.ping).padStart(8)}  ${c.ratio.toFixed(2).padStart(5)}  ${us(c.beforeSend).padStart(15)}`,
    );
  }
  lines.push('', 'Stored per session in Redis (MEMORY USAGE of its hash + log, read after every event of each window)');
  lines.push('session           events           stored: least     mean     most  snapshot  longest log');
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  for (const s of report.cost.stored) {
    const events = s.from === s.to ? count(s.to) : `${count(s.from)}–${count(s.to)}`;
    lines.push(
      `${s.session.padEnd(16)}  ${events.padEnd(15)}  ${kb(s.redisBytes.min).padStart(13)}  ${kb(s.redisBytes.mean).padStart(7)}  ${kb(s.redisBytes.max).padStart(7)}  ${kb(s.snapshotBytes).padStart(8)}  ${String(s.maxLogLength).padStart(11)}`,
    );
  }
  lines.push(
    `  tool calls: the session above (${report.cost.argBytes} B arguments); every kind: per 10 events 2 model rounds, 4 tool calls, a sub-agent call, a`,
    '  retrieval, a delegation and a user turn, with 300 B replies and 200 B results, or 4 KB of each; replies, queries, passages',
    '  and user turns are logged as (redacted) text.',
  );
  const verdicts: string[] = [];
  for (const session of new Set(report.cost.stored.map((s) => s.session))) {
    const long = report.cost.stored.filter((s) => s.session === session && s.from >= 1_000);
    if (long.length === 0) continue;
    const worst = Math.max(...long.map((s) => s.redisBytes.max));
    verdicts.push(`${worst <= 8 * 1024 ? 'met' : 'NOT met'} for ${session} (most ${kb(worst)})`);
  }
  if (verdicts.length > 0) {
    lines.push(`  Goal: ≤ 8 KB stored per session after 1,000 events: ${verdicts.join(', ')}; stored is the snapshot plus the operations logged since it.`);
  }
  return lines.join('\n');
}
