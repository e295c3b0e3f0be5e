import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requireRedis } from '../src/test-support/services.ts';
import {
  formatOverheadReport,
  runOverheadBenchmark,
  sessionSteps,
  STEP_KINDS,
  SUB_AGENT_TOOL,
  type OverheadBenchmarkOptions,
  type Summary,
} from './overhead.ts';

/** Small enough to run in a second or two; the figures are not meant to be meaningful. */
const TINY: OverheadBenchmarkOptions = {
  sessionLengths: [10, 40],
  argBytes: [100, 1024],
  eventsPerCell: 80,
  minSessions: 4,
  warmUp: { sessions: 1, events: 20 },
  redisEventsPerCell: 40,
  chatCalls: 20,
  chatWarmupCalls: 5,
  startRedis: false,
  // More sessions than the store keeps decoded by default (256), long enough that encoding a session saves heap beyond noise.
  scale: { sessions: 260, events: 40, restMs: 20 },
  // More sessions than RedisBreakerStore keeps folded by default (256).
  redisScale: { sessions: 400, events: 10 },
};

function assertSummary(s: Summary, what: string): void {
  assert.ok(s.n > 0, `${what}: no samples`);
  for (const key of ['median', 'p99', 'mean'] as const) {
    assert.ok(Number.isFinite(s[key]) && s[key] >= 0, `${what}.${key} = ${s[key]}`);
  }
  assert.ok(s.median <= s.p99, `${what}: median above p99`);
}

describe('overhead benchmark', () => {
  test('generated sessions hold every step kind and arguments of the asked size', () => {
    const steps = [...sessionSteps(40, 1, { argBytes: 1024 })];
    assert.equal(steps.length, 40);
    const kinds = new Set(steps.map((s) => (s.event.kind === 'tool_call' && s.event.tool === SUB_AGENT_TOOL ? 'sub_agent' : s.event.kind)));
    assert.deepEqual([...kinds].sort(), [...STEP_KINDS].sort());
    for (const { event } of steps) {
      if (event.kind === 'tool_call') assert.equal(Buffer.byteLength(JSON.stringify(event.args)), 1024);
    }
    // Productive: no two tool calls share their arguments.
    const args = steps.flatMap((s) => (s.event.kind === 'tool_call' ? [JSON.stringify(s.event.args)] : []));
    assert.equal(new Set(args).size, args.length);
  });

  test('a tiny run reports every figure, through Redis too, with no trip', async () => {
    const redisUrl = await requireRedis();
    const report = await runOverheadBenchmark({ ...TINY, redisUrl });

    assert.ok(report.machine.cpu.length > 0 && report.machine.cores > 0);
    assert.match(report.machine.node, /^v\d+/);

    // 2 lengths × 2 argument sizes, plus the stress row with long replies.
    assert.equal(report.breaker.length, 5);
    assert.ok(report.scale !== undefined);
    assert.equal(report.scale.decoded, 256);
    assert.equal(report.scale.rotating.n, 10_400);
    assert.equal(report.scale.allDecoded.n, 10_400);
    // A turn of the event loop after each session's turn of 10 events: 260 sessions × 4 turns.
    assert.equal(report.scale.rotatingTurns.n, 1_040);
    assert.equal(report.scale.allDecodedTurns.n, 1_040);
    assert.ok(report.scale.heapBytesPerSession > 0);
    // The every-session-encoded row: at most 100 sessions, each event decoding and encoding its session.
    assert.equal(report.scale.allEncodedSessions, 100);
    assert.equal(report.scale.allEncoded.n, 4_000);
    assert.ok(report.scale.allEncodedHeapBytesPerSession > 0);
    // The figures in the message: a heap comparison that fails now and then under a loaded CI says by how much.
    const { allEncodedHeapBytesPerSession: encoded, allDecodedHeapBytesPerSession: decoded } = report.scale;
    assert.ok(encoded < decoded, `an encoded session keeps less than a decoded one (${encoded} B against ${decoded} B)`);
    assert.ok(report.scale.atRestHeapBytesPerSession > 0);
    assert.ok(report.scale.atRestHeapBytesPerSession < report.scale.allDecodedHeapBytesPerSession, 'sessions at rest keep less than decoded ones');
    for (const cell of report.breaker) {
      const where = `${cell.sessionEvents} events, ${cell.shape.argBytes} B`;
      assert.equal(cell.events, cell.sessions * cell.sessionEvents, where);
      assertSummary(cell.perEvent, where);
      // The event loop turns once after each session, out of the events' figures.
      assert.equal(cell.turns.n, cell.sessions, where);
      assertSummary(cell.turns, `${where} loop turns`);
      for (const kind of STEP_KINDS) assertSummary(cell.byKind[kind], `${where} ${kind}`);
      assert.ok(Number.isFinite(cell.heapBytesPerSession) && cell.heapBytesPerSession >= 0, `${where}: heap ${cell.heapBytesPerSession}`);
      assert.ok(cell.stateJsonBytes > 0, `${where}: no stored state`);
      // The parts are the state's JSON less its braces, keys and commas.
      const parts = Object.values(cell.stateJsonByPart).reduce((a, b) => a + b, 0);
      assert.ok(parts > 0 && parts < cell.stateJsonBytes, `${where}: parts ${parts} of ${cell.stateJsonBytes}`);
      // Heap by part is taken for the longest sessions of the main matrix only.
      const heapParts = Object.keys(cell.stateHeapByPart);
      if (cell.sessionEvents === 40 && cell.shape.textBytes === 300) assert.ok(heapParts.includes('tools'), `${where}: no heap by part`);
      else assert.equal(heapParts.length, 0, where);
      assert.deepEqual(cell.trips, {}, `${where}: a productive session tripped`);
    }

    const redis = report.redis;
    assert.ok('cells' in redis, 'Redis rows were skipped');
    assert.equal(redis.cells.length, 4);
    assertSummary(redis.ping, 'redis ping');
    const reading = redis.readingChecks;
    assert.ok(reading !== undefined);
    for (const cell of [...redis.cells, reading]) {
      assert.ok(cell.roundTripsPerEvent > 0 && Number.isFinite(cell.roundTripsPerEvent));
      assert.ok(cell.roundTripsPerEventAfterFirst > 0 && cell.roundTripsPerEventAfterFirst <= cell.roundTripsPerEvent);
      assert.ok((cell.byCommand['EVALSHA'] ?? 0) > 0, 'no compare-and-set was counted');
      assertSummary(cell.modelRound, 'redis model round');
      assert.deepEqual(cell.trips, {});
    }
    assert.equal(reading.checkFreshnessMs, 0);
    const atScale = redis.scale;
    assert.ok(atScale !== undefined);
    assert.equal(atScale.cached, 256);
    assert.equal(atScale.rotating.n, 4_000);
    assert.equal(atScale.allCached.n, 4_000);
    // Heap figures this small are within the noise of a run this short: only their presence is checked here.
    for (const bytes of [atScale.heapBytesPerSession, atScale.allCachedHeapBytesPerSession]) assert.ok(Number.isFinite(bytes) && bytes >= 0);
    // Checks that always read cost more round trips than checks that trust a fresh write.
    const sameCell = redis.cells.find((c) => c.sessionEvents === reading.sessionEvents && c.argBytes === reading.argBytes);
    assert.ok(sameCell !== undefined && reading.roundTripsPerEvent > sameCell.roundTripsPerEvent);

    const names = report.chatClient.variants.map((v) => v.name);
    assert.equal(names[0], 'bare doGenerate');
    assert.ok(names.includes('+ AgentBreaker') && names.includes('+ chat memory'));
    for (const v of report.chatClient.variants) {
      assertSummary(v.perCall, v.name);
      assert.equal(v.errors, 0, `${v.name}: calls failed`);
    }

    assert.equal(report.trips, 0);
    assert.ok(report.goals.length >= 4);
    for (const goal of report.goals) assert.equal(typeof goal.met, 'boolean', `${goal.goal}: not evaluated`);

    const text = formatOverheadReport(report);
    for (const heading of ['Machine:', '1. AgentBreaker', '2. Cost per step kind', '3. Memory per session', '4. RedisBreakerStore', '5. ChatClient', 'Goals']) {
      assert.ok(text.includes(heading), `missing ${heading}`);
    }
    assert.ok(!text.includes('NaN'), 'a figure is NaN');
    assert.match(
      text,
      /By part of the state \(40 events, 1 KB arguments\):\n {2}heap: .*\n {2}JSON: tools \d+\.\d KB.*\n {2}encoded \(before compression\): tools \d+\.\d KB/,
    );
    assert.ok(text.includes('No trip on any productive session.'));
    assert.match(text, /At scale: 260 sessions of 40 events.*\n.*keeps 256 decoded, the other 4 compressed/);
    assert.match(text, /At scale on Redis: 400 sessions of 10 events.*\n.*keeps 256 of them folded in this process/);
    assert.match(text, /none decoded \(100 sessions\) +\d+\.\d KB/);
    assert.match(
      text,
      /Encoding one such state \(encodeState\) takes \d+(\.\d)? µs, decoding it \d+(\.\d)? µs; compressing it\n\(compressState: encoding, then deflate\) \d+(\.\d)? µs, decompressing it \d+(\.\d)? µs/,
    );
    const memoryGoals = report.goals.filter((g) => g.goal.startsWith('≤ 8 KB per session') && g.goal.endsWith('in memory'));
    assert.deepEqual(
      memoryGoals.map((g) => /per session (at rest|in use)/.exec(g.figure)?.[1]),
      ['at rest', 'in use'],
      'the per-session memory goal is checked for sessions at rest and in use',
    );
    assert.match(text, /default, at rest \(\d+ sessions\) +\d+\.\d KB/);
    // The loop turns' column, in the cost table and at scale, where the default store's turns compress what the others' do not.
    assert.match(text, / Trips +loop turn p50 \/ mean\n/);
    assert.match(text, /every session decoded +\d+\.\d KB( +\d+(\.\d+)?){3} +\d+(\.\d+)? \/ \d+(\.\d+)?\n/);
    const eventGoal = report.goals.find((g) => g.goal.startsWith('≤ 10 µs per event in memory'));
    assert.match(eventGoal?.measured ?? '', /^\d+(\.\d)? µs \(\d+ events, 1 KB arguments\)$/);
    assert.deepEqual(JSON.parse(JSON.stringify(report)).settings, report.settings);
  });

  test('without a Redis server the Redis rows are skipped, saying why, and the rest is measured', async () => {
    const report = await runOverheadBenchmark({
      ...TINY,
      sessionLengths: [10],
      argBytes: [100],
      longTexts: false,
      redisUrl: 'redis://127.0.0.1:1',
    });
    assert.ok('skipped' in report.redis);
    assert.match(report.redis.skipped, /127\.0\.0\.1:1/);
    assert.equal(report.breaker.length, 1);
    const redisGoal = report.goals.find((g) => g.goal.includes('Redis'));
    assert.equal(redisGoal?.met, undefined);
    const text = formatOverheadReport(report);
    assert.match(text, /Skipped: no Redis server at redis:\/\/127\.0\.0\.1:1/);
  });
});
