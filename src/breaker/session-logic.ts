import { ALLOW, type BreakerDecision, type BreakerStatus } from './breaker-decision.ts';
import type { BreakerEvent, ModelEvent, ToolCallEvent } from './breaker-event.ts';
import type { BreakerEventRecord } from './breaker-events.ts';
import { breakerMessage, openRefusalMessage } from './breaker-messages.ts';
import { clip, initialState, LIMITS, NO_DRIFT, omitKey, pushBounded, type BreakerCounters, type BreakerSessionState } from './breaker-state.ts';
import { advanceBudget, budgetEvidence, stopDetection } from './detectors/budget.ts';
import { detectCycle } from './detectors/cycle.ts';
import { detectReask, judgeDelegation, type AnswerPrint, type TaskPrint } from './detectors/delegation-loop.ts';
import type { Detection, DetectorContext } from './detectors/detection.ts';
import { detectErrorLoop } from './detectors/error-loop.ts';
import { judgeRetrieval } from './detectors/rag-fixation.ts';
import { judgeText, noteUserTurn } from './detectors/text-repetition.ts';
import { advanceTokenDrift } from './detectors/token-drift.ts';
import { detectToolSpiral } from './detectors/tool-spiral.ts';
import { digestResult, recordToolCall, type ResultDigest, type ToolProposal } from './detectors/tool-record.ts';
import { isInformativeUserTurn } from './detectors/user-turn.ts';

/** An event for listeners, before the engine adds session id and time: `Omit` taken of each kind, so each keeps its own fields. */
type PendingEvent<E = BreakerEventRecord> = E extends BreakerEventRecord ? Omit<E, 'sessionId' | 'at'> : never;

/**
 * What a digested operation carries in place of raw payloads (see
 * BreakerReducer.digest): a tool result's digest, a sub-agent task's and
 * answer's prints.
 */
export interface EventPrints {
  readonly d?: ResultDigest;
  readonly t?: TaskPrint;
  readonly a?: AnswerPrint;
}

/** The result of judging one operation on one session's state. */
export interface Outcome {
  /** The state to write, or null when nothing changed. */
  readonly next: BreakerSessionState | null;
  readonly decision: BreakerDecision;
  readonly events: readonly PendingEvent[];
}

interface Step {
  state: BreakerSessionState;
  decision: BreakerDecision;
  events: PendingEvent[];
  changed: boolean;
}

/**
 * The breaker's judgement as pure functions of (state, input, time): no I/O,
 * no clocks, no listeners. Every store applies a session's operations
 * through these (see BreakerReducer), on whichever replica reads or writes
 * it, so they must stay deterministic.
 */
export class SessionLogic {
  readonly ctx: DetectorContext;
  /**
   * The last tool call a check judged and found nothing in, with the state
   * it judged it on. A check is normally followed by the observation of the
   * same call, which judges it again for callers that only observe: on the
   * very same state (nothing written in between) and the same proposal, that
   * judgement would repeat the check's, so it is skipped. Compared by
   * identity, so a state or a proposal rebuilt from elsewhere is judged afresh.
   */
  #cleared: { readonly state: BreakerSessionState; readonly proposal: ToolProposal } | undefined;

  constructor(ctx: DetectorContext) {
    this.ctx = ctx;
  }

  /** The state as it is at `now`: an OPEN breaker past its cooldown is HALF_OPEN. */
  settle(state: BreakerSessionState, now: number): Step {
    const step: Step = { state, decision: ALLOW, events: [], changed: false };
    if (state.status === 'OPEN' && state.openedAt !== null && now - state.openedAt >= this.ctx.options.cooldownMs) {
      this.#transition(step, 'HALF_OPEN', now, 'cooldown elapsed; the next model call (in a session without model rounds, the next action) is a probe');
    }
    return step;
  }

  checkModelCall(state: BreakerSessionState, now: number): Outcome {
    const step = this.#afterIdle(this.settle(state, now), now);
    if (step.state.status === 'OPEN') return this.#done(step, this.#openDecision(step));
    const budget = step.state.budget;
    if (this.ctx.options.budget.enabled && budget.phase === 2) {
      this.#escalate(step, stopDetection(budget, this.ctx, step.state.seq, 'a model round was requested after the wrap-up round'), now);
      return this.#done(step);
    }
    if (this.ctx.options.budget.enabled && budget.phase === 1) {
      const evidence = budgetEvidence(budget, this.ctx, 'wrap_up', 'the session budget is spent; this is the wrap-up round');
      return this.#done(step, { action: 'steer', category: 'budget', reason: 'detection', message: breakerMessage('budget', 'steer', evidence), evidence });
    }
    return this.#done(step, step.state.status === 'HALF_OPEN' ? { action: 'allow', probe: true } : ALLOW);
  }

  checkToolCall(state: BreakerSessionState, proposal: ToolProposal, args: unknown, now: number, task?: TaskPrint): Outcome {
    this.#cleared = undefined;
    const step = this.#afterIdle(this.settle(state, now), now);
    if (step.state.status === 'OPEN') return this.#done(step, this.#openDecision(step));
    if (this.ctx.options.budget.enabled && step.state.budget.phase > 0) {
      const evidence = budgetEvidence(step.state.budget, this.ctx, 'tools_blocked', 'the session budget is spent; tool calls are no longer executed');
      const decision: BreakerDecision = {
        action: 'block',
        category: 'budget',
        reason: 'detection',
        message: breakerMessage('budget', 'block', evidence),
        evidence,
      };
      step.events.push({ type: 'escalation', category: 'budget', action: 'block', message: decision.message, evidence });
      return this.#done(step, decision);
    }
    const detection = this.#detectProposal(step.state, proposal, args, task);
    if (detection !== null) this.#escalate(step, detection, now);
    this.#cleared = detection === null && step.state === state ? { state, proposal } : undefined;
    return this.#done(step);
  }

  /**
   * @param surfaced whether the caller throws a stop it is given (the breaker's
   * own advisor does); otherwise the stop waits, as the category's stop, for the next gate.
   */
  observe(state: BreakerSessionState, event: BreakerEvent, proposal: ToolProposal | null, now: number, surfaced = false, prints: EventPrints = {}): Outcome {
    const cleared = this.#cleared;
    this.#cleared = undefined;
    const checked = proposal !== null && cleared?.state === state && cleared.proposal === proposal;
    const step = this.settle(state, now);
    const seq = step.state.seq + 1;
    const counters = bump(step.state.counters, event.kind);
    step.state = { ...step.state, seq, counters, updatedAt: now };
    step.changed = true;
    let detection: Detection | null = null;

    switch (event.kind) {
      case 'user':
        // Text repetition keeps its own, stricter notion of what a user turn adds.
        step.state = { ...step.state, ...noteUserTurn(step.state, event.text, seq, this.ctx) };
        if (isInformativeUserTurn(event.text)) {
          step.state = { ...omitKey(step.state, 'cycleTools'), userSeq: seq };
        }
        break;
      case 'model':
        detection = this.#observeModel(step, event, seq);
        break;
      case 'tool_call':
        detection = this.#observeToolCall(step, event, proposal!, seq, prints, checked);
        break;
      case 'retrieval': {
        const judged = judgeRetrieval(step.state, event, seq, this.ctx);
        step.state = { ...step.state, retrievals: judged.retrievals, ...this.#news(step.state, judged.novel) };
        detection = judged.detection;
        break;
      }
      case 'delegation':
        detection = this.#observeDelegation(step, event.agent, event.input, event.output, seq, prints);
        break;
    }

    // An open breaker keeps counting (budgets, evidence) but has nothing left to escalate.
    if (step.state.status === 'OPEN') return this.#done(step, this.#openDecision(step, false));
    if (detection !== null && !step.state.handled.includes(detection.key)) {
      // Only a model round's verdict can still hold something back (its answer's tool calls); any other event has run.
      this.#escalate(step, detection, now, event.kind !== 'model');
      if (!surfaced && step.decision.action === 'stop' && (step.state.status as BreakerStatus) === 'OPEN') step.state = { ...step.state, openPending: 1 };
      return this.#done(step);
    }
    if (step.state.status === 'HALF_OPEN') {
      if (event.kind === 'model') {
        this.#transition(step, 'CLOSED', now, 'the probe round completed without a trip');
      } else if (detection === null && event.kind !== 'user' && step.state.counters.modelCalls === 0) {
        // A session that reports no model rounds (a tool-only loop, the MCP proxy) has no round to probe with: its
        // probe is its first action after half-opening — a tool call (checked, where the caller checks, with any
        // repeat of the loop stopping it at once), a retrieval or a sub-agent call — observed without a detection.
        // Without this it would stay HALF_OPEN for good, and every later detection would stop it at once.
        // A user turn is not the agent acting, so it proves nothing.
        this.#transition(step, 'CLOSED', now, 'the first action after half-opening completed without a trip');
      }
    }
    return this.#done(step);
  }

  /**
   * Explicit reset: OPEN → HALF_OPEN (the next model call is a probe; in a
   * session without model rounds, the next action). Budgets and evidence
   * stay, unless `evidence`: then the baselines go too (what the detectors
   * saw, the escalation ladders, pending steers' causes), so a fresh attempt
   * is judged from scratch; budgets and counters still stay.
   */
  reset(state: BreakerSessionState, now: number, evidence = false): Outcome {
    const step = this.settle(state, now);
    if (step.state.status === 'OPEN') this.#transition(step, 'HALF_OPEN', now, 'reset');
    if (evidence) forgetEvidence(step, now);
    return this.#done(step);
  }

  /**
   * The start of an action after `idleResetMs` without an observed event:
   * judged from fresh evidence (see AgentBreakerOptions.idleResetMs). Only
   * the start of an action looks for the pause: the observation that ends a
   * long action follows no pause, it follows the action.
   */
  #afterIdle(step: Step, now: number): Step {
    const idleMs = this.ctx.options.idleResetMs;
    if (idleMs > 0 && step.state.status !== 'OPEN' && step.state.seq > 0 && now - step.state.updatedAt >= idleMs) forgetEvidence(step, now);
    return step;
  }

  #observeModel(step: Step, event: ModelEvent, seq: number): Detection | null {
    const budget = advanceBudget(step.state.budget, event, seq, this.ctx);
    // A sub-agent's prompt is its own small context: among the lead's rounds, each delegation would restart the
    // lead's growth, and the lead's next round would count as growth on the sub-agent's. Each keeps its own run.
    const { delegatedDrift } = step.state;
    const state = omitKey(step.state, 'delegatedDrift');
    const delegated = event.delegated === true;
    const drift = advanceTokenDrift(delegated ? (delegatedDrift ?? NO_DRIFT) : state.drift, event, seq, this.ctx);
    const text = judgeText(state, typeof event.text === 'string' ? event.text : '', seq, this.ctx);
    // The session's own round comes after the tool calls it waited for: the sub-agents they ran have ended.
    step.state = { ...state, budget: budget.budget, texts: text.texts, ...(delegated ? { delegatedDrift: drift.drift } : { drift: drift.drift }) };
    return budget.detection ?? drift.detection ?? text.detection;
  }

  /** `checked`: a check of this call on this very state found nothing (see #cleared). */
  #observeToolCall(step: Step, event: ToolCallEvent, proposal: ToolProposal, seq: number, prints: EventPrints, checked: boolean): Detection | null {
    if (this.ctx.isSubAgent(event.tool))
      return this.#observeDelegation(step, event.tool, event.args, event.result, seq, prints, checked && proposal.tool === event.tool);
    // Judged as the check would have judged it, for callers that only observe.
    const detection = checked ? null : this.#detectProposal(step.state, proposal, event.args);
    step.state = { ...step.state, ...recordToolCall(step.state, seq, proposal, prints.d ?? digestResult(event), this.ctx) };
    return detection;
  }

  /** A sub-agent call: the ask is judged as a check would have judged it, then the answer. */
  #observeDelegation(step: Step, agent: string, input: unknown, output: string | null, seq: number, prints: EventPrints, checked = false): Detection | null {
    const asked = checked ? null : detectReask(step.state, agent, input, this.ctx, prints.t);
    const judged = judgeDelegation(step.state, agent, input, output, seq, this.ctx, prints.t && prints.a ? { task: prints.t, answer: prints.a } : undefined);
    step.state = { ...step.state, delegations: judged.delegations, ...this.#news(step.state, judged.novel) };
    return asked !== null && !step.state.handled.includes(asked.key) ? asked : judged.detection;
  }

  #news(state: BreakerSessionState, novel: number | null): Pick<BreakerSessionState, 'seen'> {
    return { seen: novel === null ? state.seen : pushBounded(state.seen, novel, LIMITS.seen) };
  }

  #detectProposal(state: BreakerSessionState, proposal: ToolProposal, args: unknown, task?: TaskPrint): Detection | null {
    if (this.ctx.isSubAgent(proposal.tool)) return detectReask(state, proposal.tool, args, this.ctx, task);
    const detection =
      detectErrorLoop(state, proposal, this.ctx) ??
      // A cycle of two or more tools also repeats each of its tools: name the larger pattern.
      detectCycle(state, proposal, this.ctx) ??
      detectToolSpiral(state, proposal, this.ctx);
    const cycle = state.cycleTools;
    if (detection?.category === 'tool_spiral' && cycle !== undefined && cycle.includes(proposal.tool)) {
      // The cycle's other step was blocked, so what is left of it repeats one tool: still the same loop.
      return { ...detection, category: 'cycle', key: `cycle:${detection.key}`, evidence: { ...detection.evidence, sequence: cycle, period: cycle.length } };
    }
    return detection;
  }

  /** @param ran the event judged has happened: a block can only tell the model, not refuse anything. */
  #escalate(step: Step, detection: Detection, now: number, ran = false): void {
    const { category } = detection;
    const before = step.state.escalations[category] ?? 0;
    let count = before + 1;
    const ladder = category === 'budget' ? ['stop' as const] : this.#ladder(category);
    let action = detection.action ?? ladder[Math.min(count, ladder.length) - 1]!;
    const round = step.state.counters.modelCalls;
    // A probe that trips again re-opens at once: the breaker already gave this session its chances.
    if (step.state.status === 'HALF_OPEN') action = 'stop';
    else if (action === 'stop' && detection.action === undefined && step.state.escalatedIn?.[category] === round) {
      // The rung below was decided in this model round (parallel calls, several hosted searches in one answer): the
      // model has not read it yet, so it cannot have ignored it. The category stays on that rung until the next round.
      count = before;
      action = ladder[Math.min(before, ladder.length) - 1]!;
      if (action === 'steer') {
        // That steer is on its way already; a second one would only repeat it.
        step.state = { ...step.state, handled: pushBounded(step.state.handled, detection.key, LIMITS.handled) };
        step.changed = true;
        return;
      }
    }
    const evidence = { ...detection.evidence, detection: count };
    const message = breakerMessage(category, ran && action === 'block' ? 'steer' : action, evidence);
    step.state = {
      ...step.state,
      escalations: { ...step.state.escalations, [category]: count },
      // Only sessions that report model rounds have rounds to wait for; a budget stop never waits.
      ...(round > 0 && category !== 'budget' ? { escalatedIn: { ...step.state.escalatedIn, [category]: round } } : {}),
      handled: pushBounded(step.state.handled, detection.key, LIMITS.handled),
      ...(category === 'cycle' && detection.evidence.sequence !== undefined ? { cycleTools: detection.evidence.sequence.slice(0, 8) } : {}),
      counters: { ...step.state.counters, detections: step.state.counters.detections + 1 },
    };
    step.changed = true;
    step.decision = { action, category, reason: 'detection', message, evidence };
    step.events.push({ type: 'escalation', category, action, message, evidence });
    if (action === 'stop') {
      step.state = { ...step.state, openCategory: category, openReason: clip(message, LIMITS.reason), openEvidence: evidence };
      this.#transition(step, 'OPEN', now, message);
    }
  }

  #ladder(category: Exclude<Detection['category'], 'budget'>) {
    const o = this.ctx.options;
    switch (category) {
      case 'tool_spiral':
        return o.toolSpiral.escalation;
      case 'error_loop':
        return o.errorLoop.escalation;
      case 'cycle':
        return o.cycle.escalation;
      case 'token_drift':
        return o.tokenDrift.escalation;
      case 'rag_fixation':
        return o.ragFixation.escalation;
      case 'delegation_loop':
        return o.delegation.escalation;
      case 'text_repetition':
        return o.textRepetition.escalation;
    }
  }

  #transition(step: Step, to: BreakerStatus, now: number, message: string): void {
    const from = step.state.status;
    if (from === to) return;
    // A pending stop lives only while OPEN; the open evidence stays until the breaker closes.
    const halfOpen = omitKey(step.state, 'openPending');
    const closed = omitKey(halfOpen, 'openEvidence');
    step.state = {
      ...(to === 'OPEN' ? step.state : to === 'CLOSED' ? closed : halfOpen),
      status: to,
      openedAt: to === 'OPEN' ? now : step.state.openedAt,
      ...(to === 'CLOSED' ? { openCategory: null, openReason: null } : {}),
    };
    step.changed = true;
    step.events.push({
      type: 'state_change',
      from,
      to,
      message,
      ...(step.state.openCategory !== null ? { category: step.state.openCategory } : {}),
    });
  }

  /**
   * The answer while OPEN. The first gate after a stop decided on an observed
   * event gives that stop itself (its category's error); later ones, the open breaker.
   */
  #openDecision(step: Step, gate = true): BreakerDecision {
    const state = step.state;
    const category = state.openCategory ?? 'tool_spiral';
    if (gate && state.openPending === 1) {
      step.state = omitKey(state, 'openPending');
      step.changed = true;
      return {
        action: 'stop',
        category,
        reason: 'detection',
        message: state.openReason ?? `Agent breaker stopped the session (${category}).`,
        evidence: state.openEvidence ?? { detail: state.openReason ?? `breaker opened on ${category}` },
      };
    }
    return refusedWhileOpen(state, this.ctx.options.cooldownMs);
  }

  #done(step: Step, decision?: BreakerDecision): Outcome {
    return { next: step.changed ? step.state : null, decision: decision ?? step.decision, events: step.events };
  }
}

/** Forgets what the detectors saw (see SessionLogic.reset); keeps the breaker's status, its budgets and counters. */
function forgetEvidence(step: Step, now: number): void {
  const fresh = initialState(now);
  const { status, openedAt, openCategory, openReason, seq, budget, counters } = step.state;
  const budgetEscalations = step.state.escalations.budget;
  step.state = {
    ...fresh,
    status,
    openedAt,
    openCategory,
    openReason,
    seq,
    budget,
    counters,
    userSeq: seq,
    escalations: budgetEscalations === undefined ? {} : { budget: budgetEscalations },
  };
  step.changed = true;
}

/** The answer to a call on an OPEN session (not the first gate after its stop: see SessionLogic). */
export function refusedWhileOpen(state: BreakerSessionState, cooldownMs: number): BreakerDecision {
  const category = state.openCategory ?? 'tool_spiral';
  const until = (state.openedAt ?? 0) + cooldownMs;
  return {
    action: 'stop',
    category,
    reason: 'breaker_open',
    message: openRefusalMessage(state.openReason ?? category, until),
    evidence: state.openEvidence ?? { detail: state.openReason ?? `breaker opened on ${category}` },
  };
}

function bump(counters: BreakerCounters, kind: BreakerEvent['kind']): BreakerCounters {
  const next = { ...counters, events: counters.events + 1 };
  if (kind === 'model') next.modelCalls++;
  else if (kind === 'tool_call') next.toolCalls++;
  else if (kind === 'retrieval') next.retrievals++;
  else if (kind === 'delegation') next.delegations++;
  else next.userEvents++;
  return next;
}
