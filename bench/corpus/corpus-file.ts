import type { CorpusTrajectory } from './corpus-trajectory.ts';

/** One file of the corpus and the trajectories it holds, in order. */
export interface CorpusFile {
  readonly name: string;
  readonly trajectories: readonly CorpusTrajectory[];
}
