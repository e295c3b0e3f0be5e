import type { Category, CorpusTrajectory } from '../corpus-trajectory.ts';
import type { Family } from '../families.ts';
import { Rng } from '../prng.ts';
import { TrajectoryBuilder } from '../trajectory-builder.ts';

/**
 * A hand-written trajectory: the steps are spelled out one by one and the
 * label is set in place, right after the step it names, so a reviewer reads
 * the case and its label together.
 */
export interface HandCase {
  /** Short slug; the id becomes `handwritten/FAMILY/SLUG`. */
  readonly slug: string;
  readonly family: Family;
  readonly variant: string;
  readonly task: string;
  /** What repeats, or why it is not a loop. */
  readonly note: string;
  /** @default 'counted' */
  readonly tokens?: 'counted' | 'null';
  /** @default 2200 */
  readonly systemTokens?: number;
  readonly outcome?: Record<string, unknown>;
  readonly steps: (h: Hand) => void;
}

/** The step vocabulary of a hand-written case. */
class Hand {
  readonly #b: TrajectoryBuilder;

  constructor(b: TrajectoryBuilder) {
    this.#b = b;
  }

  get contextTokens(): number {
    return this.#b.contextTokens;
  }

  user(text: string): this {
    this.#b.user(text);
    return this;
  }

  model(text = '', extraCompletion = 0): this {
    this.#b.model(text, extraCompletion);
    return this;
  }

  call(tool: string, args: Record<string, unknown> | string, result: string | null, options: { error?: boolean; fullChars?: number } = {}): this {
    this.#b.call(tool, args, result, options);
    return this;
  }

  retrieval(query: string, results: readonly string[]): this {
    this.#b.retrieval(query, results);
    return this;
  }

  delegation(agent: string, input: string, output: string, fullChars?: number): this {
    this.#b.delegation(agent, input, output, fullChars === undefined ? {} : { fullChars });
    return this;
  }

  compact(summary: string, keepTokens = 1500): this {
    this.#b.compact(summary, { keepTokens });
    return this;
  }

  /** Labels the step just written as the first stuck step. */
  stuckHere(category: Category): this {
    this.#b.stuck(category, this.#b.length - 1);
    return this;
  }

  /** Labels token drift from the step just written on (resolved at build time). */
  driftFromHere(): this {
    this.#b.stuckOnDriftFrom(this.#b.length - 1);
    return this;
  }
}

export function buildHandCase(c: HandCase): CorpusTrajectory {
  const id = `handwritten/${c.family}/${c.slug}`;
  const b = new TrajectoryBuilder({
    id,
    source: 'handwritten',
    family: c.family,
    variant: c.variant,
    task: c.task,
    rng: new Rng(id),
    tokens: c.tokens ?? 'counted',
    systemTokens: c.systemTokens ?? 2200,
  });
  c.steps(new Hand(b));
  b.note(c.note);
  b.outcome(c.outcome ?? {});
  return b.build();
}
