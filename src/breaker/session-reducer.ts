import type { ProposedToolCall } from './breaker-event.ts';
import { initialState, type BreakerSessionState } from './breaker-state.ts';
import type { SessionOp, SessionReducer, SessionRetention } from './breaker-store.ts';
import type { ToolProposal } from './detectors/tool-record.ts';
import type { Outcome, SessionLogic } from './session-logic.ts';

/**
 * Applies logged session operations through the breaker's logic, so a store
 * (or another replica) replays an operation exactly as the breaker that
 * logged it judged it.
 */
export class BreakerReducer implements SessionReducer {
  readonly #logic: SessionLogic;
  readonly #proposal: (tool: string, args: unknown) => ToolProposal;

  constructor(logic: SessionLogic, proposal: (tool: string, args: unknown) => ToolProposal) {
    this.#logic = logic;
    this.#proposal = proposal;
  }

  initial(at: number): BreakerSessionState {
    return initialState(at);
  }

  apply(state: BreakerSessionState, op: SessionOp): Outcome {
    switch (op.k) {
      case 'observe': {
        const event = op.event;
        const proposal = event.kind === 'tool_call' ? this.#proposal(event.tool, event.args) : null;
        return this.#logic.observe(state, event, proposal, op.at, op.surfaced === true);
      }
      case 'tool': {
        const call: ProposedToolCall = op.call;
        return this.#logic.checkToolCall(state, this.#proposal(call.tool, call.args), call.args, op.at);
      }
      case 'model':
        return this.#logic.checkModelCall(state, op.at);
      case 'reset':
        return this.#logic.reset(state, op.at, op.evidence === true);
    }
  }

  retention(state: BreakerSessionState): SessionRetention {
    const cooldownMs = this.#logic.ctx.options.cooldownMs;
    return {
      pinned: state.status !== 'CLOSED' || state.budget.phase > 0,
      until: state.status === 'OPEN' && state.openedAt !== null ? state.openedAt + cooldownMs : 0,
    };
  }
}
