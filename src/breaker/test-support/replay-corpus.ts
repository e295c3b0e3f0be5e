import { readFileSync } from 'node:fs';
import { AgentBreaker } from '../agent-breaker.ts';
import type { AgentBreakerOptions } from '../breaker-options.ts';
import type { BreakerSessionState, BreakerStore, SessionOp, SessionReducer } from '../breaker-store.ts';
import { InMemoryBreakerStore } from '../in-memory-breaker-store.ts';
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

/**
 * An in-memory store (every session kept decoded) that hands `check` each
 * state it writes, after the write. What `check` throws is kept in
 * `failures`: the breaker takes a store's error as an outage and goes on
 * (fail-open), so a test must look there rather than wait for a throw.
 */
export class StateCheckingStore implements BreakerStore {
  readonly #inner = new InMemoryBreakerStore({ maxSessions: 100_000, decodedSessions: 100_000 });
  readonly #check: (state: BreakerSessionState) => void;
  /** States that passed the check so far. */
  checked = 0;
  /** What the check threw, in order. */
  readonly failures: unknown[] = [];

  constructor(check: (state: BreakerSessionState) => void) {
    this.#check = check;
  }

  read(sessionId: string) {
    return this.#inner.read(sessionId);
  }

  async apply(sessionId: string, op: SessionOp, reducer: SessionReducer) {
    const applied = await this.#inner.apply(sessionId, op, reducer);
    try {
      this.#check(applied.state);
    } catch (error) {
      this.failures.push(error);
      throw error;
    }
    this.checked++;
    return applied;
  }

  delete(sessionId: string) {
    return this.#inner.delete(sessionId);
  }
}
