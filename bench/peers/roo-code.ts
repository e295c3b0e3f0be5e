/**
 * Roo Code's ToolRepetitionDetector (src/core/tools/ToolRepetitionDetector.ts),
 * re-implemented from its published rules: each tool call is serialised as
 * its name plus parameters with sorted keys; a call identical to the previous
 * one raises a counter (the first occurrence counts 0), a different one resets
 * it; when the counter reaches the limit (default 3) the call is not executed.
 * Browser scroll actions are exempt. Only tool calls are compared: model
 * turns and user messages in between do not reset the counter.
 */
import type { ProposedToolCall } from '../../src/breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from '../../src/replay/replayable-breaker.ts';
import { ALLOW, stop } from './peer-detector.ts';

/** One instance per session. */
export class RooCodeToolRepetition implements ReplayableBreaker {
  readonly #limit: number;
  #previous: string | undefined;
  #repeats = 0;

  /** @param limit consecutive identical calls allowed (Roo Code's default: 3) */
  constructor(limit = 3) {
    this.#limit = limit;
  }

  async checkModelCall(): Promise<ReplayDecision> {
    return ALLOW;
  }

  async checkToolCall(_sessionId: string, call: ProposedToolCall): Promise<ReplayDecision> {
    const args = call.args;
    if (call.tool === 'browser_action' && typeof args === 'object' && args !== null) {
      const action = (args as Record<string, unknown>)['action'];
      if (action === 'scroll_down' || action === 'scroll_up') return ALLOW;
    }
    const serialised = JSON.stringify({ name: call.tool, parameters: sortTopLevelKeys(args) });
    if (serialised === this.#previous) {
      this.#repeats++;
    } else {
      this.#repeats = 0;
      this.#previous = serialised;
    }
    if (this.#limit > 0 && this.#repeats >= this.#limit) {
      // Roo Code clears its memory after asking the user, so a guided agent can go on.
      this.#repeats = 0;
      this.#previous = undefined;
      return stop('tool_spiral', `${call.tool} called with identical parameters ${this.#limit + 1} times in a row`);
    }
    return ALLOW;
  }

  async observe(): Promise<ReplayDecision> {
    return ALLOW;
  }
}

/** Roo Code sorts the parameter names only, not keys nested deeper. */
function sortTopLevelKeys(args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(args).sort()) sorted[key] = (args as Record<string, unknown>)[key];
  return sorted;
}
