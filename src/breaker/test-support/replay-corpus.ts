import { readFileSync } from 'node:fs';
import { AgentBreaker } from '../agent-breaker.ts';
import type { AgentBreakerOptions } from '../breaker-options.ts';
import type { BreakerStore } from '../breaker-store.ts';
import { parseTrajectoryLine } from '../../replay/parse-trajectory.ts';
import { replayTrajectory } from '../../replay/replay.ts';

/** Every detector on, telemetry off: what the codec tests replay the corpora with. */
export const ALL_DETECTORS = {
  telemetry: false,
  toolSpiral: { enabled: true },
  cycle: { enabled: true },
  errorLoop: { enabled: true },
  tokenDrift: { enabled: true },
  ragFixation: { enabled: true },
  delegation: { enabled: true },
  textRepetition: { enabled: true },
  budget: { enabled: true },
} as const satisfies AgentBreakerOptions;

/** Replays every trajectory of a JSONL corpus file, each as a session of its own, through one breaker on `store`. */
export async function replayCorpusFile(file: string, store: BreakerStore, options: AgentBreakerOptions = ALL_DETECTORS): Promise<void> {
  const breaker = new AgentBreaker({ ...options, store });
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  for (const [i, line] of lines.entries()) await replayTrajectory(breaker, parseTrajectoryLine(line), `t-${i}`);
}
