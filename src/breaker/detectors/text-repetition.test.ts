import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BreakerDecision } from '../breaker-decision.ts';
import { resolveAgentBreakerOptions, type AgentBreakerOptions } from '../breaker-options.ts';
import { initialState, LIMITS, type BreakerSessionState } from '../breaker-state.ts';
import { AgentBreaker } from '../index.ts';
import { SessionLogic } from '../session-logic.ts';
import { ArgsFingerprinter } from '../similarity/args-fingerprint.ts';
import { IdentityKeyMatcher } from '../similarity/identity-keys.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';
import type { DetectorContext } from './detection.ts';
import { toolVerbMatcher } from './tool-verbs.ts';
import { noteUserTurn } from './text-repetition.ts';
import { proposalOf } from './tool-record.ts';

/**
 * One session judged by the breaker's session logic, with every user turn
 * also noted for text repetition (by the logic itself where it does so, else
 * here, from the state the turn arrived in).
 */
class Conversation {
  readonly ctx: DetectorContext;
  readonly logic: SessionLogic;
  state: BreakerSessionState = initialState(0);

  constructor(options: AgentBreakerOptions = {}) {
    const resolved = resolveAgentBreakerOptions(options);
    this.ctx = {
      options: resolved,
      fingerprinter: new ArgsFingerprinter(new IdentityKeyMatcher(resolved.identityKeys)),
      isReadOnly: toolVerbMatcher(resolved.readOnlyTools),
      isWriting: () => false,
      isSubAgent: () => false,
    };
    this.logic = new SessionLogic(this.ctx);
  }

  model(text: string): BreakerDecision {
    const out = this.logic.observe(this.state, { kind: 'model', text, promptTokens: null, completionTokens: null }, null, 0);
    this.state = out.next ?? this.state;
    return out.decision;
  }

  user(text: string): void {
    const before = this.state;
    const out = this.logic.observe(before, { kind: 'user', text }, null, 0);
    let next = out.next ?? before;
    if (next.userTurns?.s !== next.seq) next = { ...next, ...noteUserTurn(before, text, next.seq, this.ctx) };
    this.state = next;
  }

  tool(tool: string, args: unknown, result: string): void {
    const out = this.logic.observe(this.state, { kind: 'tool_call', tool, args, result }, proposalOf(tool, args, this.ctx), 0);
    this.state = out.next ?? this.state;
  }

  /** Replies and user turns in turn: the verdicts on the replies. */
  exchange(replies: readonly string[], turns: readonly string[]): string[] {
    const out: string[] = [];
    replies.forEach((reply, i) => {
      out.push(this.model(reply).action);
      const turn = turns[i % turns.length];
      if (i < replies.length - 1 && turn !== undefined) this.user(turn);
    });
    return out;
  }
}

const APOLOGY =
  'I apologize for the confusion. It seems my previous change did not resolve the issue. Let me take a closer look at the `parseHeader` function in `headers.go` and try a different approach to make sure the failing test passes.';
const APOLOGY_REWORDED =
  "You're right, I apologize for the confusion. The previous change did not resolve the issue. Let me take a closer look at the `parseHeader` function in `headers.go` and try a different approach so that the failing test passes.";
const NO_ANSWER =
  'Based on the available documents, I could not find a definitive answer to your question. The documentation mentions the nightly limit, but it does not address your specific situation. I recommend checking your travel policy and consulting the relevant documentation for more details.';
const REFUSAL =
  'I am sorry, but basic economy reservations without travel insurance cannot be refunded under our policy, so I am unable to process this request. Is there anything else I can help you with?';

describe('text repetition', () => {
  test('the same reply three rounds in a row with nothing in between trips', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const reply = 'I am still working on the analysis and will report the findings shortly.';
    const out = [await d.model(reply), await d.model(reply), await d.model(`${reply} Thanks.`)];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(out[2]!.category, 'text_repetition');
  });

  test('a sentence said over and over within one reply trips', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await d.model('Let me check that for you now. Let me check that for you now. Let me check that for you now. Let me check that for you now.');
    assert.equal(out.action, 'steer');
    assert.equal(out.category, 'text_repetition');
  });

  test('the steer quotes the repeated sentence, but never a line of a private key', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = await d.model('Let me check that for you now. Let me check that for you now. Let me check that for you now.');
    assert.match(out.message ?? '', /"Let me check that for you now\."/);
    assert.match(out.evidence?.detail ?? '', /repeated 3 times: "Let me check that for you now\."/);

    // Body lines with `+` and `/` read as sentences of several words.
    const body = ['Sr3KTLCiydbZEfBEo6Zc4+B/wf6Q/a7kQ7OZCkMu+SpDUCcdNdqLVBA6mE6Eow/X', 'ZvPL+o3nG8bErbXzMGLldH0H+nJIt09eBiGh3ud1AyqG7z/y+cfI+Wc/+ZAawaLF'];
    const key = `-----BEGIN PRIVATE KEY-----\n${body.join('\n')}\n-----END PRIVATE KEY-----`;
    const echoed = await new BreakerDriver(new AgentBreaker()).model(`Here is the key:\n${key}\n${key}\n${key}`);
    assert.equal(echoed.category, 'text_repetition');
    for (const line of body) {
      assert.ok(!(echoed.message ?? '').includes(line.slice(0, 24)), echoed.message);
      assert.ok(!(echoed.evidence?.detail ?? '').includes(line.slice(0, 24)), echoed.evidence?.detail);
    }
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
    const table = ['| flight | departs | price |', '|---|---|---|', ...Array.from({ length: 12 }, (_, i) => `| HAT0${i} | 0${i % 10}:00 EST | $125 |`)].join(
      '\n',
    );
    const list = Array.from({ length: 12 }, (_, i) => `- Flight HAT0${i} departs at 03:00 EST and costs $125 in economy`).join('\n');
    const code = ['```python', ...Array.from({ length: 12 }, () => 'print("hello world from the same line of code")'), '```'].join('\n');
    const intros = [
      'Here are the morning flights I found for Friday.',
      'These are the evening departures on Saturday instead.',
      'Sunday has only these red-eye options left, sadly.',
    ];
    const out = [];
    for (const intro of intros) out.push(await d.model(`${intro}\n\n${table}\n\n${list}\n\n${code}\n\nWhich one would you like?`));
    assert.ok(
      out.every((x) => x.action === 'allow'),
      JSON.stringify(out.map((x) => x.evidence?.detail)),
    );
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

  test('the same question to a user who answers with something new each time is not repetition', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const answers = [
      'I do not have it at hand right now, my assistant made the booking.',
      'It was booked through a travel agency in Lyon last March, under my maiden name.',
      'The confirmation email went to my old work address at the university, which I cannot access.',
      'Maybe search by the flight instead: Paris to Montreal on the fourteenth, seat 22C.',
      'My loyalty number should be printed on the boarding pass from the outbound trip.',
    ];
    const out = [];
    for (const answer of answers) {
      out.push(await d.model('Could you please provide your user ID and the reservation ID so I can look this up?'));
      await d.user(answer);
    }
    out.push(await d.model('Could you please provide your user ID and the reservation ID so I can look this up?'));
    assert.ok(
      out.every((x) => x.action === 'allow'),
      JSON.stringify(out.map((x) => x.evidence?.detail)),
    );
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

  test('a model alternating between two wordings of one paragraph repeats itself', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const reply of [APOLOGY, APOLOGY_REWORDED, APOLOGY, APOLOGY_REWORDED, APOLOGY]) out.push(await d.model(reply));
    // The third time the first wording comes back.
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'allow', 'steer'],
    );
  });

  test('replies on one subject that say different things are not the same reply', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.model('The webhook handler encodes the payload as ASCII before hashing, so names with accents change the signature.'),
      await d.model('The test suite covers only ASCII payloads; a case with a customer called Zoë would have caught this regression.'),
      await d.model('Encoding the payload as UTF-8 before computing the HMAC fixes the signature check for every customer name.'),
    ];
    assert.ok(
      out.every((x) => x.action === 'allow'),
      JSON.stringify(out.map((x) => x.evidence?.detail)),
    );
  });

  test('the same words around a different code block each time are new attempts', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const intro = 'You are right, there is an off-by-one error in the slice. Here is the corrected function:';
    const fixes = ['start + size + 1', 'start + size - 1', 'start + size'];
    const out = [];
    for (const fix of fixes)
      out.push(
        await d.model(`${intro}\n\n\`\`\`python\ndef paginate(items, page, size):\n    start = (page - 1) * size\n    return items[start:${fix}]\n\`\`\``),
      );
    assert.ok(
      out.every((x) => x.action === 'allow'),
      JSON.stringify(out.map((x) => x.evidence?.detail)),
    );
  });

  test('the same words and the same code block again trip', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const reply =
      'You are right, there is an off-by-one error in the slice. Here is the corrected function:\n\n```python\ndef paginate(items, page, size):\n    start = (page - 1) * size\n    return items[start:start + size + 1]\n```';
    const out = [await d.model(reply), await d.model(reply), await d.model(reply)];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
  });

  test('a reply that is only a code block trips when it comes back unchanged, not when it changes', async () => {
    const block = (body: string) => `\`\`\`sql\nSELECT customer_id, SUM(amount) AS total\nFROM payments\nWHERE ${body}\nGROUP BY customer_id;\n\`\`\``;
    const same = new BreakerDriver(new AgentBreaker());
    const repeated = [
      await same.model(block("status = 'settled'")),
      await same.model(block("status = 'settled'")),
      await same.model(block("status = 'settled'")),
    ];
    assert.deepEqual(
      repeated.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    const changing = new BreakerDriver(new AgentBreaker());
    const varied = [];
    for (const body of ["status = 'settled'", "status = 'settled' AND currency = 'EUR'", "created_at >= '2024-01-01'"])
      varied.push(await changing.model(block(body)));
    assert.ok(varied.every((x) => x.action === 'allow'));
  });
});

describe('text repetition across user turns', () => {
  test('a harness nudge said again between the same replies does not reset the evidence', () => {
    const c = new Conversation();
    const nudge = 'Your last response did not call a tool. Use one of the available tools to make progress, or call submit if the task is complete.';
    // The first nudge is news to the model; the same nudge again is not.
    assert.deepEqual(c.exchange([APOLOGY, APOLOGY, APOLOGY, APOLOGY], [nudge]), ['allow', 'allow', 'allow', 'steer']);
  });

  test('complaints and facts the user already gave do not reset it', () => {
    const c = new Conversation();
    c.user("Hi, I'd like to add one checked bag to my reservation H4T76E. My user id is sofia_mueller_6937.");
    const ask =
      "I apologize for the inconvenience. To assist you with adding baggage, I'll need your user ID and the reservation ID. Could you please provide those details so I can proceed?";
    const turns = [
      'I just gave you both: user sofia_mueller_6937, reservation H4T76E.',
      'sofia_mueller_6937. H4T76E. Same as before.',
      'Again: sofia_mueller_6937 / H4T76E.',
    ];
    assert.deepEqual(c.exchange([ask, ask, ask], turns), ['allow', 'allow', 'steer']);
  });

  test('short requests to try again do not reset it', () => {
    const c = new Conversation();
    assert.deepEqual(c.exchange([NO_ANSWER, NO_ANSWER, NO_ANSWER], ['Please look again.', 'Anything more specific?']), ['allow', 'allow', 'steer']);
  });

  test('a user turn with a new request or argument resets it, even when the model holds its position', () => {
    const c = new Conversation();
    const pushes = [
      'I understand the policy, but is there any chance I can receive a travel voucher or a gift card instead? Surely something can be arranged.',
      'This has been an exceptional circumstance for me. Can we at least consider a partial refund, say fifty percent?',
      'I really need some sort of resolution here, even a small gesture would help. Could we negotiate a ten percent refund?',
      'Is there someone else I can speak to who may have the authority to make an exception for me?',
    ];
    const out = c.exchange([REFUSAL, REFUSAL, REFUSAL, REFUSAL, REFUSAL], pushes);
    assert.ok(
      out.every((x) => x === 'allow'),
      JSON.stringify(out),
    );
  });

  test('the same form sentence asking for a different detail each time is not repetition', () => {
    const c = new Conversation();
    const replies = ['full name', 'date of birth', 'zip code', 'phone number'].map(
      (detail) => `Thank you, I have noted that. Next, could you please tell me your ${detail} so that I can verify your identity?`,
    );
    const out = c.exchange(replies, ['Ana Silva', '1985-03-12', '02139']);
    assert.ok(
      out.every((x) => x === 'allow'),
      JSON.stringify(out),
    );
  });

  test('a short user turn is new when the reply takes up its words', () => {
    const c = new Conversation();
    const replies = ['gift card', 'certificate', 'travel credit', 'voucher'].map(
      (thing) =>
        `I'm unable to provide information about the balance of your ${thing} here. You may want to check your user profile or contact customer support for assistance with this information.`,
    );
    const out = c.exchange(replies, ['What about certificates?', 'And my travel credits?', 'Vouchers then?']);
    assert.ok(
      out.every((x) => x === 'allow'),
      JSON.stringify(out),
    );
  });

  test('a tool call in between still resets it, whatever the user says', () => {
    const c = new Conversation();
    const out = [c.model(NO_ANSWER).action];
    c.user('Please look again.');
    c.tool('search_docs', { query: 'hotel limit London' }, 'Section 4.2: the nightly limit is EUR 180 in Tier 1 cities.');
    out.push(c.model(NO_ANSWER).action);
    c.user('Anything more specific?');
    out.push(c.model(NO_ANSWER).action);
    assert.deepEqual(out, ['allow', 'allow', 'allow']);
  });

  test('in scripts written without spaces, a nudge does not reset it and new facts do', () => {
    const reply = '申し訳ありませんが、提供された資料の中に明確な答えは見つかりませんでした。設定と関連する文書を確認することをお勧めします。';
    const nudged = new Conversation();
    assert.deepEqual(nudged.exchange([reply, reply, reply], ['もう一度調べてください。', 'もっと具体的に。']), ['allow', 'allow', 'steer']);
    const informed = new Conversation();
    const facts = [
      '東京本社の出張規定では、ロンドンのホテルは一泊二万五千円までと聞いています。',
      '朝食が含まれるかどうかは、第四章の宿泊費の項目に書いてあるはずです。',
    ];
    assert.deepEqual(informed.exchange([reply, reply, reply], facts), ['allow', 'allow', 'allow']);
  });

  test('what is kept about user turns stays bounded however long the session', () => {
    const c = new Conversation();
    for (let i = 0; i < 300; i++) {
      c.user(Array.from({ length: 120 }, (_, j) => `word${i * 131 + j}`).join(' '));
      c.model(`Reply number ${i} talks about topic ${i * 7} and item ${i * 13} with enough words to be judged.`);
    }
    const turns = c.state.userTurns!;
    assert.ok(turns.f.length <= LIMITS.userFresh);
    assert.ok(turns.v.length <= 2);
    assert.ok(turns.v.every((filter) => filter.length === turns.v[0]!.length));
    assert.ok(c.state.texts.length <= LIMITS.texts);
    assert.equal(c.state.texts.filter((t) => t.b !== undefined).length, 1, 'only the newest reply keeps its filter');
    assert.ok(JSON.stringify(turns).length < 600, `${JSON.stringify(turns).length} bytes`);
  });
});
