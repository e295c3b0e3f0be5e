import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requireRedis } from '../src/test-support/services.ts';
import { formatContentionReport, runContentionBenchmark } from './contention.ts';

describe('contention benchmark', () => {
  test('small run: every event sent is recorded, in one process and in several, and the tables print', async () => {
    const url = await requireRedis();
    const report = await runContentionBenchmark(url, { writers: 3, eventsPerWriter: 20, repeats: 1, longSession: 30 });
    assert.deepEqual(
      report.contention.map((c) => c.mode),
      ['one process', 'separate processes'],
    );
    for (const c of report.contention) {
      const run = c.runs[0]!;
      assert.ok(run.sent > 0 && run.sent <= 60, `${c.mode}: sent ${run.sent}`);
      assert.equal(run.recorded, run.sent, `${c.mode}: recorded`);
      assert.equal(run.warnings, 0);
      assert.equal(run.unjudged, 0);
      assert.ok(run.p50 > 0 && run.p50 <= run.p90);
    }
    assert.deepEqual(
      report.cost.stored.map((s) => [s.session, s.from, s.to]),
      [
        ['tool calls', 10, 10],
        ['every kind', 10, 10],
        ['every kind, 4 KB', 10, 10],
      ],
    );
    for (const stored of report.cost.stored) {
      assert.ok(stored.redisBytes.min > 0 && stored.redisBytes.min === stored.redisBytes.max, `${stored.session}: one reading`);
      // Ten operations of 1 KB arguments, 300 B replies or 4 KB replies pass 1 KB of log: a snapshot is stored before the 10th.
      assert.ok(stored.snapshotBytes > 0 && stored.maxLogLength < 10, `${stored.session}: log of ${stored.maxLogLength}`);
    }
    assert.ok(report.cost.windows.length > 0 && report.cost.windows.every((w) => w.ping > 0 && w.observe > 0 && w.observeP90 >= w.observe));
    for (const w of report.cost.windows) {
      // The parts of an observe: each takes time, and none as long as the observe itself.
      for (const part of [w.beforeSend, w.sendToReply, w.afterReply]) assert.ok(part > 0 && part < w.observe, JSON.stringify(w));
      // Checked first: an observe of its own, a round trip and more, with a PING of its own.
      const c = w.checked;
      assert.ok(c.ping > 0 && c.observe > c.ping && c.beforeSend > 0 && c.beforeSend < c.observe, JSON.stringify(c));
    }
    // The append script does more on the server than a PING: the figure that says how much of the cost is Redis's own.
    const server = report.cost.server;
    assert.ok(server.append > server.ping && server.ping > 0, JSON.stringify(server));
    // Each append runs at least TIME, HMGET and RPUSH, within the script's own time.
    assert.ok(server.inScript > 0 && server.inScript < server.append, JSON.stringify(server));
    const text = formatContentionReport(report);
    assert.match(text, /separate processes/);
    assert.match(text, /On the server \(INFO commandstats over the timed runs\): \d+\.\d µs per append script \(\d+\.\d µs of it in the/);
    assert.match(text, /recorded = sent, 0 warnings, 0 unjudged: met/);
    assert.match(text, /before the send {2}send to reply {2}reply − PING {2}after the reply\n {2}1–10 +\d/);
    assert.match(text, /Checked first, as the adapters call a tool/);
    assert.match(text, /observe {6}PING {2}ratio {2}before the send\n {2}1–10 +\d/);
  });
});
