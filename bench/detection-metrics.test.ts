import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { median, percentile, summarise, summariseBy, type Outcome } from './detection-metrics.ts';

function outcome(over: Partial<Outcome>): Outcome {
  return {
    stuck: false,
    category: undefined,
    source: 's',
    tripped: false,
    step: undefined,
    stopStep: undefined,
    stepsTotal: 20,
    firstStuckStep: undefined,
    tokensKnown: false,
    tokensAfterStuck: 0,
    ...over,
  };
}

const caught = (first: number, step: number, extra: Partial<Outcome> = {}): Outcome =>
  outcome({ stuck: true, category: 'tool_spiral', tripped: true, step, firstStuckStep: first, ...extra });

describe('median and percentile', () => {
  test('median of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([]), undefined);
  });
  test('nearest-rank p90', () => {
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), 9);
    assert.equal(percentile([5], 90), 5);
    assert.equal(percentile([1, 100], 90), 100);
  });
});

describe('summarise', () => {
  test('precision, recall, F1, FPR and lags from the confusion counts', () => {
    const figures = summarise([
      caught(10, 10),
      caught(10, 12),
      caught(5, 4),
      outcome({ stuck: true, category: 'token_drift', firstStuckStep: 8 }),
      outcome({ tripped: true, step: 15 }),
      outcome({}),
      outcome({}),
      outcome({}),
    ]);
    assert.equal(figures.truePositives, 3);
    assert.equal(figures.falseNegatives, 1);
    assert.equal(figures.falsePositives, 1);
    assert.equal(figures.trueNegatives, 3);
    assert.equal(figures.precision, 0.75);
    assert.equal(figures.recall, 0.75);
    assert.equal(figures.f1, 0.75);
    assert.equal(figures.falsePositiveRate, 0.25);
    assert.equal(figures.medianLag, 0);
    assert.equal(figures.p90Lag, 2);
    // 0 + 2 + 0 (tripped before the label) + 12 (missed: 8 → 20) steps ran after the loop was visible.
    assert.equal(figures.stepsAfterStuck, 14);
    assert.equal(figures.productiveStepsCut, 5);
  });

  test('a detector that catches nothing has F1 0, and no precision', () => {
    const figures = summarise([outcome({ stuck: true, firstStuckStep: 3 }), outcome({})]);
    assert.equal(figures.f1, 0);
    assert.equal(figures.precision, undefined);
    assert.equal(figures.recall, 0);
  });

  test('tokens after stuck are unknown unless some step carried counts, and averaged per stuck run', () => {
    assert.equal(summarise([caught(1, 3)]).tokensAfterStuck, undefined);
    const known = summarise([
      caught(1, 3, { tokensKnown: true, tokensAfterStuck: 900 }),
      outcome({ stuck: true, firstStuckStep: 2, tokensKnown: true, tokensAfterStuck: 300 }),
    ]);
    assert.equal(known.tokensAfterStuck, 1200);
    assert.equal(known.tokensAfterStuckPerStuck, 600);
  });
});

describe('summariseBy', () => {
  test('categories hold only their stuck runs; sources hold everything', () => {
    const outcomes = [
      caught(1, 1, { source: 'a' }),
      outcome({ stuck: true, category: 'rag_fixation', firstStuckStep: 4, source: 'b' }),
      outcome({ source: 'a', tripped: true, step: 2 }),
    ];
    const byCategory = summariseBy(outcomes, 'category');
    assert.deepEqual(Object.keys(byCategory), ['rag_fixation', 'tool_spiral']);
    assert.equal(byCategory.tool_spiral?.trajectories, 1);
    assert.equal(byCategory.rag_fixation?.recall, 0);
    const bySource = summariseBy(outcomes, 'source');
    assert.equal(bySource.a?.trajectories, 2);
    assert.equal(bySource.a?.falsePositives, 1);
    assert.equal(bySource.b?.falseNegatives, 1);
  });
});
