import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { actions, BreakerDriver } from '../test-support/breaker-driver.ts';

const driver = (options?: ConstructorParameters<typeof AgentBreaker>[0]) => new BreakerDriver(new AgentBreaker(options));

describe('tool spiral', () => {
  test('identical calls with identical results are caught before the repeat runs', async () => {
    const d = driver();
    const calls = await d.repeat(3, 'search_docs', { query: 'reset password' }, () => 'No documents found.');
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer']);
    const third = calls[2]!;
    assert.equal(third.check.action, 'steer', 'judged in checkToolCall, before the call executes');
    assert.equal(third.check.category, 'tool_spiral');
    assert.equal(third.check.evidence?.repeats, 3);
    assert.match(third.check.message ?? '', /search_docs/);
  });

  test('near-identical calls need maxRepeats, identical ones maxIdenticalRepeats', async () => {
    const d = driver({ toolSpiral: { maxRepeats: 5, maxIdenticalRepeats: 2 } });
    assert.deepEqual(actions(await d.repeat(2, 'get_quote', { sku: 'A' }, () => '$5')), ['allow', 'steer']);
    const varied = driver({ toolSpiral: { maxRepeats: 5, maxIdenticalRepeats: 2 } });
    const base = 'quarterly revenue report for the emea region';
    const calls = [];
    for (const q of [base, `${base} please`, `the ${base}`, `${base} now`, `latest ${base}`]) {
      calls.push(await varied.tool('web_search', { query: q }, 'Top results: a, b, c'));
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'allow', 'steer']);
  });

  test('re-spelled requests that keep returning the same result are repeats; a sweep over ids is not', async () => {
    const d = driver();
    const calls = [];
    for (const query of ['pods evicted at night', 'why pods evicted at night', 'pods evicted every night', 'pods get evicted at night']) {
      calls.push(await d.tool('web_search', { query, num_results: 5 }, '1. Node-pressure eviction — https://docs.example.com/eviction'));
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'steer']);
    const sweep = driver();
    const lookups = [];
    for (let id = 1; id <= 6; id++) lookups.push(await sweep.tool('get_order', { order_id: `#W${id}` }, 'Order not found.'));
    assert.deepEqual(new Set(actions(lookups)), new Set(['allow']));
  });

  test('slightly varied arguments are still a spiral', async () => {
    const d = driver();
    const base = 'spring boot 3 throughput benchmark results for 2026 on linux servers';
    const queries = [base, `${base} please`, `latest ${base}`, `${base} now`];
    const calls = [];
    for (const q of queries) calls.push(await d.tool('web_search', { query: q }, 'Top results: a, b, c'));
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'steer']);
    assert.ok((calls[3]!.decision.evidence?.similarity ?? 0) < 1);
  });

  test('escalates steer → block → stop while the spiral goes on', async () => {
    const d = driver();
    const calls = await d.repeat(5, 'get_status', { job: 'build' }, () => 'queued');
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer', 'block', 'stop']);
    assert.equal(calls[3]!.observed, undefined, 'a blocked call is not executed');
    assert.match(calls[3]!.decision.message ?? '', /NOT executed/);
    assert.equal(calls[4]!.decision.reason, 'detection');
  });

  test('pagination and chunked reads with the same arguments but new data are progress', async () => {
    const d = driver();
    const calls = await d.repeat(8, 'read_log', { file: 'build.log' }, (i) => `lines ${i * 100}..${i * 100 + 99}: ...`);
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('scrolling with no arguments but new output each time is progress', async () => {
    const d = driver();
    const calls = await d.repeat(8, 'scroll_down', '', (i) => `[File: a.py (900 lines)] ${i * 100 + 1}: def f${i}():`);
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('reading many different files is not a spiral', async () => {
    const d = driver();
    const calls = [];
    for (let i = 0; i < 10; i++) calls.push(await d.tool('read_file', { path: `src/module${i}.ts` }, 'export {}'));
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a sweep over different ids or dates is not a spiral', async () => {
    const d = driver();
    const calls = [];
    for (let day = 10; day < 20; day++) {
      calls.push(await d.tool('search_direct_flight', { origin: 'JFK', destination: 'SFO', date: `2024-05-${day}` }, '[]'));
    }
    for (let id = 0; id < 6; id++)
      calls.push(await d.tool('modify_pending_order_address', { order_id: `#W${id}`, address1: '1 Main St', city: 'Austin' }, 'ok'));
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('polling between user turns (outside events) is not a spiral', async () => {
    const d = driver();
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(await d.tool('check_device_status', { device: 'phone' }, 'No signal'));
      await d.user('I toggled airplane mode, can you check again?');
    }
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a bare acknowledgement between the calls is not new information: the spiral is caught across it', async () => {
    const d = driver();
    const calls = [];
    for (const ack of ['ok', 'please continue', '👍']) {
      calls.push(await d.tool('get_order_details', { order_id: '#W2462924' }, '{"status":"processed"}'));
      await d.user(ack);
    }
    assert.equal(actions(calls).at(-1), 'steer');
    assert.equal(calls.at(-1)?.decision.category, 'tool_spiral');
    // In unspaced scripts a character pair is half a word: "please" in Japanese is no news either.
    const ja = driver();
    const looped = [];
    for (const ack of ['お願いします', '続けて', 'はい']) {
      looped.push(await ja.tool('get_order_details', { order_id: '#W2462924' }, '{"status":"processed"}'));
      await ja.user(ack);
    }
    assert.equal(actions(looped).at(-1), 'steer');
    // A sentence does reset the evidence, in any script.
    const told = driver();
    const rechecked = [];
    for (let i = 0; i < 3; i++) {
      rechecked.push(await told.tool('get_order_details', { order_id: '#W2462924' }, '{"status":"processed"}'));
      await told.user('住所を変更しましたので、もう一度確認してください');
    }
    assert.deepEqual(new Set(actions(rechecked)), new Set(['allow']));
  });

  test('a polled status that changes is progress', async () => {
    const d = driver();
    const states = ['queued', 'running 10%', 'running 40%', 'running 80%', 'running 95%', 'done'];
    const calls = [];
    for (const s of states) calls.push(await d.tool('get_job', { id: 'j1' }, `{"state":"${s}","at":"2024-05-01T10:00:0${calls.length}Z"}`));
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a result that differs only in timestamps or request ids is not new', async () => {
    const d = driver();
    const calls = [];
    for (let i = 0; i < 3; i++) {
      calls.push(
        await d.tool(
          'get_job',
          { id: 'j1' },
          `{"state":"running","checked_at":"2024-05-01T10:00:0${i}Z","request":"0d9f${i}c2e-1111-4a4a-9b9b-00000000000${i}"}`,
        ),
      );
    }
    assert.equal(calls[2]!.decision.action, 'steer');
  });

  test('a state-changing call in between (edit, then re-run) restarts the count', async () => {
    const d = driver();
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(await d.tool('run_tests', { target: 'all' }, '3 passed, 1 failed'));
      await d.tool('write_file', { path: 'src/a.ts', content: `attempt ${i}` }, 'ok');
    }
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test("a writing tool's rewrites, each with one more line fixed, are progress though it answers the same each time", async () => {
    const lines = Array.from({ length: 30 }, (_, k) => `export function route${k}(req, res) { return res.json({ id: ${k} }); }`);
    const rewrite = (fixed: number) =>
      lines.map((line, k) => (k % 4 === 0 && k / 4 < fixed ? line.replace('res.json(', 'res.status(200).json(') : line)).join('\n');
    for (const tool of ['write_file', 'mcp__filesystem__write_file', 'edit_file']) {
      const d = driver();
      const calls = [];
      for (let i = 1; i <= 8; i++)
        calls.push(await d.tool(tool, { path: '/work/src/routes.ts', content: rewrite(i) }, 'Successfully wrote to /work/src/routes.ts'));
      assert.deepEqual(new Set(actions(calls)), new Set(['allow']), tool);
    }
    // The very same content written again and again changes nothing after the first time.
    const same = driver();
    const calls = await same.repeat(4, 'write_file', { path: '/work/src/routes.ts', content: rewrite(3) }, () => 'Successfully wrote to /work/src/routes.ts');
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer', 'block']);
  });

  test('a tool that may only read, reworded and answering the same, is still a spiral; so is a writer the caller calls read-only', async () => {
    const shell = driver();
    const calls = [];
    for (const command of [
      'grep -rn "to_minor_units(" .',
      "grep -rn 'to_minor_units(' .",
      'grep -rn "to_minor_units(" . --color=never',
      'grep -nr "to_minor_units(" ./',
    ]) {
      calls.push(await shell.tool('run_command', { command }, './src/payments/amounts.py:50:def to_minor_units(request):'));
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'steer']);
    const listed = driver({ readOnlyTools: ['update_index'] });
    const updates = [];
    for (const q of ['pods evicted at night', 'why pods evicted at night', 'pods evicted every night', 'pods get evicted at night']) {
      updates.push(await listed.tool('update_index', { query: q }, 'Index unchanged.'));
    }
    assert.deepEqual(actions(updates), ['allow', 'allow', 'allow', 'steer']);
  });

  test('a spiral across interleaved no-news calls (think) is still caught', async () => {
    const d = driver();
    const calls = [];
    for (let i = 0; i < 3; i++) {
      calls.push(await d.tool('lookup_policy', { topic: 'refunds' }, 'Refunds take 5 days.'));
      await d.tool('think', { thought: `hmm ${i}` }, '');
    }
    assert.equal(calls[2]!.decision.action, 'steer');
  });

  test('per-tool overrides: disabled for one tool, stricter for another', async () => {
    const b = new AgentBreaker({ toolSpiral: { perTool: { clock: { enabled: false }, get_quote: { maxRepeats: 2 } } } });
    const d = new BreakerDriver(b);
    assert.deepEqual(new Set(actions(await d.repeat(8, 'clock', {}, () => '12:00'))), new Set(['allow']));
    assert.deepEqual(actions(await d.repeat(2, 'get_quote', { sku: 'A' }, () => '$5')), ['allow', 'steer']);
  });

  test('identical Japanese arguments trip; different Japanese arguments do not', async () => {
    const same = driver();
    const tripped = await same.repeat(3, 'search', { query: '東京の天気を教えてください' }, () => '晴れ');
    assert.equal(tripped[2]!.decision.action, 'steer');

    const different = driver();
    const queries = ['東京の天気を教えてください', '大阪の人口はどれくらいですか', '札幌でおすすめのラーメン店', '京都の紅葉の見頃はいつ'];
    const calls = [];
    for (const q of queries) calls.push(await different.tool('search', { query: q }, '結果なし'));
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a caller that only observes still gets the verdict on the repeat', async () => {
    const b = new AgentBreaker();
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await b.observe('s', { kind: 'tool_call', tool: 'ping', args: { host: 'db' }, result: 'timeout-free pong' }));
    assert.deepEqual(
      decisions.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
  });

  test('a check followed by the observation of the same call escalates once', async () => {
    const b = new AgentBreaker();
    const events: string[] = [];
    b.on((e) => events.push(`${e.type}:${e.action ?? ''}`));
    const d = new BreakerDriver(b, 's');
    await d.repeat(3, 'ping', { host: 'db' }, () => 'pong');
    assert.deepEqual(events, ['escalation:steer']);
    assert.equal((await b.snapshot('s')).escalations.tool_spiral, 1);
  });
});
