import type { CorpusTrajectory } from '../corpus-trajectory.ts';
import { buildHandCase } from './hand-case.ts';
import { PRODUCTIVE_CASES } from './productive-cases.ts';
import { STUCK_CASES } from './stuck-cases.ts';

/** Every hand-written trajectory: the loops first, then the look-alikes. */
export function handwrittenTrajectories(): CorpusTrajectory[] {
  return [...STUCK_CASES, ...PRODUCTIVE_CASES].map(buildHandCase);
}
