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
 * A tool call's proposal (the fingerprint of its arguments); `observed` when
 * it is for the observation of an executed call, which may reuse the
 * proposal of its check.
 */
type ProposalOf = (tool: string, args: unknown, observed: boolean) => ToolProposal;

/**
 * Errors thrown while judging (by the logic and its detectors), as opposed to
 * those of the store that called the reducer: see {@link isJudgingError}.
 */
const judgingErrors = new WeakSet<object>();

/**
 * Whether an error (or its cause) was thrown by a {@link BreakerReducer}
 * judging an operation, not by the store applying it: a bug to surface, not
 * an outage of the store.
 */
export function isJudgingError(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (judgingErrors.has(e)) return true;
  }
  return false;
}

function judgingError(error: unknown): object {
  const marked = typeof error === 'object' && error !== null ? error : new Error(String(error));
  judgingErrors.add(marked);
  return marked;
}

/**
 * Applies logged session operations through the breaker's logic, so a store
 * (or another replica) replays an operation exactly as the breaker that
 * logged it judged it.
 */
export class BreakerReducer implements SessionReducer {
  readonly #logic: SessionLogic;
  readonly #proposal: ProposalOf;
  /** Operations this reducer digested: a store that digests what it is given again gets them back as they are. */
  readonly #digested = new WeakSet<SessionOp>();

  constructor(logic: SessionLogic, proposal: ProposalOf) {
    this.#logic = logic;
    this.#proposal = proposal;
  }

  initial(at: number): BreakerSessionState {
    return initialState(at);
  }

  /** @throws the judgement's own error, marked (see {@link isJudgingError}), when the logic fails. */
  apply(state: BreakerSessionState, op: SessionOp): Outcome {
    try {
      return this.#apply(state, op);
    } catch (error) {
      throw judgingError(error);
    }
  }

  #apply(state: BreakerSessionState, op: SessionOp): Outcome {
    switch (op.k) {
      case 'observe': {
        const event = op.event;
        const proposal = event.kind === 'tool_call' ? (op.p ?? this.#proposal(event.tool, event.args, false)) : null;
        return this.#logic.observe(state, event, proposal, op.at, op.surfaced === true, op);
      }
      case 'tool': {
        const call: ProposedToolCall = op.call;
        return this.#logic.checkToolCall(state, op.p ?? this.#proposal(call.tool, call.args, false), call.args, op.at, op.t);
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
   * redacted, unless `redactTexts` is false: for a store that keeps sessions
   * in this process's memory, where texts go nowhere and a redacted secret
   * would make texts that differ only by it look alike.
   */
  digest(op: SessionOp, redactTexts = true): SessionOp {
    const subAgent = (tool: string) => this.#logic.ctx.isSubAgent(tool);
    switch (op.k) {
      case 'tool': {
        const { tool, args } = op.call;
        if (op.p !== undefined) return op;
        const digested = { k: 'tool', at: op.at, call: { tool, args: null }, p: this.#proposal(tool, args, false) } as const;
        return subAgent(tool) ? { ...digested, t: taskPrint(args) } : digested;
      }
      case 'observe': {
        const event = op.event;
        if (op.p !== undefined || op.t !== undefined || this.#digested.has(op)) return op;
        if (event.kind === 'tool_call') {
          const digested = { ...op, event: { ...event, args: null, result: null }, p: this.#proposal(event.tool, event.args, true) };
          return subAgent(event.tool) ? { ...digested, t: taskPrint(event.args), a: answerPrint(event.result) } : { ...digested, d: digestResult(event) };
        }
        if (event.kind === 'delegation') return { ...op, event: { ...event, input: '', output: '' }, t: taskPrint(event.input), a: answerPrint(event.output) };
        if (!redactTexts) return op;
        // Redacting again would cost as much and change nothing: remember that this one is done.
        const digested = { ...op, event: redactEvent(event) };
        this.#digested.add(digested);
        return digested;
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
