/**
 * `npm run bench`: every benchmark in one go, each as its own command would
 * print it — detection on the repository corpus, detection on the shared
 * real-run corpus when that folder sits next to the repository, then
 * overhead. Run `npm run bench:detect` or `npm run bench:overhead` for one of
 * them with its own flags.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseCommandArgs } from '../src/test-support/command-args.ts';

const here = import.meta.dirname;
const sharedCorpus = path.join(here, '..', '..', 'shared', 'corpus');

parseCommandArgs('usage: npm run bench  (no flags: run npm run bench:detect or npm run bench:overhead for theirs)', {});

function run(script: string, args: readonly string[]): void {
  const result = spawnSync(process.execPath, [path.join(here, script), ...args], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  console.log();
}

run('detect-command.ts', []);
if (existsSync(sharedCorpus)) {
  const files = readdirSync(sharedCorpus)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  if (files.length > 0) run('detect-command.ts', ['--corpus', ...files.map((f) => path.join(sharedCorpus, f))]);
}
run('overhead-command.ts', []);
