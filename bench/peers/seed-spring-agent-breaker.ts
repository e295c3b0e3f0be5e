/**
 * The SpringAgentBreaker of the design seed, with its default configuration:
 *  - tool spiral: per tool, the arguments normalised to sorted, de-duplicated
 *    `[a-z0-9]` tokens; the last 5 calls of that tool pairwise-consecutive
 *    Jaccard ≥ 0.80;
 *  - RAG fixation: the last 3 retrieval queries consecutive Jaccard ≥ 0.75;
 *  - token drift: prompt tokens growing ≥ 1.35× twice in a row over 3 calls;
 *  - session budget: 100,000 prompt + completion tokens;
 *  - delegation loop: a sub-agent called 3 times, or its last two answers
 *    with Jaccard ≥ 0.65.
 * It judges after the model's response, so the call that completes a spiral
 * has already run: the trip prevents the step after it.
 *
 * Given the benefit of the doubt on one point: its state is kept per session,
 * as the seed intends, not per call as its code does (which would forget
 * everything between calls and never trip across turns).
 */
import type { BreakerEvent } from '../../src/breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from '../../src/replay/replayable-breaker.ts';
import { ALLOW, stop } from './peer-detector.ts';

const TOOL_SPIRAL_WINDOW = 5;
const TOOL_SPIRAL_JACCARD = 0.8;
const RAG_WINDOW = 3;
const RAG_JACCARD = 0.75;
const DRIFT_FACTOR = 1.35;
const MAX_SESSION_TOKENS = 100_000;
const MAX_SUB_AGENT_INVOCATIONS = 3;
const SUB_AGENT_JACCARD = 0.65;

/** The seed's normaliser: ASCII letters and digits only (which is its flaw). */
function seedNormalize(text: string): string {
  const tokens = text
    .toLowerCase()
    .replace(/[^a-z0-9\s]/g, ' ')
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');
  return [...new Set(tokens.sort())].join(' ');
}

/** Jaccard over space-separated tokens; two empty strings count as identical, as in the seed. */
function seedJaccard(a: string, b: string): number {
  const setA = new Set(a.split(' '));
  const setB = new Set(b.split(' '));
  let shared = 0;
  for (const t of setA) if (setB.has(t)) shared++;
  const union = setA.size + setB.size - shared;
  return union === 0 ? 0 : shared / union;
}

function similarRun(history: readonly string[], window: number, threshold: number): boolean {
  if (history.length < window) return false;
  const recent = history.slice(-window);
  for (let i = 1; i < recent.length; i++) {
    if (seedJaccard(recent[i - 1] as string, recent[i] as string) < threshold) return false;
  }
  return true;
}

/** One instance per session. */
export class SeedSpringAgentBreaker implements ReplayableBreaker {
  readonly #toolCalls = new Map<string, string[]>();
  readonly #queries: string[] = [];
  readonly #promptTokens: number[] = [];
  #totalTokens = 0;
  readonly #subAgents = new Map<string, string[]>();
  #tripped: ReplayDecision | undefined;

  async checkModelCall(): Promise<ReplayDecision> {
    return this.#tripped ?? ALLOW;
  }

  async checkToolCall(): Promise<ReplayDecision> {
    return this.#tripped ?? ALLOW;
  }

  async observe(_sessionId: string, event: BreakerEvent): Promise<ReplayDecision> {
    if (this.#tripped) return this.#tripped;
    this.#tripped = this.#judge(event);
    return this.#tripped ?? ALLOW;
  }

  #judge(event: BreakerEvent): ReplayDecision | undefined {
    switch (event.kind) {
      case 'tool_call': {
        const raw = typeof event.args === 'string' ? event.args : JSON.stringify(event.args);
        const history = this.#toolCalls.get(event.tool) ?? [];
        history.push(seedNormalize(raw));
        this.#toolCalls.set(event.tool, history);
        if (similarRun(history, TOOL_SPIRAL_WINDOW, TOOL_SPIRAL_JACCARD)) {
          return stop('tool_spiral', `Function callback invocation spiral detected on tool: ${event.tool}`);
        }
        return undefined;
      }
      case 'retrieval':
        this.#queries.push(seedNormalize(event.query));
        return similarRun(this.#queries, RAG_WINDOW, RAG_JACCARD) ? stop('rag_fixation', 'VectorStore RAG query fixation detected') : undefined;
      case 'model': {
        if (event.promptTokens === null && event.completionTokens === null) return undefined;
        this.#totalTokens += (event.promptTokens ?? 0) + (event.completionTokens ?? 0);
        if (this.#totalTokens >= MAX_SESSION_TOKENS) {
          return stop('budget', `Session token budget exceeded: ${this.#totalTokens} tokens`);
        }
        if (event.promptTokens === null) return undefined;
        this.#promptTokens.push(event.promptTokens);
        const n = this.#promptTokens.length;
        if (n < 3) return undefined;
        const [t1, t2, t3] = this.#promptTokens.slice(n - 3) as [number, number, number];
        if (t1 > 0 && t2 / t1 >= DRIFT_FACTOR && t3 / t2 >= DRIFT_FACTOR) {
          return stop('token_drift', `MessageChatMemory token drift detected: ${t1} → ${t2} → ${t3} prompt tokens`);
        }
        return undefined;
      }
      case 'delegation': {
        const answers = this.#subAgents.get(event.agent) ?? [];
        answers.push(seedNormalize(event.output));
        this.#subAgents.set(event.agent, answers);
        if (answers.length < 2) return undefined;
        if (answers.length >= MAX_SUB_AGENT_INVOCATIONS) return stop('delegation_loop', `Sub-agent ${event.agent} called ${answers.length} times`);
        const similar = seedJaccard(answers[answers.length - 2] as string, answers[answers.length - 1] as string) >= SUB_AGENT_JACCARD;
        return similar ? stop('delegation_loop', `Sub-agent ${event.agent} answered the same twice`) : undefined;
      }
      case 'user':
        return undefined;
    }
  }
}
