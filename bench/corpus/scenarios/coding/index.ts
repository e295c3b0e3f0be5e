import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import type { Rng } from '../../prng.ts';
import { runPlan, type PlanEntry } from '../scenario.ts';
import * as productive from './productive.ts';
import * as stuck from './stuck.ts';

/** The coding family plan: how many instances of each scenario. */
const CODING_PLAN: readonly PlanEntry[] = [
  { family: 'spiral-identical', count: 12, make: stuck.codingSpiralIdentical },
  { family: 'spiral-varied-args', count: 10, make: stuck.codingSpiralVaried },
  { family: 'short-cycle', count: 12, make: stuck.codingShortCycle },
  { family: 'error-loop', count: 14, make: stuck.codingErrorLoop },
  { family: 'token-drift', count: 9, make: stuck.codingTokenDrift },
  { family: 'text-repetition', count: 7, make: stuck.codingTextRepetition },
  { family: 'loop-across-turns', count: 5, make: stuck.codingLoopAcrossTurns },
  { family: 'non-latin-loop', count: 4, make: stuck.codingNonLatinLoop },
  { family: 'chunked-read', count: 12, make: productive.codingChunkedRead },
  { family: 'many-files', count: 10, make: productive.codingManyFiles },
  { family: 'batch-edit', count: 10, make: productive.codingBatchEdit },
  { family: 'polling', count: 10, make: productive.codingPolling },
  { family: 'bounded-retry', count: 8, make: productive.codingBoundedRetry },
  { family: 'edit-test-cycle', count: 14, make: productive.codingEditTestCycle },
  { family: 'compaction', count: 8, make: productive.codingCompaction },
  { family: 'early-growth', count: 8, make: productive.codingEarlyGrowth },
  { family: 'structured-text', count: 6, make: productive.codingStructuredText },
  { family: 'long-coding-run', count: 20, make: productive.codingLongRun },
  { family: 'near-miss', count: 12, make: productive.codingNearMiss },
  { family: 'linear-task', count: 12, make: productive.codingLinear },
];

export function codingTrajectories(seed: Rng): CorpusTrajectory[] {
  return runPlan('coding', 'synthetic/coding', seed.fork('coding'), CODING_PLAN);
}
