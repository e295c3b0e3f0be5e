import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker, BreakerOpenError, ToolSpiralError, breakerErrorFor, type BreakerEventRecord } from './index.ts';
import type { BreakerStore } from './breaker-store.ts';
import { InMemoryBreakerStore } from './in-memory-breaker-store.ts';
import { BreakerDriver, ManualClock } from './test-support/breaker-driver.ts';

async function tripToOpen(d: BreakerDriver) {
  // allow, allow, steer, block, stop
  return d.repeat(5, 'get_status', { job: 'build' }, () => 'queued');
}

describe('breaker state machine', () => {
  test('CLOSED → OPEN on a stop; OPEN refuses model and tool calls with BreakerOpenError', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now });
    const d = new BreakerDriver(b, 's');
    const calls = await tripToOpen(d);
    const stop = calls[4]!.decision;
    assert.equal(stop.action, 'stop');
    assert.ok(breakerErrorFor(stop) instanceof ToolSpiralError);

    const snap = await b.snapshot('s');
    assert.equal(snap.state, 'OPEN');
    assert.equal(snap.openCategory, 'tool_spiral');
    assert.match(snap.openReason ?? '', /spiral/);

    const gate = await b.checkModelCall('s');
    assert.equal(gate.action, 'stop');
    assert.equal(gate.reason, 'breaker_open');
    const error = breakerErrorFor(gate);
    assert.ok(error instanceof BreakerOpenError);
    assert.equal((error as BreakerOpenError).category, 'tool_spiral');
    assert.equal((await b.checkToolCall('s', { tool: 'anything', args: {} })).action, 'stop');
    assert.deepEqual(await b.openSessions(), ['s']);
  });

  test('a stop decided on an observed event is given again by the next gate, unless the caller surfaced it', async () => {
    for (const surfaced of [false, true]) {
      const b = new AgentBreaker();
      const observe = (result: string) =>
        b.observe('s', { kind: 'tool_call', tool: 'get_status', args: { job: 'build' }, result, error: true }, surfaced ? { surfaced } : undefined);
      let last = await observe('HTTP 403: forbidden');
      for (let i = 0; i < 6 && last.action !== 'stop'; i++) last = await observe('HTTP 403: forbidden');
      assert.equal(last.action, 'stop');
      const gate = await b.checkModelCall('s');
      assert.equal(gate.action, 'stop');
      // Not surfaced: the gate gives the stop itself (its category's error); surfaced: the open breaker at once.
      assert.equal(gate.reason, surfaced ? 'breaker_open' : 'detection');
      assert.equal((await b.checkModelCall('s')).reason, 'breaker_open');
    }
  });

  test('after the cooldown the breaker half-opens; a clean probe round closes it', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now, cooldownMs: 30_000 });
    const events: BreakerEventRecord[] = [];
    b.on((e) => events.push(e));
    const d = new BreakerDriver(b, 's');
    await tripToOpen(d);

    clock.advance(29_999);
    assert.equal((await b.checkModelCall('s')).action, 'stop');
    clock.advance(1);
    assert.equal((await b.snapshot('s')).state, 'HALF_OPEN');
    const probe = await b.checkModelCall('s');
    assert.equal(probe.action, 'allow');
    assert.equal(probe.probe, true);
    await b.observe('s', { kind: 'model', promptTokens: 100, completionTokens: 10, text: 'Trying something else.' });
    assert.equal((await b.snapshot('s')).state, 'CLOSED');

    const changes = events.filter((e) => e.type === 'state_change').map((e) => `${e.from}→${e.to}`);
    assert.deepEqual(changes, ['CLOSED→OPEN', 'OPEN→HALF_OPEN', 'HALF_OPEN→CLOSED']);
  });

  test('a session whose cooldown has ended is no longer listed open, by the store or by the cache a store without listOpen leaves', async () => {
    const clock = new ManualClock();
    const memory = new InMemoryBreakerStore({ now: clock.now });
    // A custom store that cannot list its sessions: the breaker answers from what it saw.
    const unlisted: BreakerStore = {
      read: (id) => memory.read(id),
      apply: (id, op, reducer) => memory.apply(id, op, reducer),
      delete: (id) => memory.delete(id),
    };
    for (const store of [memory, unlisted]) {
      const b = new AgentBreaker({ now: clock.now, cooldownMs: 30_000, store, telemetry: false });
      await tripToOpen(new BreakerDriver(b, 'tripped'));
      clock.advance(10_000);
      await tripToOpen(new BreakerDriver(b, 'later'));
      assert.deepEqual(await b.openSessions(), ['later', 'tripped']);
      assert.deepEqual((await b.health()).open, ['later', 'tripped']);
      clock.advance(20_000);
      // 'tripped' would let its next request through as a probe: not open any more.
      assert.equal((await b.snapshot('tripped')).state, 'HALF_OPEN');
      assert.deepEqual(await b.openSessions(), ['later']);
      assert.deepEqual((await b.health()).open, ['later']);
      clock.advance(10_000);
      assert.deepEqual(await b.openSessions(), []);
      await memory.delete('tripped');
      await memory.delete('later');
    }
  });

  test('a new trip during HALF_OPEN re-opens at once', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now });
    const d = new BreakerDriver(b, 's');
    await tripToOpen(d);
    await b.reset('s');
    assert.equal((await b.snapshot('s')).state, 'HALF_OPEN');
    // The agent goes straight back to the same call: judged on the same evidence, stopped at once.
    const again = await b.checkToolCall('s', { tool: 'get_status', args: { job: 'build' } });
    assert.equal(again.action, 'stop');
    assert.equal((await b.snapshot('s')).state, 'OPEN');
  });

  test('reset() on an OPEN breaker half-opens it without waiting for the cooldown', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now, cooldownMs: 3_600_000 });
    const d = new BreakerDriver(b, 's');
    await tripToOpen(d);
    await b.reset('s');
    const probe = await b.checkModelCall('s');
    assert.equal(probe.action, 'allow');
    assert.equal(probe.probe, true);
  });

  test('a session that reports no model rounds closes on its first clean action after the cooldown or a reset, and a later loop climbs the whole ladder', async () => {
    // An error loop: what a fresh session does with it, and what a session that half-opened must do with it once closed.
    const errorLoop = (d: BreakerDriver) => d.repeat(5, 'run_tests', {}, () => 'FAILED: assertion x', true);
    const fresh = (await errorLoop(new BreakerDriver(new AgentBreaker(), 'fresh'))).map((c) => c.decision.action);
    assert.deepEqual(fresh, ['allow', 'allow', 'steer', 'block', 'stop']);
    for (const halfOpen of ['cooldown', 'reset'] as const) {
      const clock = new ManualClock();
      const b = new AgentBreaker({ now: clock.now, cooldownMs: 30_000 });
      const changes: string[] = [];
      b.on((e) => {
        if (e.type === 'state_change') changes.push(`${e.from}→${e.to}`);
      });
      // Tool calls only, as the MCP proxy reports them.
      const d = new BreakerDriver(b, 's');
      await tripToOpen(d);
      if (halfOpen === 'cooldown') clock.advance(30_000);
      else await b.reset('s');
      assert.equal((await b.snapshot('s')).state, 'HALF_OPEN', halfOpen);
      // A user turn is not the agent acting: it proves nothing about the loop.
      await d.user('Any news?');
      assert.equal((await b.snapshot('s')).state, 'HALF_OPEN', halfOpen);
      // The probe: the first call after half-opening, run and observed without a detection.
      assert.equal((await d.tool('read_file', { path: 'src/a.ts' }, 'export const a = 1;')).decision.action, 'allow');
      assert.equal((await b.snapshot('s')).state, 'CLOSED', halfOpen);
      assert.deepEqual(changes, ['CLOSED→OPEN', 'OPEN→HALF_OPEN', 'HALF_OPEN→CLOSED'], halfOpen);
      // Closed, so a new kind of loop is steered and blocked before it is stopped, as in a fresh session.
      assert.deepEqual(
        (await errorLoop(d)).map((c) => c.decision.action),
        fresh,
        halfOpen,
      );
    }
  });

  test('while HALF_OPEN every model call is a probe, judged strictly: a retry of a failed probe round is not refused', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now, cooldownMs: 30_000 });
    const d = new BreakerDriver(b, 's');
    for (let i = 0; i < 5; i++) {
      await d.model();
      await d.tool('get_status', { job: 'build' }, 'queued');
    }
    clock.advance(30_000);
    assert.deepEqual(await b.checkModelCall('s'), { action: 'allow', probe: true });
    // The probe's request failed (a 429 the client retries): nothing was reported, and the retry goes through.
    assert.deepEqual(await b.checkModelCall('s'), { action: 'allow', probe: true });
    // Strictly judged: the loop coming back in any probe stops at once.
    assert.equal((await d.tool('get_status', { job: 'build' }, 'queued')).decision.action, 'stop');
    assert.equal((await b.snapshot('s')).state, 'OPEN');
    clock.advance(30_000);
    assert.deepEqual(await b.checkModelCall('s'), { action: 'allow', probe: true });
    // In a session with model rounds a clean tool call is no probe: the round is.
    await d.tool('read_file', { path: 'src/a.ts' }, 'export const a = 1;');
    assert.equal((await b.snapshot('s')).state, 'HALF_OPEN');
    await b.observe('s', { kind: 'model', promptTokens: 100, completionTokens: 10, text: 'Trying something else.' });
    assert.equal((await b.snapshot('s')).state, 'CLOSED');
    assert.deepEqual(await b.checkModelCall('s'), { action: 'allow' });
  });

  test('the escalation ladder is per category and configurable', async () => {
    const b = new AgentBreaker({ toolSpiral: { escalation: ['block', 'stop'] } });
    const d = new BreakerDriver(b, 's');
    const calls = await d.repeat(4, 'get_status', { job: 'build' }, () => 'queued');
    assert.deepEqual(
      calls.map((c) => c.decision.action),
      ['allow', 'allow', 'block', 'stop'],
    );
  });

  test('a stop waits for a model round after the rung below it: parallel calls of one round are blocked, not stopped', async () => {
    const b = new AgentBreaker();
    const d = new BreakerDriver(b, 's');
    await d.model('Reading the status five times at once.');
    const parallel = await d.repeat(6, 'get_status', { job: 'build' }, () => 'queued');
    assert.deepEqual(
      parallel.map((c) => c.decision.action),
      ['allow', 'allow', 'steer', 'block', 'block', 'block'],
    );
    assert.equal((await b.snapshot('s')).state, 'CLOSED');
    assert.equal((await b.snapshot('s')).escalations.tool_spiral, 2, 'held on the block rung');
    // The next round reads the steer and the blocks; repeating the call after that is the loop going on.
    assert.equal(await d.model('Once more.').then((v) => v.action), 'allow');
    const next = await d.tool('get_status', { job: 'build' }, 'queued');
    assert.equal(next.decision.action, 'stop');
    assert.ok(ToolSpiralError.isInstance(breakerErrorFor(next.decision)));
  });

  test('the same calls one per round climb the whole ladder, and so do sessions that report no model rounds', async () => {
    const perRound = new BreakerDriver(new AgentBreaker(), 's');
    const actions: string[] = [];
    for (let i = 0; i < 5; i++) {
      await perRound.model();
      actions.push((await perRound.tool('get_status', { job: 'build' }, 'queued')).decision.action);
    }
    assert.deepEqual(actions, ['allow', 'allow', 'steer', 'block', 'stop']);
    // Tool calls only (an MCP proxy sees no model rounds): nothing marks a round, so nothing is held.
    const calls = await tripToOpen(new BreakerDriver(new AgentBreaker(), 't'));
    assert.deepEqual(
      calls.map((c) => c.decision.action),
      ['allow', 'allow', 'steer', 'block', 'stop'],
    );
  });

  test('a call that is only observed (it has run) reaches the block rung with a note, never "NOT executed"; a checked call is refused', async () => {
    const observed = new AgentBreaker({ telemetry: false });
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      await observed.observe('s', { kind: 'model', promptTokens: 10, completionTokens: 5, text: 'Opening it again.' });
      decisions.push(await observed.observe('s', { kind: 'tool_call', tool: 'open_page', args: { url: 'https://a.example' }, result: null }));
    }
    assert.deepEqual(
      decisions.map((d) => d.action),
      ['allow', 'allow', 'steer', 'block'],
    );
    assert.doesNotMatch(decisions[3]!.message ?? '', /NOT executed/);
    assert.match(decisions[3]!.message ?? '', /"open_page" 4 times/);
    const checked = new BreakerDriver(new AgentBreaker({ telemetry: false }), 't');
    const calls = await checked.repeat(4, 'open_page', { url: 'https://a.example' }, () => '');
    assert.equal(calls[3]!.decision.action, 'block');
    assert.match(calls[3]!.decision.message ?? '', /^This call was NOT executed\./);
  });

  test('after the cooldown, the loop coming back is stopped at its first repeat', async () => {
    const clock = new ManualClock();
    const b = new AgentBreaker({ now: clock.now, cooldownMs: 1_000 });
    const d = new BreakerDriver(b, 's');
    const actions: string[] = [];
    for (let i = 0; i < 5; i++) {
      await d.model();
      actions.push((await d.tool('get_status', { job: 'build' }, 'queued')).decision.action);
    }
    assert.deepEqual(actions, ['allow', 'allow', 'steer', 'block', 'stop']);
    clock.advance(1_000);
    assert.equal((await d.model('Probing.')).action, 'allow');
    assert.equal((await b.snapshot('s')).state, 'CLOSED');
    assert.equal((await d.tool('get_status', { job: 'build' }, 'queued')).decision.action, 'stop');
  });

  test('every escalation and state change is an event with category, action, session and evidence', async () => {
    const b = new AgentBreaker();
    const events: BreakerEventRecord[] = [];
    const off = b.on((e) => events.push(e));
    b.on(() => {
      throw new Error('a broken listener must not break the breaker');
    });
    const d = new BreakerDriver(b, 'sess-42');
    await tripToOpen(d);
    off();
    await b.checkModelCall('sess-42');
    const escalations = events.filter((e) => e.type === 'escalation');
    assert.deepEqual(
      escalations.map((e) => e.action),
      ['steer', 'block', 'stop'],
    );
    for (const e of escalations) {
      assert.equal(e.sessionId, 'sess-42');
      assert.equal(e.category, 'tool_spiral');
      assert.equal(typeof e.evidence?.repeats, 'number');
    }
    assert.deepEqual(
      escalations.map((e) => e.evidence?.detection),
      [1, 2, 3],
    );
    assert.equal(events.filter((e) => e.type === 'state_change').length, 1);
  });

  test('sessions are independent', async () => {
    const b = new AgentBreaker();
    await tripToOpen(new BreakerDriver(b, 'a'));
    assert.equal((await b.checkModelCall('b')).action, 'allow');
    assert.equal((await b.snapshot('b')).state, 'CLOSED');
  });
});
