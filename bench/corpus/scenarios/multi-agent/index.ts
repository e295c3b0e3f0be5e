import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import type { Rng } from '../../prng.ts';
import { runPlan, type PlanEntry } from '../scenario.ts';
import * as productive from './productive.ts';
import * as stuck from './stuck.ts';

/** The multi-agent family plan: how many instances of each scenario. */
const MULTI_AGENT_PLAN: readonly PlanEntry[] = [
  { family: 'delegation-loop', count: 12, make: stuck.maDelegationLoop },
  { family: 'subagent-tool-loop', count: 10, make: stuck.maSubagentToolLoop },
  { family: 'short-cycle', count: 5, make: stuck.maPlannerCritic },
  { family: 'token-drift', count: 4, make: stuck.maTokenDrift },
  { family: 'non-latin-loop', count: 4, make: stuck.maNonLatinLoop },
  { family: 'loop-across-turns', count: 3, make: stuck.maLoopAcrossTurns },
  { family: 'delegation-items', count: 24, make: productive.maDelegationItems },
  { family: 'polling', count: 10, make: productive.maPolling },
  { family: 'non-latin-varied', count: 8, make: productive.maNonLatinVaried },
  { family: 'structured-text', count: 5, make: productive.maStructuredText },
  { family: 'compaction', count: 5, make: productive.maCompaction },
  { family: 'bounded-retry', count: 5, make: productive.maBoundedRetry },
];

export function multiAgentTrajectories(seed: Rng): CorpusTrajectory[] {
  return runPlan('multi-agent', 'synthetic/multi-agent', seed.fork('multi-agent'), MULTI_AGENT_PLAN);
}
