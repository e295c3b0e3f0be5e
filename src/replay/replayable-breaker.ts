import type { BreakerEvent, ProposedToolCall } from '../breaker/breaker-event.ts';

/** What a breaker answers at each step; mirrors the AgentBreaker's decision. */
export interface ReplayDecision {
  readonly action: 'allow' | 'steer' | 'block' | 'stop';
  readonly category?: string;
  readonly message?: string;
  readonly evidence?: unknown;
}

/**
 * The part of a breaker that replay drives. The AgentBreaker has this shape;
 * so do the re-implemented peer detectors of the benchmark, which is what lets
 * every detector be judged by the same replay loop.
 */
export interface ReplayableBreaker {
  /** Gate at the start of a model round. */
  checkModelCall(sessionId: string): Promise<ReplayDecision>;
  /** Judges a tool call before it runs. */
  checkToolCall(sessionId: string, call: ProposedToolCall): Promise<ReplayDecision>;
  /** Records something that happened. */
  observe(sessionId: string, event: BreakerEvent): Promise<ReplayDecision>;
}
