import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

describe('text repetition', () => {
  test('the same reply three rounds in a row with nothing in between trips', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const reply = 'I am still working on the analysis and will report the findings shortly.';
    const out = [await d.model(reply), await d.model(reply), await d.model(`${reply} Thanks.`)];
    assert.deepEqual(out.map((x) => x.action), ['allow', 'allow', 'steer']);
    assert.equal(out[2]!.category, 'text_repetition');
  });

  test('a sentence said over and over within one reply trips', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await d.model('Let me check that for you now. Let me check that for you now. Let me check that for you now. Let me check that for you now.');
    assert.equal(out.action, 'steer');
    assert.equal(out.category, 'text_repetition');
  });

  test('degenerate output without sentence marks trips', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await d.model(Array.from({ length: 12 }, () => 'the answer is forty two and').join(' '));
    assert.equal(out.category, 'text_repetition');
  });

  test('a long reply is judged whole: varied prose passes, a passage said again and again trips', async () => {
    const varied = Array.from({ length: 700 }, (_, i) => `term${(i * 7919) % 3001}`).join(' ');
    assert.equal((await new BreakerDriver(new AgentBreaker()).model(varied)).action, 'allow');
    const passage = 'the deployment is still pending while we wait for the build to finish and report back';
    const looping = `${varied.slice(0, 2000)} ${Array.from({ length: 20 }, () => passage).join(' ')}`;
    const out = await new BreakerDriver(new AgentBreaker()).model(looping);
    assert.equal(out.category, 'text_repetition');
  });

  test('markdown tables, lists and code blocks never count', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const table = ['| flight | departs | price |', '|---|---|---|', ...Array.from({ length: 12 }, (_, i) => `| HAT0${i} | 0${i % 10}:00 EST | $125 |`)].join('\n');
    const list = Array.from({ length: 12 }, (_, i) => `- Flight HAT0${i} departs at 03:00 EST and costs $125 in economy`).join('\n');
    const code = ['```python', ...Array.from({ length: 12 }, () => 'print("hello world from the same line of code")'), '```'].join('\n');
    const intros = ['Here are the morning flights I found for Friday.', 'These are the evening departures on Saturday instead.', 'Sunday has only these red-eye options left, sadly.'];
    const out = [];
    for (const intro of intros) out.push(await d.model(`${intro}\n\n${table}\n\n${list}\n\n${code}\n\nWhich one would you like?`));
    assert.ok(out.every((x) => x.action === 'allow'), JSON.stringify(out.map((x) => x.evidence?.detail)));
  });

  test('the same short line before each new tool result is not repetition', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 6; i++) {
      out.push(await d.model('Let me check the next order in your account for the tablet.'));
      await d.tool('get_order_details', { order_id: `#W${i}` }, `{"order_id":"#W${i}","items":["item ${i}"]}`);
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('the same question to a user who keeps answering is not repetition', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 6; i++) {
      out.push(await d.model('Could you please provide your user ID and the reservation ID so I can look this up?'));
      await d.user('I do not have it at hand right now.');
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('different replies are not repetition, in any script', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.model('東京から大阪までの新幹線は約二時間半かかります。'),
      await d.model('明日の札幌の天気は晴れのち曇りの予報です。'),
      await d.model('京都の紅葉は十一月中旬から下旬が見頃です。'),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });
});
