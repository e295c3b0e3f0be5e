/**
 * `npm run bench:detect [-- --corpus FILE…] [--cross-validate] [--json]`
 *
 * Replays labelled trajectory files through our AgentBreaker (defaults) and
 * every peer rule, and prints one table per view (overall, per loop category,
 * per source) plus the goals. Without `--corpus` it runs on every `.jsonl`
 * file in `bench/corpus/`. Files may also follow `--corpus` as plain
 * arguments: `--corpus a.jsonl b.jsonl`. `--json` prints the same figures as
 * one JSON document on stdout. `--cross-validate` holds out one source at a
 * time instead (see cross-validation.ts) and prints the per-source figures
 * and their spread. Progress goes to stderr.
 */
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { runDetectionBenchmark } from './detection.ts';
import { runCrossValidation } from './cross-validation.ts';
import { formatCrossValidation, formatDetectionReport, GOALS } from './detection-report.ts';
import { parseCommandArgs } from '../src/test-support/command-args.ts';

const corpusDir = path.join(import.meta.dirname, 'corpus');

async function defaultCorpus(): Promise<string[]> {
  const names = await readdir(corpusDir).catch(() => [] as string[]);
  return names
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => path.join(corpusDir, n));
}

const { values, positionals } = parseCommandArgs(
  'usage: npm run bench:detect [-- [--corpus FILE.jsonl…] [--cross-validate] [--json]]',
  {
    corpus: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    'cross-validate': { type: 'boolean' },
  },
  { positionals: true },
);

const files = [...(values.corpus ?? []), ...positionals].map((f) => path.resolve(f));
const corpora = files.length > 0 ? files : await defaultCorpus();
if (corpora.length === 0) {
  process.stderr.write(`bench:detect: no corpus given and no .jsonl file in ${path.relative(process.cwd(), corpusDir)}\n`);
  process.exit(2);
}

for (const file of corpora) {
  await access(file).catch(() => {
    process.stderr.write(`bench:detect: cannot read corpus file ${file}\n`);
    process.exit(2);
  });
}

const tty = process.stderr.isTTY === true;
if (values['cross-validate'] === true) {
  const cv = await runCrossValidation(corpora, undefined, GOALS.maxFalsePositiveRate, (done, total) => {
    process.stderr.write(tty ? `\rreplayed configuration ${done}/${total}` : `replayed configuration ${done}/${total}\n`);
  });
  if (tty) process.stderr.write('\n');
  console.log(values.json === true ? JSON.stringify(cv, null, 2) : formatCrossValidation(cv));
  process.exit(0);
}

const report = await runDetectionBenchmark(corpora, undefined, (done) => {
  if (tty) process.stderr.write(`\rreplayed ${done} trajectories`);
  else if (done % 200 === 0) process.stderr.write(`replayed ${done} trajectories\n`);
});
if (tty) process.stderr.write('\n');

console.log(values.json === true ? JSON.stringify(report, null, 2) : formatDetectionReport(report));
