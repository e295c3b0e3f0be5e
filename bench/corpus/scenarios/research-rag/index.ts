import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import type { Rng } from '../../prng.ts';
import { runPlan, type PlanEntry } from '../scenario.ts';
import * as productive from './productive.ts';
import * as stuck from './stuck.ts';

/** The research/RAG family plan: how many instances of each scenario. */
const RESEARCH_RAG_PLAN: readonly PlanEntry[] = [
  { family: 'rag-fixation', count: 22, make: stuck.ragFixation },
  { family: 'non-latin-loop', count: 10, make: stuck.ragNonLatinLoop },
  { family: 'spiral-varied-args', count: 6, make: stuck.ragWebSpiral },
  { family: 'token-drift', count: 8, make: stuck.ragTokenDrift },
  { family: 'text-repetition', count: 5, make: stuck.ragTextRepetition },
  { family: 'loop-across-turns', count: 5, make: stuck.ragLoopAcrossTurns },
  { family: 'rag-refined', count: 22, make: productive.ragRefined },
  { family: 'rag-reingest', count: 12, make: productive.ragReingest },
  { family: 'pagination', count: 10, make: productive.ragPagination },
  { family: 'non-latin-varied', count: 10, make: productive.ragNonLatinVaried },
  { family: 'structured-text', count: 8, make: productive.ragStructuredText },
  { family: 'id-sweep', count: 8, make: productive.ragIdSweep },
  { family: 'compaction', count: 6, make: productive.ragCompaction },
  { family: 'early-growth', count: 6, make: productive.ragEarlyGrowth },
  { family: 'bounded-retry', count: 5, make: productive.ragBoundedRetry },
];

export function researchRagTrajectories(seed: Rng): CorpusTrajectory[] {
  return runPlan('research-rag', 'synthetic/research-rag', seed.fork('research-rag'), RESEARCH_RAG_PLAN);
}
