import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import type { Rng } from '../../prng.ts';
import { runPlan, type PlanEntry } from '../scenario.ts';
import * as productive from './productive.ts';
import * as stuck from './stuck.ts';

/** The customer-service family plan: how many instances of each scenario. */
const CUSTOMER_SERVICE_PLAN: readonly PlanEntry[] = [
  { family: 'spiral-identical', count: 10, make: stuck.csSpiralIdentical },
  { family: 'spiral-varied-args', count: 9, make: stuck.csSpiralVaried },
  { family: 'error-loop', count: 12, make: stuck.csErrorLoop },
  { family: 'short-cycle', count: 7, make: stuck.csShortCycle },
  { family: 'text-repetition', count: 6, make: stuck.csTextRepetition },
  { family: 'loop-across-turns', count: 6, make: stuck.csLoopAcrossTurns },
  { family: 'non-latin-loop', count: 10, make: stuck.csNonLatinLoop },
  { family: 'id-sweep', count: 19, make: productive.csIdSweep },
  { family: 'bounded-retry', count: 16, make: productive.csBoundedRetry },
  { family: 'polling', count: 10, make: productive.csPolling },
  { family: 'pagination', count: 9, make: productive.csPagination },
  { family: 'non-latin-varied', count: 10, make: productive.csNonLatinVaried },
  { family: 'structured-text', count: 10, make: productive.csStructuredText },
  { family: 'near-miss', count: 10, make: productive.csNearMiss },
  { family: 'recheck-after-user', count: 8, make: productive.csRecheckAfterUser },
  { family: 'linear-task', count: 18, make: productive.csLinear },
];

export function customerServiceTrajectories(seed: Rng): CorpusTrajectory[] {
  return runPlan('customer-service', 'synthetic/customer-service', seed.fork('customer-service'), CUSTOMER_SERVICE_PLAN);
}
