import type { AgentBreaker } from '../agent-breaker.ts';
import type { BreakerDecision } from '../breaker-decision.ts';

/** What happened to one tool call driven through the breaker like a live tool loop. */
export interface DrivenToolCall {
  /** The verdict before the call ran. */
  readonly check: BreakerDecision;
  /** The verdict on observing it; absent when the call was blocked or stopped (it never ran). */
  readonly observed?: BreakerDecision;
  /** The first decision that was not `allow`, else `allow`. */
  readonly decision: BreakerDecision;
}

/**
 * Drives one session of an AgentBreaker the way an agent's tool loop does:
 * a tool call is checked, and observed with its result only if it was allowed
 * to run (`allow` or `steer`).
 */
export class BreakerDriver {
  readonly breaker: AgentBreaker;
  readonly sessionId: string;

  constructor(breaker: AgentBreaker, sessionId = 'session-1') {
    this.breaker = breaker;
    this.sessionId = sessionId;
  }

  async tool(tool: string, args: unknown, result: string | null, error = false): Promise<DrivenToolCall> {
    const check = await this.breaker.checkToolCall(this.sessionId, { tool, args });
    if (check.action === 'block' || check.action === 'stop') return { check, decision: check };
    const observed = await this.breaker.observe(this.sessionId, { kind: 'tool_call', tool, args, result, error });
    return { check, observed, decision: check.action !== 'allow' ? check : observed };
  }

  /** Runs the same call `times` times and returns every outcome. */
  async repeat(times: number, tool: string, args: unknown, result: (i: number) => string | null, error = false): Promise<DrivenToolCall[]> {
    const out: DrivenToolCall[] = [];
    for (let i = 0; i < times; i++) out.push(await this.tool(tool, args, result(i), error));
    return out;
  }

  /** A model round: gated, then observed. Returns the gate's verdict if it was not `allow`, else the observation's. */
  async model(text = '', promptTokens: number | null = null, completionTokens: number | null = null, costUsd?: number): Promise<BreakerDecision> {
    const gate = await this.breaker.checkModelCall(this.sessionId);
    if (gate.action === 'stop') return gate;
    const observed = await this.breaker.observe(this.sessionId, {
      kind: 'model',
      text,
      promptTokens,
      completionTokens,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
    return observed.action !== 'allow' ? observed : gate;
  }

  user(text = 'Please go on.'): Promise<BreakerDecision> {
    return this.breaker.observe(this.sessionId, { kind: 'user', text });
  }

  retrieval(query: string, results?: readonly string[]): Promise<BreakerDecision> {
    return this.breaker.observe(this.sessionId, { kind: 'retrieval', query, ...(results !== undefined ? { results } : {}) });
  }

  delegation(agent: string, input: string, output: string): Promise<BreakerDecision> {
    return this.breaker.observe(this.sessionId, { kind: 'delegation', agent, input, output });
  }
}

/** A clock tests move by hand. */
export class ManualClock {
  time: number;

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  readonly now = (): number => this.time;

  advance(ms: number): void {
    this.time += ms;
  }
}

/** Actions of a list of decisions, for compact assertions. */
export function actions(calls: readonly DrivenToolCall[]): string[] {
  return calls.map((c) => c.decision.action);
}
