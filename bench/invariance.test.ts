import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { isMalformedLine, readTrajectories } from '../src/replay/read-trajectories.ts';
import type { Trajectory } from '../src/replay/trajectory.ts';
import { REWRITES, seeded, verdict } from './invariance.ts';

const realRuns = path.resolve(import.meta.dirname, '../../shared/corpus/real-dev.jsonl');

describe("the breaker's verdicts on real runs do not move under rewrites that leave the loop as it was", {
  skip: !existsSync(realRuns) && 'no real-run corpus beside the repository',
}, () => {
  test('every rewrite, every run: the same first intervention at the same step', async () => {
    const runs: Trajectory[] = [];
    for await (const record of readTrajectories(realRuns)) if (!isMalformedLine(record)) runs.push(record.trajectory);
    assert.ok(runs.length > 400, `${runs.length} runs`);
    const before = await Promise.all(runs.map(verdict));
    // The corpus has loops of each kind the rewrites touch, so a rewrite that broke detection would show.
    assert.ok(before.filter((v) => v.startsWith('rag_fixation')).length > 50 && before.filter((v) => v.startsWith('error_loop')).length > 10, before.join(' '));
    for (const [name, rewrite] of Object.entries(REWRITES)) {
      const moved: string[] = [];
      for (let i = 0; i < runs.length; i++) {
        const run = runs[i]!;
        const after = await verdict(rewrite(run, seeded(run.id)));
        if (after !== before[i]) moved.push(`${run.id}: ${before[i]} → ${after}`);
      }
      assert.deepEqual(moved, [], `${name}: ${moved.length} verdicts moved`);
    }
  });
});
