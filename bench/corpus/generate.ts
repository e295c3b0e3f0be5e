/**
 * Regenerates the synthetic corpus files of this folder (and the
 * hand-written one) from fixed seeds: the output is byte-identical on every
 * run. `node bench/corpus/generate.ts [--out DIR]` (default: this folder).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseCommandArgs } from '../../src/test-support/command-args.ts';
import { renderCounts, withCounts } from './corpus-counts.ts';
import type { CorpusFile } from './corpus-file.ts';
import { toJsonLine } from './corpus-trajectory.ts';
import { handwrittenTrajectories } from './handwritten/index.ts';
import { Rng } from './prng.ts';
import { codingTrajectories } from './scenarios/coding/index.ts';
import { customerServiceTrajectories } from './scenarios/customer-service/index.ts';
import { multiAgentTrajectories } from './scenarios/multi-agent/index.ts';
import { researchRagTrajectories } from './scenarios/research-rag/index.ts';

/** Seed of the whole corpus; change it only to produce a different corpus on purpose. */
export const CORPUS_SEED = 'agent-governor/bench-corpus/v1';

export type { CorpusFile };

/** Every corpus file with its trajectories, in a fixed order. */
export function buildCorpus(): CorpusFile[] {
  const seed = new Rng(CORPUS_SEED);
  return [
    { name: 'coding.jsonl', trajectories: codingTrajectories(seed) },
    { name: 'customer-service.jsonl', trajectories: customerServiceTrajectories(seed) },
    { name: 'research-rag.jsonl', trajectories: researchRagTrajectories(seed) },
    { name: 'multi-agent.jsonl', trajectories: multiAgentTrajectories(seed) },
    { name: 'handwritten.jsonl', trajectories: handwrittenTrajectories() },
  ];
}

/** The bytes of one corpus file. */
export function renderFile(file: CorpusFile): string {
  return file.trajectories.map((t) => `${toJsonLine(t)}\n`).join('');
}

/** Writes every corpus file into `dir`; returns the paths written. */
export function writeCorpus(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  return buildCorpus().map((file) => {
    const target = path.join(dir, file.name);
    fs.writeFileSync(target, renderFile(file));
    return target;
  });
}

if (import.meta.main) {
  const { values } = parseCommandArgs('usage: npm run bench:corpus [-- --out DIR]  (default: rewrite bench/corpus/ and its README counts)', {
    out: { type: 'string' },
  });
  const dir = path.resolve(values.out ?? import.meta.dirname);
  for (const written of writeCorpus(dir)) {
    console.log(`${path.relative(process.cwd(), written)}  ${fs.statSync(written).size} bytes`);
  }
  // The README's count tables describe the committed files: refresh them only when those are rewritten.
  if (values.out === undefined) {
    const readme = path.join(import.meta.dirname, 'README.md');
    fs.writeFileSync(readme, withCounts(fs.readFileSync(readme, 'utf8'), renderCounts(buildCorpus())));
    console.log(`${path.relative(process.cwd(), readme)}  counts updated`);
  }
}
