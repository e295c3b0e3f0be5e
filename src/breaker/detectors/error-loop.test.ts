import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { actions, BreakerDriver } from '../test-support/breaker-driver.ts';

const booking = { user_id: 'mia_1', flights: [{ flight_number: 'HAT136', date: '2024-05-20' }], payment_id: 'credit_card_1', amount: 255 };
const rejected = 'Error: payment amount does not add up, total price is 305, but paid 255';

describe('error loop', () => {
  test('the same call failing with the same error is caught before the third attempt', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = await d.repeat(3, 'book_reservation', booking, () => rejected, true);
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer']);
    assert.equal(calls[2]!.check.category, 'error_loop');
    assert.equal(calls[2]!.check.evidence?.transient, false);
    assert.match(calls[2]!.check.message ?? '', /same error/);
  });

  test('a retry with a fresh idempotency key, trace id or attempt counter is the same failing call', async () => {
    const retried = [
      (i: number) => ({ amount: 100, currency: 'usd', idempotency_key: `k-${i}` }),
      (i: number) => ({ path: '/etc/x', attempt: i }),
      (i: number) => ({ path: '/etc/x', traceId: `4bf92f3577b34da6a3ce929d0e0e47${i}` }),
    ];
    for (const args of retried) {
      const d = new BreakerDriver(new AgentBreaker());
      const calls = [];
      for (let i = 1; i <= 3; i++) calls.push(await d.tool('create_charge', args(i), 'Error: card_declined', true));
      assert.deepEqual(actions(calls), ['allow', 'allow', 'steer'], JSON.stringify(args(1)));
      assert.equal(calls[2]!.decision.category, 'error_loop');
    }
    // Named exactly in identityKeys, such a field is compared exactly again: each attempt is another call.
    const own = new BreakerDriver(new AgentBreaker({ identityKeys: ['attempt'] }));
    const calls = [];
    for (let i = 1; i <= 4; i++) calls.push(await own.tool('create_charge', { path: '/etc/x', attempt: i }, 'Error: card_declined', true));
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
    // A request id is what a tool may act on: a sweep over requests failing alike is no loop.
    const sweep = new BreakerDriver(new AgentBreaker());
    const lookups = [];
    for (let i = 1; i <= 4; i++) lookups.push(await sweep.tool('get_request', { request_id: `R-${i}` }, 'Error: not found', true));
    assert.deepEqual(new Set(actions(lookups)), new Set(['allow']));
  });

  test('escalates steer → block → stop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = await d.repeat(5, 'book_reservation', booking, () => rejected, true);
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer', 'block', 'stop']);
  });

  test('a lookup that fails again within a newly retrieved page is a new request', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (const page of ['The Mothman was first reported in 1966.', 'The jackalope story dates from the 1930s.', 'The Lizard Man was reported in 1988.']) {
      await d.retrieval('creature of folklore', [page]);
      calls.push(await d.tool('lookup', { keyword: '1964' }, 'No Results', true));
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow']);
    // The same page again brings nothing new: the failing lookup is a loop.
    const same = new BreakerDriver(new AgentBreaker());
    const again = [];
    for (let i = 0; i < 3; i++) {
      await same.retrieval('creature of folklore', ['The Mothman was first reported in 1966.']);
      again.push(await same.tool('lookup', { keyword: '1964' }, 'No Results', true));
    }
    assert.deepEqual(actions(again), ['allow', 'allow', 'steer']);
    assert.equal(again[2]!.check.category, 'error_loop');
  });

  test('a request reworded again and again and rejected with the very same error each time is a loop from the fourth attempt', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (const query of ['sugar free lemonade concentrate', 'sugar free lemonade', 'sugar free lemonade drink mix', 'sugar free lemonade drink powder']) {
      calls.push(await d.tool('search', { query }, 'Invalid action!', true));
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'steer']);
    assert.equal(calls[3]!.check.evidence?.pattern, 'same_error_reworded');
  });

  test('different requests rejected with the same error are not one request reworded', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (const title of ['Brass desk lamp with dimmer', 'Oak bookshelf, five shelves', 'Wool rug 120x170 grey', 'Ceramic vase set of 3']) {
      calls.push(await d.tool('click', { target: title }, 'Invalid action!', true));
    }
    assert.ok(calls.every((c) => c.decision.action === 'allow'));
  });

  test('reads in between do not hide the loop, nor do user turns', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (let i = 0; i < 3; i++) {
      calls.push(await d.tool('book_reservation', booking, rejected, true));
      await d.tool('think', { thought: `the amount must be wrong ${i}` }, '');
      await d.tool('get_user_details', { user_id: 'mia_1' }, '{"name":"Mia"}');
      await d.user('Can you try again?');
    }
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer']);
  });

  test('resetOnUserEvent makes a user turn clear the evidence', async () => {
    const d = new BreakerDriver(new AgentBreaker({ errorLoop: { resetOnUserEvent: true } }));
    const calls = [];
    for (let i = 0; i < 4; i++) {
      calls.push(await d.tool('book_reservation', booking, rejected, true));
      await d.user('Try again please.');
    }
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a retry that changes what the error names (another payment method) is not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (const card of ['gift_card_1', 'gift_card_2', 'certificate_3', 'credit_card_4']) {
      calls.push(
        await d.tool(
          'update_reservation_flights',
          { reservation_id: 'R1', cabin: 'business', payment_id: card },
          'Error: gift card balance is not enough',
          true,
        ),
      );
    }
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('edit–test cycles where the code changes are not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const runs = [];
    for (let i = 0; i < 6; i++) {
      runs.push(await d.tool('bash', 'python -m pytest tests/test_parser.py', 'FAILED tests/test_parser.py::test_dates - AssertionError', true));
      await d.tool('edit_file', { path: 'parser.py', patch: `attempt ${i}: handle the timezone offset case ${i}` }, 'File updated.');
    }
    assert.deepEqual(new Set(actions(runs)), new Set(['allow']));
  });

  test('bounded retries after 503 / 429 / timeouts are allowed', async () => {
    for (const outage of ['Error: 503 Service Unavailable', 'Error: 429 Too Many Requests', 'Error: request timed out after 30s', 'Error: ECONNRESET']) {
      const d = new BreakerDriver(new AgentBreaker());
      const calls = await d.repeat(3, 'get_order_details', { order_id: '#W1' }, (i) => (i < 2 ? outage : '{"order_id":"#W1"}'), false);
      assert.deepEqual(new Set(actions(calls)), new Set(['allow']), outage);
      // The agent moves on to other orders, each with its own bounded retries.
      const more = await d.repeat(4, 'get_order_details', { order_id: '#W2' }, () => outage, true);
      assert.deepEqual(new Set(actions(more)), new Set(['allow']), outage);
    }
  });

  test('an outage retried without end is caught at the transient limit, as an outage', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = await d.repeat(5, 'get_order_details', { order_id: '#W1' }, () => 'Error: 503 Service Unavailable', true);
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'allow', 'steer']);
    assert.equal(calls[4]!.decision.evidence?.transient, true);
    assert.match(calls[4]!.decision.message ?? '', /unavailable/i);
  });

  test('a user turn restarts the count of transient retries', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const outage = () => 'Error: 503 Service Unavailable';
    const first = await d.repeat(4, 'get_order_details', { order_id: '#W1' }, outage, true);
    await d.user('Could you try once more?');
    const second = await d.repeat(4, 'get_order_details', { order_id: '#W1' }, outage, true);
    assert.deepEqual(new Set(actions([...first, ...second])), new Set(['allow']));
  });

  test('errors not flagged as such but reading like one count too', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const calls = await d.repeat(3, 'get_user_details', { user_id: 'amelia_silva_872' }, () => 'Error: user not found');
    assert.equal(calls[2]!.decision.category, 'error_loop');
  });

  test('an edit rejected as malformed, retried with only views of the file in between through the same editor tool, is a loop', async () => {
    // Modelled on a real coding run: str_replace without old_str, three times, views between.
    const path = '/repo/packages/cli/command_parser.pony';
    const edit = { path, command: 'str_replace', start: 1, end: -1 };
    const malformed = 'ERROR:\nParameter `old_str` is required for command: str_replace.';
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (const range of [
      [100, 110],
      [100, 102],
    ]) {
      calls.push(await d.tool('str_replace_editor', edit, malformed, true));
      await d.tool(
        'str_replace_editor',
        { path, start: 0, end: -1, view_range: range },
        `Here's the result of running \`cat -n\` on ${path}:\n   ${range[0]}\t| let cs: CommandSpec box =>`,
      );
      await d.tool('execute_bash', { command: `grep -n "_parse_command" ${path}` }, `${range[1]}:    _parse_command(tokens, options)`);
    }
    calls.push(await d.tool('str_replace_editor', edit, malformed, true));
    assert.deepEqual(actions(calls), ['allow', 'allow', 'steer']);
    assert.equal(calls[2]!.check.category, 'error_loop');
    assert.equal(calls[2]!.check.evidence?.pattern, 'same_error');
  });

  test('a request that failed for what the world holds, retried after other actions, is not a malformed request', async () => {
    // Modelled on a real productive coding run: create fails because the file exists, views between.
    const path = '/workspace/reproduce_issue.py';
    const create = { path, command: 'create', file_text: 'from django.db import models\nprint(models.Count)' };
    const exists = `ERROR:\nInvalid \`path\` parameter: ${path}. File already exists at: ${path}. Cannot overwrite files using command \`create\`.`;
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [];
    for (let i = 0; i < 3; i++) {
      calls.push(await d.tool('str_replace_editor', create, exists, true));
      await d.tool(
        'str_replace_editor',
        { path, command: 'view', view_range: [1, 10 + i] },
        `Here's the result of running \`cat -n\` on ${path}:\n     1\tfrom django.db import models ${i}`,
      );
      await d.tool('execute_bash', { command: `rm ${path}` }, `rm ${path}`);
    }
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('a malformed request that the agent then fixes is not a loop', async () => {
    const path = '/workspace/reproduce_tz_issue.py';
    const d = new BreakerDriver(new AgentBreaker());
    const calls = [
      await d.tool(
        'str_replace_editor',
        { path, command: 'str_replace', old_str: '', new_str: "'TIME_ZONE': 'UTC'," },
        'ERROR:\nParameter `old_str` is required for command: str_replace.',
        true,
      ),
      await d.tool('str_replace_editor', { path, command: 'view' }, `Here's the result of running \`cat -n\` on ${path}:\n     1\timport os`),
      await d.tool(
        'str_replace_editor',
        { path, command: 'str_replace', old_str: "'HOST': 'localhost',", new_str: "'HOST': 'localhost', 'TIME_ZONE': 'UTC'," },
        'The file has been edited.',
      ),
      await d.tool('execute_bash', { command: `python3 ${path}` }, 'Normalized: 2017-07-06 20:50:00+02:00'),
    ];
    assert.deepEqual(new Set(actions(calls)), new Set(['allow']));
  });

  test('per-tool overrides', async () => {
    const d = new BreakerDriver(new AgentBreaker({ errorLoop: { perTool: { submit: { maxRepeats: 5 } } } }));
    const calls = await d.repeat(5, 'submit', 'flag{guess}', () => 'Wrong flag!', true);
    assert.deepEqual(actions(calls), ['allow', 'allow', 'allow', 'allow', 'steer']);
  });
});
