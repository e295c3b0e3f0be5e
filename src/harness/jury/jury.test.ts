import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import type { Judge, Verdict } from './judge.ts';
import { Jury, type JuryOptions } from './jury.ts';

const input = { goal: 'make the tests pass' };

function fixed(name: string, status: Verdict['status'], score?: number): Judge {
  return { name, judge: async () => ({ judge: name, status, ...(score === undefined ? {} : { score }), reasoning: `${name} says ${status}` }) };
}
const pass = (name: string, score?: number) => fixed(name, 'pass', score);
const fail = (name: string, score?: number) => fixed(name, 'fail', score);
const abstain = (name: string) => fixed(name, 'abstain');
const throwing = (name: string): Judge => ({
  name,
  judge: async () => {
    throw new Error('judge exploded');
  },
});

async function verdictOf(options: JuryOptions): Promise<Verdict> {
  return new Jury(options).judge(input);
}

describe('Jury strategies', () => {
  test('majority passes with more passes than fails', async () => {
    const verdict = await verdictOf({ strategy: 'majority', judges: [pass('a'), pass('b'), fail('c')] });
    assert.equal(verdict.status, 'pass');
    assert.equal(verdict.score, 2 / 3);
  });

  test('majority fails on a tie', async () => {
    const verdict = await verdictOf({ strategy: 'majority', judges: [pass('a'), fail('b')] });
    assert.equal(verdict.status, 'fail');
    assert.match(verdict.reasoning, /a tie fails/);
  });

  test('majority ignores abstentions and errors instead of counting them as fails', async () => {
    const verdict = await verdictOf({ strategy: 'majority', judges: [pass('a'), abstain('b'), throwing('c'), fixed('d', 'error')] });
    assert.equal(verdict.status, 'pass');
    assert.equal(verdict.score, 1);
    assert.match(verdict.reasoning, /1 of 4 judges voted \(1 abstained, 2 errored\)/);
  });

  test('unanimous needs every vote to pass', async () => {
    assert.equal((await verdictOf({ strategy: 'unanimous', judges: [pass('a'), pass('b'), abstain('c')] })).status, 'pass');
    assert.equal((await verdictOf({ strategy: 'unanimous', judges: [pass('a'), pass('b'), fail('c')] })).status, 'fail');
  });

  test('average compares the mean score with the threshold; an abstention is not a zero', async () => {
    const judges = [pass('a', 0.9), pass('b', 0.7), abstain('c')];
    const verdict = await verdictOf({ strategy: 'average', judges, threshold: 0.8 });
    assert.equal(verdict.status, 'pass');
    assert.equal(verdict.score, 0.8);
    // Counting the abstention as zero would give 0.533 and fail.
    assert.equal((await verdictOf({ strategy: 'average', judges: [pass('a', 0.9), fail('b', 0.2)] })).score, 0.55);
  });

  test('scores exactly at the threshold reach it, however many votes are averaged', async () => {
    for (const strategy of ['average', 'weighted', 'median'] as const) {
      for (const judges of [[pass('a', 0.7)], [pass('a', 0.7), pass('b', 0.7), pass('c', 0.7)]]) {
        const verdict = await verdictOf({ strategy, judges, threshold: 0.7 });
        assert.equal(verdict.status, 'pass', `${strategy}, ${judges.length} votes of 0.7`);
        assert.ok(Math.abs((verdict.score ?? 0) - 0.7) < 1e-12);
      }
    }
  });

  test('a vote without a score counts 1 for pass and 0 for fail', async () => {
    const verdict = await verdictOf({ strategy: 'average', judges: [pass('a'), fail('b'), fail('c')] });
    assert.equal(verdict.score, 1 / 3);
    assert.equal(verdict.status, 'fail');
  });

  test('median takes the middle score, or the mean of the two middle ones', async () => {
    const odd = await verdictOf({ strategy: 'median', judges: [pass('a', 1), fail('b', 0.1), pass('c', 0.6)] });
    assert.equal(odd.score, 0.6);
    assert.equal(odd.status, 'pass');
    const even = await verdictOf({ strategy: 'median', judges: [pass('a', 1), fail('b', 0.1), pass('c', 0.6), fail('d', 0.2)], threshold: 0.5 });
    assert.equal(even.score, 0.4);
    assert.equal(even.status, 'fail');
  });

  test('weighted uses the weights, 1 for judges not listed', async () => {
    const judges = [pass('tests', 1), fail('style', 0), fail('llm', 0)];
    const verdict = await verdictOf({ strategy: 'weighted', judges, weights: { tests: 3, style: 1 } });
    assert.equal(verdict.score, 3 / 5);
    assert.equal(verdict.status, 'pass');
  });

  test('weighted abstains when every voter weighs zero', async () => {
    const verdict = await verdictOf({ strategy: 'weighted', judges: [pass('a'), abstain('b')], weights: { a: 0 } });
    assert.equal(verdict.status, 'abstain');
  });

  test('the jury abstains when no judge voted', async () => {
    const verdict = await verdictOf({ strategy: 'average', judges: [abstain('a'), throwing('b')] });
    assert.equal(verdict.status, 'abstain');
    assert.equal(verdict.score, undefined);
  });
});

describe('Jury: a fail vote never carries a result past the threshold', () => {
  test('a jury whose only vote fails, fails, whatever score came with it', async () => {
    for (const strategy of ['average', 'median', 'weighted'] as const) {
      const verdict = await verdictOf({ strategy, judges: [fail('llm', 0.9)] });
      assert.equal(verdict.status, 'fail', strategy);
      assert.equal(verdict.score, 0.5, strategy);
      assert.match(verdict.reasoning, /1 fail vote scored at or above it, counted just below/, strategy);
      // The judge's own verdict is reported as it was given.
      assert.equal(verdict.details?.[0]?.score, 0.9);
    }
    assert.equal((await verdictOf({ strategy: 'average', judges: [fail('a', 0)], threshold: 0 })).status, 'fail');
    assert.equal((await verdictOf({ strategy: 'median', judges: [fail('a', 1)], threshold: 1 })).status, 'fail');
  });

  test('fail votes scored high count just below the threshold in every scored strategy', async () => {
    // Taken at face value: mean 0.667, median 0.9, weighted 0.8125 — all would pass with two or three fails.
    const average = await verdictOf({ strategy: 'average', judges: [fail('a', 0.9), fail('b', 0.9), pass('c', 0.2)] });
    assert.equal(average.status, 'fail');
    assert.equal(average.score, (0.5 + 0.5 + 0.2) / 3);
    const median = await verdictOf({ strategy: 'median', judges: [fail('a', 0.9), fail('b', 0.8), pass('c', 1)] });
    assert.equal(median.status, 'fail');
    assert.equal(median.score, 0.5);
    const even = await verdictOf({ strategy: 'median', judges: [fail('a', 0.9), pass('b', 0.5)] });
    assert.equal(even.status, 'fail', 'the middle of just below 0.5 and 0.5 is below 0.5');
    const weighted = await verdictOf({ strategy: 'weighted', judges: [fail('llm', 0.95), pass('tests', 0.4)], weights: { llm: 3 } });
    assert.equal(weighted.status, 'fail');
    assert.equal(weighted.score, (3 * 0.5 + 0.4) / 4);
  });

  test('passing votes still carry a capped fail when they clear the threshold', async () => {
    const verdict = await verdictOf({ strategy: 'average', judges: [fail('a', 0.9), pass('b', 0.9)] });
    assert.equal(verdict.status, 'pass');
    assert.equal(verdict.score, 0.7);
    const median = await verdictOf({ strategy: 'median', judges: [fail('a', 0.9), pass('b', 0.8), pass('c', 0.6)] });
    assert.equal(median.status, 'pass');
    assert.equal(median.score, 0.6);
    // A fail scored below the threshold counts as given; a zero-weight fail does not pull the jury below.
    assert.equal((await verdictOf({ strategy: 'average', judges: [fail('a', 0.3), pass('b', 0.7)] })).score, 0.5);
    const zero = await verdictOf({ strategy: 'weighted', judges: [fail('a', 0.9), pass('b', 0.5)], weights: { a: 0 } });
    assert.equal(zero.status, 'pass');
  });
});

describe('Jury reporting', () => {
  test('details keep every verdict in judge order, errors included', async () => {
    const verdict = await verdictOf({ strategy: 'majority', judges: [throwing('boom'), pass('ok'), abstain('shrug')] });
    assert.deepEqual(
      verdict.details?.map((d) => [d.judge, d.status]),
      [
        ['boom', 'error'],
        ['ok', 'pass'],
        ['shrug', 'abstain'],
      ],
    );
    assert.match(verdict.details?.[0]?.reasoning ?? '', /judge exploded/);
  });

  test('a malformed verdict or an out-of-range score is an error, not a vote', async () => {
    const liar: Judge = { name: 'liar', judge: async () => ({ judge: 'liar', status: 'pass', score: 7, reasoning: '' }) };
    const junk = { name: 'junk', judge: async () => 'yes' } as unknown as Judge;
    const verdict = await verdictOf({ strategy: 'majority', judges: [liar, junk, fail('honest')] });
    assert.deepEqual(
      verdict.details?.map((d) => d.status),
      ['error', 'error', 'fail'],
    );
    assert.equal(verdict.status, 'fail');
    const text = { name: 'text', judge: async () => ({ judge: 'text', status: 'pass', score: '0.9', reasoning: '' }) } as unknown as Judge;
    const [said] = (await verdictOf({ strategy: 'average', judges: [text] })).details ?? [];
    assert.equal(said?.status, 'error');
    assert.match(said?.reasoning ?? '', /a score that is not a number \("0\.9"\)/);
  });

  test('juries nest: an inner jury is one judge of the outer one', async () => {
    const inner = new Jury({ name: 'checks', strategy: 'unanimous', judges: [pass('build'), pass('tests')] });
    const outer = new Jury({ name: 'final', strategy: 'weighted', judges: [inner, fail('llm', 0.2)], weights: { checks: 4 } });
    const verdict = await outer.judge(input);
    assert.equal(verdict.judge, 'final');
    assert.equal(verdict.score, (4 * 1 + 0.2) / 5);
    assert.equal(verdict.status, 'pass');
    const innerVerdict = verdict.details?.[0];
    assert.equal(innerVerdict?.judge, 'checks');
    assert.deepEqual(
      innerVerdict?.details?.map((d) => d.judge),
      ['build', 'tests'],
    );
  });

  test('an abstaining inner jury does not count against the outer one', async () => {
    const inner = new Jury({ name: 'inner', strategy: 'majority', judges: [abstain('x')] });
    const outer = new Jury({ strategy: 'majority', judges: [inner, pass('y')] });
    assert.equal((await outer.judge(input)).status, 'pass');
  });

  test('judges run in parallel: all start before any finishes', async () => {
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = (name: string): Judge => ({
      name,
      judge: async () => {
        events.push(`start ${name}`);
        await gate;
        events.push(`end ${name}`);
        return { judge: name, status: 'pass', reasoning: '' };
      },
    });
    const pending = new Jury({ strategy: 'majority', judges: [slow('a'), slow('b')] }).judge(input);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['start a', 'start b']);
    release();
    assert.equal((await pending).status, 'pass');
    assert.deepEqual(events.slice(2).sort(), ['end a', 'end b']);
  });

  test('judgeTimeoutMs: a judge that does not answer in time is an error verdict and is aborted; the others still vote', async () => {
    let aborted = false;
    const hung: Judge = {
      name: 'hung',
      judge: (_input, signal) =>
        new Promise<Verdict>(() => {
          signal?.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    };
    const verdict = await verdictOf({ strategy: 'majority', judges: [hung, pass('quick')], judgeTimeoutMs: 50 });
    assert.equal(verdict.status, 'pass');
    assert.deepEqual(
      verdict.details?.map((d) => [d.judge, d.status, d.reasoning]),
      [
        ['hung', 'error', 'No verdict within 50 ms (judgeTimeoutMs).'],
        ['quick', 'pass', 'quick says pass'],
      ],
    );
    assert.equal(aborted, true);
    assert.throws(() => new Jury({ strategy: 'majority', judges: [pass('a')], judgeTimeoutMs: 0 }), InvalidOptionError);
  });

  test('an aborted jury rejects with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const judge: Judge = {
      name: 'j',
      judge: async () => {
        controller.abort(reason);
        throw reason;
      },
    };
    await assert.rejects(new Jury({ strategy: 'majority', judges: [judge] }).judge(input, controller.signal), (e) => e === reason);
  });

  test('a judge that ignores the abort cannot hold the jury: it rejects with the reason when the signal aborts', async () => {
    const ignoring: Judge = { name: 'stuck', judge: () => new Promise<Verdict>(() => {}) };
    const started = Date.now();
    await assert.rejects(
      new Jury({ strategy: 'majority', judges: [ignoring, pass('b')] }).judge(input, AbortSignal.timeout(100)),
      (e: unknown) => e instanceof DOMException && e.name === 'TimeoutError',
    );
    assert.ok(Date.now() - started < 2000, `settled after ${Date.now() - started} ms`);
  });
});

describe('Jury reasoning', () => {
  test("what a judge threw, and a judge's own reasoning, are redacted: reports get logged", async () => {
    const key = 'sk-proj-LEAKabcdefghijklmnopqrstuvwxyz0123456789';
    const leaking: Judge = {
      name: 'leaks',
      judge: async () => {
        throw new Error(`Incorrect API key provided: ${key}`);
      },
    };
    const quoting: Judge = { name: 'quotes', judge: async () => ({ judge: 'quotes', status: 'pass', reasoning: `The agent printed password=${key}` }) };
    const verdict = await verdictOf({ strategy: 'majority', judges: [leaking, quoting] });
    assert.ok(!JSON.stringify(verdict).includes(key), JSON.stringify(verdict));
    assert.match(verdict.details?.[0]?.reasoning ?? '', /^The judge threw: Incorrect API key provided: \[REDACTED\]/);
  });
});

describe('Jury configuration', () => {
  const bad = (options: Partial<JuryOptions>, option: string) =>
    assert.throws(
      () => new Jury({ strategy: 'majority', judges: [pass('a'), pass('b')], ...options } as JuryOptions),
      (error) => error instanceof InvalidOptionError && error.option === option,
    );

  test('rejects bad options, naming them', () => {
    bad({ judges: [] }, 'judges');
    bad({ strategy: 'plurality' as 'majority' }, 'strategy');
    bad({ strategy: 'weighted', weights: { a: -1 } }, 'weights.a');
    bad({ strategy: 'weighted', weights: { nobody: 1 } }, 'weights.nobody');
    bad({ strategy: 'majority', weights: { a: 1 } }, 'weights');
    bad({ strategy: 'average', threshold: 1.5 }, 'threshold');
    bad({ strategy: 'majority', threshold: 0.5 }, 'threshold');
    bad({ judges: [pass('a'), pass('a')] }, 'judges[1].name');
    bad({ judges: [{ name: 'x' } as Judge] }, 'judges[0]');
  });

  test('names itself after its strategy by default', () => {
    assert.equal(new Jury({ strategy: 'median', judges: [pass('a')] }).name, 'jury (median)');
  });
});
