import type { BreakerEvent, ProposedToolCall, ToolCallEvent } from './breaker-event.ts';
import { initialState, type BreakerSessionState } from './breaker-state.ts';
import type { SessionOp, SessionReducer, SessionRetention } from './breaker-store.ts';
import { answerPrint, taskPrint } from './detectors/delegation-loop.ts';
import { digestResult, type ToolProposal } from './detectors/tool-record.ts';
import { redact } from '../redaction/redact.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { decodeOp, encodeOp } from './op-codec.ts';
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
        const proposal = event.kind === 'tool_call' ? (op.p ?? this.#proposal(event.tool, event.args)) : null;
        return this.#logic.observe(state, event, proposal, op.at, op.surfaced === true, op);
      }
      case 'tool': {
        const call: ProposedToolCall = op.call;
        return this.#logic.checkToolCall(state, op.p ?? this.#proposal(call.tool, call.args), call.args, op.at, op.t);
      }
      case 'model':
        return this.#logic.checkModelCall(state, op.at);
      case 'reset':
        return this.#logic.reset(state, op.at, op.evidence === true);
    }
  }

  /**
   * A tool call keeps its fingerprint and result digest instead of its
   * arguments and result, a sub-agent call the prints of its task and
   * answer: that is all their detectors read. What the detectors read as
   * text (model replies, user turns, queries, retrieved passages) is kept
   * redacted.
   */
  digest(op: SessionOp): SessionOp {
    const subAgent = (tool: string) => this.#logic.ctx.isSubAgent(tool);
    switch (op.k) {
      case 'tool': {
        const { tool, args } = op.call;
        if (op.p !== undefined) return op;
        const digested = { k: 'tool', at: op.at, call: { tool, args: null }, p: this.#proposal(tool, args) } as const;
        return subAgent(tool) ? { ...digested, t: taskPrint(args) } : digested;
      }
      case 'observe': {
        const event = op.event;
        if (op.p !== undefined || op.t !== undefined) return op;
        if (event.kind === 'tool_call') {
          const digested = { ...op, event: { ...event, args: null, result: null }, p: this.#proposal(event.tool, event.args) };
          return subAgent(event.tool) ? { ...digested, t: taskPrint(event.args), a: answerPrint(event.result) } : { ...digested, d: digestResult(event) };
        }
        if (event.kind === 'delegation') return { ...op, event: { ...event, input: '', output: '' }, t: taskPrint(event.input), a: answerPrint(event.output) };
        return { ...op, event: redactEvent(event) };
      }
      default:
        return op;
    }
  }

  /** A tool call's print: its check as a store logs it, digested and compact, so the arguments are not in it. */
  print(call: ProposedToolCall): string {
    return encodeOp(this.digest({ k: 'tool', at: 0, call }));
  }

  /**
   * The observation of a tool call known by its print (see {@link print}):
   * the operation {@link digest} makes of the same call with its arguments,
   * so it is judged the same.
   * @throws {InvalidOptionError} when `event.print` is not a print of a call
   * to `event.tool` as this breaker judges it.
   */
  printedObservation(at: number, event: ToolCallEvent & { readonly print: string }, surfaced: boolean): SessionOp {
    let checked: SessionOp;
    try {
      checked = decodeOp(event.print);
    } catch {
      throw new InvalidOptionError('event.print', 'is not a tool call print (make one with AgentBreaker.printToolCall)');
    }
    if (checked.k !== 'tool' || !isProposal(checked.p) || checked.call.args !== null) {
      throw new InvalidOptionError('event.print', 'is not a tool call print (make one with AgentBreaker.printToolCall)');
    }
    if (checked.call.tool !== event.tool) throw new InvalidOptionError('event.print', `is the print of a call to another tool than "${event.tool}"`);
    const subAgent = this.#logic.ctx.isSubAgent(event.tool);
    if (subAgent && checked.t === undefined) {
      throw new InvalidOptionError(
        'event.print',
        `was made by a breaker that does not take "${event.tool}" for a sub-agent: give both the same delegation.subAgentTools`,
      );
    }
    const { print: _print, args: _args, ...observed } = event;
    const digested = {
      k: 'observe' as const,
      at,
      event: { ...observed, args: null, result: null },
      ...(surfaced ? { surfaced: true as const } : {}),
      p: checked.p,
    };
    return subAgent ? { ...digested, t: checked.t!, a: answerPrint(event.result) } : { ...digested, d: digestResult(event) };
  }

  retention(state: BreakerSessionState): SessionRetention {
    const cooldownMs = this.#logic.ctx.options.cooldownMs;
    return {
      pinned: state.status !== 'CLOSED' || state.budget.phase > 0,
      until: state.status === 'OPEN' && state.openedAt !== null ? state.openedAt + cooldownMs : 0,
    };
  }
}

function isProposal(p: ToolProposal | undefined): p is ToolProposal {
  return typeof p === 'object' && p !== null && typeof p.tool === 'string' && typeof p.fp === 'object' && p.fp !== null;
}

function redactEvent(event: BreakerEvent): BreakerEvent {
  switch (event.kind) {
    case 'model':
      return { ...event, text: redactText(event.text) };
    case 'user':
      return { ...event, text: redactText(event.text) };
    case 'retrieval':
      return { ...event, query: redactText(event.query), ...(Array.isArray(event.results) ? { results: event.results.map(redactText) } : {}) };
    default:
      return event;
  }
}

/** Events come from callers as well as from this library: anything that is not text is left for the detectors to refuse as before. */
function redactText<T>(value: T): T {
  return (typeof value === 'string' ? redact(value) : value) as T;
}
