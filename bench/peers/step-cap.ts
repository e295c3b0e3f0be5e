/**
 * A plain iteration cap, as most agent loops have one (max iterations / max
 * steps): at most `cap` model calls per session, whatever they do.
 */
import type { ReplayableBreaker, ReplayDecision } from '../../src/replay/replayable-breaker.ts';
import { ALLOW, stop } from './peer-detector.ts';

/** One instance per session. */
export class StepCap implements ReplayableBreaker {
  readonly #cap: number;
  #modelCalls = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  async checkModelCall(): Promise<ReplayDecision> {
    if (this.#modelCalls >= this.#cap) return stop('budget', `more than ${this.#cap} model calls`);
    this.#modelCalls++;
    return ALLOW;
  }

  async checkToolCall(): Promise<ReplayDecision> {
    return ALLOW;
  }

  async observe(): Promise<ReplayDecision> {
    return ALLOW;
  }
}
