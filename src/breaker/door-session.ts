import type { ObservingBreaker } from './ai-sdk-adapter.ts';
import type { BreakerDecision } from './breaker-decision.ts';
import type { BreakerEvent, ModelEvent } from './breaker-event.ts';
import type { HostedEvent } from './hosted-calls.ts';
import { breakerErrorFor } from './breaker-errors.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue } from '../errors/validate-options.ts';
import { observeRound } from './observe-round.ts';
import { hash53 } from './similarity/hash.ts';
import { BREAKER_TAG } from '../chat/breaker-note.ts';
import { OWN_EVENT } from '../chat/observation.ts';
import { currentToolOf, insideToolOf, stopInsideToolOf, toolCallOf } from '../chat/tool-scope.ts';

/**
 * One governed session as a framework door (LangChain middleware, Agents SDK
 * hooks) sees it: the first stop, which every later gate rethrows, and the
 * steer messages waiting for the model's next call.
 *
 * A framework may swallow an error thrown inside a tool step (or wrap it in
 * its own type), so a stop decided there is remembered and thrown again, as
 * the category's error, at the next model gate. That holds across a
 * sub-agent run inside a governed tool call of the session (see
 * {@link DoorSession.runTool}): its stop is the lead's too, and a steer
 * reaches the agent whose round or call it was decided on.
 */
export class DoorSession {
  readonly sessionId: string;
  /** Verdicts on tool calls judged ahead of running them, by tool call id. */
  readonly verdicts = new Map<string, BreakerDecision>();
  readonly #breaker: ObservingBreaker;
  #stopped: Error | undefined;
  /** Steers for the model's next call outside any tool call of the session (the lead's). */
  readonly #steers: string[] = [];
  /** Steers for the next model call inside a tool call of the session (a sub-agent's), by call: they end with it. */
  readonly #toolSteers = new WeakMap<object, string[]>();
  /** The user turn last reported: its place in the conversation and a hash of its text. */
  #userTurn: string | undefined;

  constructor(breaker: ObservingBreaker, sessionId: string) {
    this.#breaker = breaker;
    this.sessionId = sessionId;
  }

  /** The stop that ended the session, if any. */
  get stopped(): Error | undefined {
    return this.#stopped;
  }

  /** Throws the category's error for a `stop` (remembering the first one). */
  stopIf(decision: BreakerDecision): void {
    if (decision.action !== 'stop') return;
    throw this.#remember(decision);
  }

  /** Remembers a stop without throwing: for places where a throw would not reach the caller. */
  noteStop(decision: BreakerDecision): void {
    if (decision.action === 'stop') this.#remember(decision);
  }

  /** `tell`: tell the doors running the tool calls this code runs inside (see {@link runTool}). */
  #remember(decision: BreakerDecision, tell = true): Error {
    if (this.#stopped === undefined) {
      this.#stopped = breakerErrorFor(decision, this.sessionId);
      this.onStop(this.#stopped);
      if (tell) stopInsideToolOf(this.#breaker, this.sessionId, decision);
    }
    return this.#stopped;
  }

  /**
   * Called once with the error of the session's first stop, before anyone
   * sees it: a door that knows more of the run than the breaker does adds it
   * there (the Agents SDK door: the run's state, as the SDK's own errors carry it).
   */
  protected onStop(_error: Error): void {
    // Most doors have nothing to add.
  }

  /** Throws the remembered stop, if any. */
  rethrowStop(): void {
    if (this.#stopped) throw this.#stopped;
  }

  /**
   * The gate before a model call: throws a stop (the one this door noticed
   * first, else the breaker's), and queues a steer (budget wrap-up) for a
   * breaker that does not queue it itself. A session the breaker lets probe
   * again (after its cooldown, or a reset) forgets the stop it had.
   */
  async gateModelCall(): Promise<void> {
    const decision = await this.#breaker.checkModelCall(this.sessionId);
    if (decision.probe === true) this.#stopped = undefined;
    this.rethrowStop();
    this.stopIf(decision);
    if (decision.action === 'steer' && decision.message && this.#breaker.takeSteers === undefined) this.#steersHere().push(decision.message);
  }

  /**
   * Runs `work` as a governed tool call of the session (see `toolCallOf`),
   * which may run a sub-agent on a model of the same breaker and session.
   * The steers waiting when it starts were decided before it, for this
   * agent's next model call: they are kept for that call, not taken by a
   * sub-agent's first one. A stop decided inside it (by a sub-agent's door)
   * is this door's stop too, thrown at its next gate as the category's error:
   * the sub-agent's framework may have turned it into a failed tool call, and
   * the open breaker's error would say less.
   */
  runTool<T>(work: () => T): T {
    return this.toolCall()(work);
  }

  /** {@link runTool} for a call that runs in steps (a streaming tool): each step runs in the same call. */
  toolCall(): <T>(work: () => T) => T {
    // An AgentBreaker sets aside what waits for this agent when the call starts (see tool-scope's watchToolCalls).
    return toolCallOf(this.#breaker, this.sessionId, (decision) => this.#remember(decision, false));
  }

  /**
   * Records an event the door saw. Inside a tool call of the session, a
   * steer it decides is for the next model call inside that call (the
   * sub-agent's): it waits there, and ends with the call rather than reach
   * the lead, whose conversation it is not about.
   */
  observe(event: BreakerEvent): Promise<BreakerDecision> {
    return this.#breaker.observe(this.sessionId, event, OWN_EVENT);
  }

  /**
   * Reports the conversation's last message as a user turn, once: call it
   * before the model gate with the message's place in what the model is
   * about to read, when that message is the user's. A user turn is new
   * information (the breaker's evidence starts over), so a conversation whose
   * every turn asks the same tool about something new is not a loop. A
   * retried call (same place, same text) is not a new turn, nor is a message
   * inside a tool call this door's breaker governs in its session: there it
   * is a sub-agent's task, which the lead model wrote (taken for a user turn,
   * every new task would start the breaker's evidence over).
   */
  async noteUserTurn(position: number, text: string): Promise<void> {
    if (insideToolOf(this.#breaker, this.sessionId)) return;
    // A prompt that ends with the user's message starts a run: a stop this door noticed before ended an earlier
    // one, and what this run gets is the breaker's word now (`BreakerOpenError` while the session is open).
    this.#stopped = undefined;
    const turn = `${position}\u0000${text.length}\u0000${hash53(text)}`;
    if (turn === this.#userTurn) return;
    this.#userTurn = turn;
    this.stopIf(await this.observe({ kind: 'user', text }));
  }

  /**
   * Reports a finished model round: its answer, then the calls the
   * model's API ran itself in it (see {@link observeRound}). Throws the
   * first stop; returns the verdict on the answer. Inside a tool call this
   * door's breaker governs in its session, the round is a sub-agent's
   * (`ModelEvent.delegated`).
   */
  async noteRound(answer: ModelEvent, hosted: readonly HostedEvent[]): Promise<BreakerDecision> {
    const delegated = insideToolOf(this.#breaker, this.sessionId);
    const round = await observeRound({ observe: (_id, event) => this.observe(event) }, this.sessionId, delegated ? { ...answer, delegated } : answer, hosted);
    for (const verdict of round.hosted) this.queueSteer(verdict);
    if (round.stop !== undefined) this.stopIf(round.stop);
    return round.answer;
  }

  /**
   * Queues the steer of a model-level verdict decided by `observe` (a `steer`,
   * or a `block` that has no call to answer) for the model's next call. An
   * AgentBreaker queues those itself (see `AgentBreaker.takeSteers`); only a
   * breaker without that queue needs the door to keep them.
   */
  queueSteer(decision: BreakerDecision): void {
    if (decision.action !== 'steer' && decision.action !== 'block') return;
    if (decision.message && this.#breaker.takeSteers === undefined) this.#steersHere().push(decision.message);
  }

  /** Keeps a tool call's steer for the model's next call, where the call's result cannot carry it. */
  deferSteer(decision: BreakerDecision): void {
    if (decision.message) this.#steersHere().push(decision.message);
  }

  /**
   * The steer messages the model has not seen yet, emptied: the door's own
   * (budget wrap-up at the gate) and those the breaker queued on observed
   * events. Every door delivers model-level steers through this one function.
   * Inside a tool call of the session, only those decided inside it.
   */
  takeSteers(): string[] {
    return [...this.#steersHere().splice(0), ...(this.#breaker.takeSteers?.(this.sessionId) ?? [])];
  }

  /**
   * Puts back, first in line, steers taken for a model call that failed
   * before the model answered: a retry of that call from above the door (a
   * framework's retry middleware or policy) then delivers them.
   */
  returnSteers(steers: readonly string[]): void {
    if (steers.length > 0) this.#steersHere().unshift(...steers);
  }

  /** The steers waiting for the next model call where this code runs: outside any tool call of the session, or inside the innermost one. */
  #steersHere(): string[] {
    const call = currentToolOf(this.#breaker, this.sessionId);
    if (call === undefined) return this.#steers;
    let steers = this.#toolSteers.get(call);
    if (steers === undefined) this.#toolSteers.set(call, (steers = []));
    return steers;
  }
}

/** A bounded map of live door sessions: a run that dies without cleanup must not leak its session forever. */
export class DoorSessions {
  readonly #breaker: ObservingBreaker;
  readonly #limit: number;
  readonly #sessions = new Map<string, DoorSession>();

  constructor(breaker: ObservingBreaker, limit = 1000) {
    this.#breaker = breaker;
    this.#limit = limit;
  }

  get(sessionId: string): DoorSession {
    let session = this.#sessions.get(sessionId);
    if (session === undefined) {
      session = new DoorSession(this.#breaker, sessionId);
      this.#sessions.set(sessionId, session);
      if (this.#sessions.size > this.#limit) {
        const oldest = this.#sessions.keys().next().value;
        if (oldest !== undefined) this.#sessions.delete(oldest);
      }
    }
    return session;
  }

  delete(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }
}

/**
 * Refuses, as a typed error, a breaker a door cannot observe with: each of its
 * three methods is called on a run, so one missing would otherwise surface as
 * a TypeError in the middle of the first run.
 */
export function assertObservingBreaker(breaker: ObservingBreaker): void {
  const candidate = breaker as Partial<Record<keyof ObservingBreaker, unknown>> | null;
  if (
    candidate === null ||
    typeof candidate !== 'object' ||
    typeof candidate.checkModelCall !== 'function' ||
    typeof candidate.checkToolCall !== 'function' ||
    typeof candidate.observe !== 'function'
  ) {
    throw new InvalidOptionError(
      'breaker',
      `must be an AgentBreaker (or an object with checkModelCall, checkToolCall and observe methods), got ${describeValue(breaker)}`,
    );
  }
}

/** Waiting steers as one text for the model's next call. */
export function steerNote(steers: readonly string[]): string {
  return steers.map((s) => `${BREAKER_TAG} ${s}`).join('\n\n');
}

/** What a blocked tool call answers the model with. */
export function blockedResult(decision: BreakerDecision): string {
  return `${BREAKER_TAG} ${decision.message ?? 'This repeated call was not run.'}`;
}

/** A tool result with a steer appended. */
export function steeredResult(result: string, decision: BreakerDecision): string {
  return `${result}\n\n${BREAKER_TAG} ${decision.message ?? ''}`;
}

/** Text of a tool result as the breaker records it. */
export function resultText(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result ?? null);
}
