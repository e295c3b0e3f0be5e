import type { Rng } from '../../prng.ts';
import type { TrajectoryBuilder } from '../../trajectory-builder.ts';
import { startTrajectory, type ScenarioContext } from '../scenario.ts';
import { renderHit, TOPICS, type Passage, type Topic } from './topics.ts';

/** A research agent over one topic's collection. */
export class Researcher {
  readonly b: TrajectoryBuilder;
  readonly topic: Topic;
  #extra: Passage[] = [];

  constructor(b: TrajectoryBuilder, topic: Topic) {
    this.b = b;
    this.topic = topic;
  }

  get rng(): Rng {
    return this.b.rng;
  }

  /** Makes ingested passages retrievable from now on. */
  ingest(passages: readonly Passage[]): void {
    this.#extra.push(...passages);
  }

  passage(id: string): Passage {
    const p = [...this.topic.passages, ...this.#extra].find((x) => x.id === id);
    if (p === undefined) throw new Error(`unknown passage ${id}`);
    return p;
  }

  /**
   * A retrieval of `ids` (best first). `jitter` lets the scores move a
   * little with the query text, as a real retriever's would, while the
   * documents stay the same.
   */
  retrieve(query: string, ids: readonly string[], options: { say?: string | null; jitter?: boolean } = {}): number {
    if (options.say !== null) this.b.model(options.say ?? '');
    const h = [...query].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 997, 7);
    const hits = ids.map((id, i) => renderHit(this.passage(id), 0.86 - i * 0.05 - (options.jitter ? (h % 5) / 100 : 0)));
    return this.b.retrieval(query, hits);
  }
}

export interface ResearchSetup {
  readonly variant: string;
  /** @default spread over the topics by instance index */
  readonly topic?: Topic;
  /** @default counted for 85% of the runs */
  readonly tokens?: 'counted' | 'null';
  /** @default 1,500–3,200 */
  readonly systemTokens?: number;
}

/** Starts a research session: topic, token accounting, the user's question. */
export function startResearch(ctx: ScenarioContext, setup: ResearchSetup): Researcher {
  const topic = setup.topic ?? (TOPICS[(ctx.index + ctx.rng.int(0, 1)) % TOPICS.length] as Topic);
  const b = startTrajectory(ctx, {
    variant: `${setup.variant}; ${topic.collection}`,
    task: topic.question,
    tokens: setup.tokens ?? (ctx.rng.chance(0.15) ? 'null' : 'counted'),
    systemTokens: setup.systemTokens ?? ctx.rng.int(1500, 3200),
    reasoning: ctx.rng.chance(0.5) ? [0, 200] : [0, 0],
  });
  b.user(topic.question);
  return new Researcher(b, topic);
}
