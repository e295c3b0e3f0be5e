import type { CorpusTrajectory } from '../corpus-trajectory.ts';
import type { Family } from '../families.ts';
import type { Rng } from '../prng.ts';
import { pad } from '../text.ts';
import { TrajectoryBuilder, type BuilderOptions } from '../trajectory-builder.ts';

/** What a scenario generator gets: its own id and random stream. */
export interface ScenarioContext {
  readonly id: string;
  readonly source: string;
  readonly family: Family;
  /** 0-based index among the instances of this plan entry, to spread variants evenly. */
  readonly index: number;
  readonly rng: Rng;
}

type Scenario = (ctx: ScenarioContext) => CorpusTrajectory;

/** A builder for the scenario's trajectory, with id, source, family and stream filled in. */
export function startTrajectory(ctx: ScenarioContext, options: Omit<BuilderOptions, 'id' | 'source' | 'family' | 'rng'>): TrajectoryBuilder {
  return new TrajectoryBuilder({ ...options, id: ctx.id, source: ctx.source, family: ctx.family, rng: ctx.rng });
}

export interface PlanEntry {
  readonly family: Family;
  readonly count: number;
  readonly make: Scenario;
}

/**
 * Runs a domain's plan: `count` instances of each entry, ids
 * `DOMAIN/FAMILY/NNN` numbered per family across entries, each with a
 * random stream forked from the domain seed and its id.
 */
export function runPlan(domain: string, source: string, seed: Rng, plan: readonly PlanEntry[]): CorpusTrajectory[] {
  const numbers = new Map<Family, number>();
  const out: CorpusTrajectory[] = [];
  for (const entry of plan) {
    for (let index = 0; index < entry.count; index++) {
      const n = (numbers.get(entry.family) ?? 0) + 1;
      numbers.set(entry.family, n);
      const id = `${domain}/${entry.family}/${pad(n, 3)}`;
      out.push(entry.make({ id, source, family: entry.family, index, rng: seed.fork(id) }));
    }
  }
  return out;
}

/** The item at `index`, wrapping around: spreads variants evenly over instances. */
export function cycle<T>(items: readonly T[], index: number): T {
  if (items.length === 0) throw new Error('cycle over an empty list');
  return items[((index % items.length) + items.length) % items.length] as T;
}
