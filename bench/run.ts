/**
 * `npm run bench [-- CORPUS.jsonl] [--json]`: the detection benchmark on a
 * labelled corpus (default: the shared development corpus next to the
 * repository), then the overhead benchmark. Prints the figures; `--json`
 * prints them as one JSON document instead.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runDetectionBenchmark } from './detection.ts';
import { formatDetectionReport } from './detection-report.ts';
import { formatOverheadReport, runOverheadBenchmark } from './overhead.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean' },
    'detection-only': { type: 'boolean' },
    'overhead-only': { type: 'boolean' },
  },
});
const corpus = path.resolve(positionals[0] ?? path.join(repoRoot, '..', 'shared', 'corpus', 'real-dev.jsonl'));

const detection = values['overhead-only'] ? undefined : await runDetectionBenchmark([corpus]);
if (detection && !values.json) console.log(`${formatDetectionReport(detection)}\n`);
const overhead = values['detection-only'] ? undefined : await runOverheadBenchmark();
if (overhead && !values.json) console.log(formatOverheadReport(overhead));
if (values.json) console.log(JSON.stringify({ detection, overhead }, null, 2));
