import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { TrajectoryStep } from '../src/replay/trajectory.ts';
import { choose, runCrossValidation, spread, type CrossValidationReport } from './cross-validation.ts';
import type { DetectionFigures } from './detection-metrics.ts';
import { formatCrossValidation } from './detection-report.ts';

const run = promisify(execFile);
const model: TrajectoryStep = { kind: 'model', prompt_tokens: null, completion_tokens: null, text: '' };
const call = (args: unknown, result: string): TrajectoryStep => ({ kind: 'tool_call', tool: 'get_status', args, result }) as TrajectoryStep;

/** The same status check returning the same answer `times` times; stuck from the third call (step 5). */
function poll(id: string, source: string, times: number, stuck: boolean): string {
  const steps = Array.from({ length: times }, () => [model, call({ job: 7 }, 'status: pending')]).flat();
  return JSON.stringify({ id, source, steps, label: stuck ? { stuck: true, category: 'tool_spiral', first_stuck_step: 5 } : { stuck: false } });
}

/** The scratch directories of the corpora written, removed once the tests are done. */
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function corpus(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cv-'));
  dirs.push(dir);
  const file = path.join(dir, 'unit.jsonl');
  // Source a: long loops. Source b: one loop and two polls labelled fine.
  await writeFile(file, [poll('a1', 'a', 8, true), poll('a2', 'a', 8, true), poll('b1', 'b', 2, false), poll('b2', 'b', 6, true)].join('\n') + '\n');
  return file;
}

const figures = (f1: number, fpr: number, fp = 0): DetectionFigures => ({ f1, falsePositiveRate: fpr, falsePositives: fp }) as DetectionFigures;

describe('cross-validation by source', () => {
  test('chooses the best F1 within the false-alarm limit, the earlier on a tie, the fewest false alarms when none is within', () => {
    assert.equal(choose([figures(0.8, 0), figures(0.9, 0.02, 2), figures(0.85, 0.01)], 0.01), 2);
    assert.equal(choose([figures(0.8, 0), figures(0.8, 0)], 0.01), 0);
    assert.equal(choose([figures(0.9, 0.05, 5), figures(0.5, 0.03, 3)], 0.01), 1);
  });

  test('spread gives min, max, mean and standard deviation', () => {
    assert.deepEqual(spread([0.5, 1]), { min: 0.5, max: 1, mean: 0.75, sd: 0.25 });
    assert.equal(spread([]), undefined);
  });

  test('holds out each source and judges the configuration chosen on the others', async () => {
    const file = await corpus();
    const candidates = [
      { name: 'defaults', options: {} },
      { name: 'trips on the 3rd identical call', options: { toolSpiral: { maxRepeats: 3, maxIdenticalRepeats: 3 } } },
    ];
    const report = await runCrossValidation([file], candidates, 0.01);
    assert.deepEqual(
      report.sources.map((s) => s.source),
      ['a', 'b'],
    );
    const [a, b] = report.sources;
    // Each fold chooses on the other source only and is judged on its own runs.
    assert.equal(a?.chosenOnOthers.trajectories, 2);
    assert.equal(a?.chosenHeldOut.trajectories, 2);
    assert.equal(a?.defaults.recall, 1);
    assert.ok((a?.chosenOnOthers.falsePositiveRate ?? 1) <= 0.01);
    // Source a has no productive run: no false-alarm rate to choose by there.
    assert.equal(b?.chosenOnOthers.falsePositiveRate, undefined);
    assert.equal(b?.defaults.productive, 1);
    assert.equal(report.spread.defaults.f1?.max, 1);
    assert.match(formatCrossValidation(report), /Held-out source[\s\S]*\ba\b[\s\S]*Spread over held-out sources/);
  });

  test('bench:detect --cross-validate --json prints the report', async () => {
    const file = await corpus();
    const { stdout } = await run(process.execPath, [path.join(import.meta.dirname, 'detect-command.ts'), '--corpus', file, '--cross-validate', '--json']);
    const report = JSON.parse(stdout) as CrossValidationReport;
    assert.equal(report.sources.length, 2);
    assert.ok(report.candidates > 1);
  });
});
