import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { TrajectoryStep } from '../src/replay/trajectory.ts';
import { runDetectionBenchmark, type DetectionReport } from './detection.ts';
import { formatDetectionReport } from './detection-report.ts';

const run = promisify(execFile);

const model = (prompt: number): TrajectoryStep => ({ kind: 'model', prompt_tokens: prompt, completion_tokens: 50, text: '' });
const call = (tool: string, args: unknown, result: string, error = false): TrajectoryStep =>
  ({ kind: 'tool_call', tool, args, result, error }) as TrajectoryStep;

/** The same rejected booking, eight times: a loop from the third attempt (step 5). */
const stuck = {
  id: 'loop',
  source: 'unit',
  label: { stuck: true, category: 'tool_spiral', first_stuck_step: 5 },
  steps: Array.from({ length: 8 }, (_, i) => [
    model(1000 + i * 100),
    call('book', { flight: 'HAT030', seat: '3A' }, 'Error: payment amount does not add up', true),
  ]).flat(),
};

/** Eight different orders looked up: a sweep, not a loop. */
const sweep = {
  id: 'sweep',
  source: 'unit',
  label: { stuck: false },
  steps: Array.from({ length: 8 }, (_, i) => [model(1000 + i * 100), call('get_order', { id: `#W${1000 + i}` }, `order ${i}: shipped`)]).flat(),
};

/** The scratch directories of the corpora written, removed once the tests are done. */
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function corpus(lines: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'detect-'));
  dirs.push(dir);
  const file = path.join(dir, 'unit.jsonl');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('detection benchmark', () => {
  test('judges every detector on the same labelled runs and counts tokens after the loop', async () => {
    const file = await corpus([JSON.stringify(stuck), JSON.stringify(sweep), JSON.stringify({ id: 'nolabel', steps: [] })]);
    const report = await runDetectionBenchmark([file]);
    assert.equal(report.trajectories, 2);
    assert.equal(report.stuck, 1);
    assert.equal(report.unlabelled, 1);
    const ours = report.detectors[0];
    assert.equal(ours?.name, 'Governor AgentBreaker (defaults)');
    assert.equal(ours?.overall.truePositives, 1);
    assert.equal(ours?.overall.falsePositives, 0);
    assert.ok((ours?.overall.medianLag ?? Infinity) <= 1);
    // Without a detector the loop runs from step 5 to the end: model steps 6, 8, 10, 12, 14.
    const tokensWithout = [6, 8, 10, 12, 14].reduce((sum, i) => sum + 1000 + (i / 2) * 100 + 50, 0);
    assert.equal(report.baseline.overall.tokensAfterStuck, tokensWithout);
    assert.ok((ours?.overall.tokensAfterStuck ?? Infinity) < tokensWithout);
    assert.deepEqual(Object.keys(ours?.byCategory ?? {}), ['tool_spiral']);
    assert.equal(ours?.bySource.unit?.trajectories, 2);
    const gemini = report.detectors.find((d) => d.name.startsWith('Gemini'));
    // Gemini CLI stops the 5th identical call: step 9, four steps after the label.
    assert.equal(gemini?.overall.medianLag, 4);
  });

  test('the text report states every goal with the measured figure; a tie is not above', async () => {
    const report = await runDetectionBenchmark([await corpus([JSON.stringify(stuck), JSON.stringify(sweep)])]);
    const text = formatDetectionReport(report);
    // Every rule that repeats a call catches this plain loop: F1 1.00 all round.
    assert.match(text, /F1 above every peer: NOT MET \(1\.00 vs 1\.00, Gemini CLI loop detection\)/);
    assert.match(text, /False-positive rate <= 1\.0%: met \(0\.0%, 0 of 1 productive\)/);
    assert.match(text, /Step cap: 15 model calls/);
  });

  test('reports figures by label confidence when the corpus gives one, and only then', async () => {
    const withConfidence = await corpus([JSON.stringify({ ...stuck, label_confidence: 'clear' }), JSON.stringify({ ...sweep, label_confidence: 'ambiguous' })]);
    const report = await runDetectionBenchmark([withConfidence]);
    assert.deepEqual(Object.keys(report.baseline.byConfidence), ['ambiguous', 'clear']);
    assert.equal(report.detectors[0]?.byConfidence.clear?.truePositives, 1);
    assert.equal(report.detectors[0]?.byConfidence.ambiguous?.productive, 1);
    assert.match(formatDetectionReport(report), /By label confidence/);
    const without = await runDetectionBenchmark([await corpus([JSON.stringify(stuck)])]);
    assert.deepEqual(without.baseline.byConfidence, {});
    assert.doesNotMatch(formatDetectionReport(without), /By label confidence/);
  });

  test('bench:detect --json reads the files given and reports malformed lines by number', async () => {
    const file = await corpus([JSON.stringify(stuck), '{not json', JSON.stringify(sweep)]);
    const { stdout, stderr } = await run(process.execPath, [path.join(import.meta.dirname, 'detect-command.ts'), '--corpus', file, '--json']);
    const report = JSON.parse(stdout) as DetectionReport;
    assert.equal(report.malformedLines, 1);
    assert.equal(report.trajectories, 2);
    assert.match(stderr, /line 2/);
  });

  test('bench:detect refuses a corpus file that does not exist', async () => {
    await assert.rejects(
      run(process.execPath, [path.join(import.meta.dirname, 'detect-command.ts'), '--corpus', 'no-such-file.jsonl']),
      (error: { code?: number; stderr?: string }) => error.code === 2 && /cannot read corpus file/.test(error.stderr ?? ''),
    );
  });

  test('bench:detect names an unknown flag and prints its usage; --help prints only the usage', async () => {
    const command = path.join(import.meta.dirname, 'detect-command.ts');
    await assert.rejects(
      run(process.execPath, [command, '--corpus-file', 'x.jsonl']),
      (error: { code?: number; stdout?: string; stderr?: string }) =>
        error.code === 2 &&
        /Unknown option '--corpus-file'/.test(error.stderr ?? '') &&
        /usage: npm run bench:detect/.test(error.stderr ?? '') &&
        error.stdout === '',
    );
    const help = await run(process.execPath, [command, '--help']);
    assert.match(help.stdout, /^usage: npm run bench:detect .*--cross-validate/);
    assert.equal(help.stderr, '');
  });
});
