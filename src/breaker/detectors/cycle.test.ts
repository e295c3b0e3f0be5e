import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver, type DrivenToolCall } from '../test-support/breaker-driver.ts';

async function run(d: BreakerDriver, steps: ReadonlyArray<[string, unknown, string]>): Promise<DrivenToolCall[]> {
  const out: DrivenToolCall[] = [];
  for (const [tool, args, result] of steps) out.push(await d.tool(tool, args, result));
  return out;
}

const firstTrip = (calls: readonly DrivenToolCall[]) => calls.findIndex((c) => c.decision.action !== 'allow');

describe('cycle', () => {
  test('A↔B alternation with unchanged results is caught as it starts its third round', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const a: [string, unknown, string] = ['open', 'config.yaml', 'port: 80'];
    const b: [string, unknown, string] = ['open', 'defaults.yaml', 'port: 8080'];
    const calls = await run(d, [a, b, a, b, a, b]);
    assert.equal(firstTrip(calls), 4);
    const decision = calls[4]!.decision;
    assert.equal(decision.category, 'cycle');
    assert.equal(decision.evidence?.period, 2);
    assert.equal(calls[4]!.check.action, 'steer', 'judged before the call runs');
  });

  test('a period-3 cycle with slightly varied arguments is caught', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const steps: Array<[string, unknown, string]> = [];
    for (let round = 0; round < 3; round++) {
      steps.push(['search_orders', { query: `pending orders for customer alice smith ${round === 1 ? 'please' : ''}`.trim() }, 'orders: #1, #2']);
      steps.push(['get_order', { order_id: '#1' }, '{"id":"#1","status":"pending"}']);
      steps.push(['get_order', { order_id: '#2' }, '{"id":"#2","status":"pending"}']);
    }
    const calls = await run(d, steps);
    assert.equal(firstTrip(calls), 6);
    assert.deepEqual(calls[6]!.decision.evidence?.sequence, ['search_orders', 'get_order', 'get_order']);
  });

  test('recreating a script with new content each round (create refused, remove, create, run) is not a cycle', async () => {
    const round = (content: string): Array<[string, unknown, string]> => [
      [
        'editor',
        { command: 'create', path: 'check.py', file_text: content },
        'ERROR: File already exists at: check.py. Cannot overwrite files using command `create`.',
      ],
      ['bash', { command: 'rm check.py' }, 'exit code 0'],
      ['editor', { command: 'create', path: 'check.py', file_text: content }, 'File created successfully at: check.py'],
      ['bash', { command: 'python check.py' }, 'SystemCheckError: admin.E403 a template engine must be configured'],
    ];
    const body =
      'import django\nfrom django.core.management import call_command\nsettings.configure(INSTALLED_APPS=["django.contrib.admin"])\ndjango.setup()\ncall_command("check")\n';
    const changing = await run(new BreakerDriver(new AgentBreaker()), [
      ...round(`${body}# variant one: configure templates first\n`),
      ...round(`${body}# variant two: skip the checks\n`),
      ...round(`${body}# variant three: call the command directly\n`),
    ]);
    assert.equal(firstTrip(changing), -1);
    // The same content every round changes nothing: that is a cycle.
    const same = await run(new BreakerDriver(new AgentBreaker()), [...round(body), ...round(body), ...round(body)]);
    assert.notEqual(firstTrip(same), -1);
  });

  test('edit–test alternation where the edits change is not a cycle', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const steps: Array<[string, unknown, string]> = [];
    for (let i = 0; i < 5; i++) {
      steps.push(['edit', `edit 10:12\nreturn parse(value, attempt=${i})\nend_of_edit`, `File updated (attempt ${i}).`]);
      steps.push(['python', 'reproduce.py', `Traceback: ValueError at attempt ${i}`]);
    }
    const calls = await run(d, steps);
    assert.equal(firstTrip(calls), -1);
  });

  test('an alternation whose results change (two paginated feeds) is not a cycle', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const steps: Array<[string, unknown, string]> = [];
    for (let i = 0; i < 5; i++) {
      steps.push(['fetch_feed', { feed: 'a' }, `a items ${i * 10}-${i * 10 + 9}`]);
      steps.push(['fetch_feed', { feed: 'b' }, `b items ${i * 10}-${i * 10 + 9}`]);
    }
    assert.equal(firstTrip(await run(d, steps)), -1);
  });

  test('a user turn in the middle restarts the evidence', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const a: [string, unknown, string] = ['get_a', {}, 'a'];
    const b: [string, unknown, string] = ['get_b', {}, 'b'];
    const before = await run(d, [a, b, a, b]);
    await d.user('I changed the settings, please check again.');
    const after = await run(d, [a, b, a, b]);
    assert.equal(firstTrip([...before, ...after]), -1);
  });

  test('disabled cycles are not reported', async () => {
    const d = new BreakerDriver(new AgentBreaker({ cycle: { enabled: false } }));
    const a: [string, unknown, string] = ['get_a', {}, 'a'];
    const b: [string, unknown, string] = ['get_b', {}, 'b'];
    const calls = await run(d, [a, b, a, b, a, b, a]);
    assert.ok(calls.every((c) => c.decision.category !== 'cycle'));
  });
});
