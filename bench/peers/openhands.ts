/**
 * OpenHands' StuckDetector (openhands/controller/stuck.py), re-implemented
 * from its published rules. Before every agent step it looks at the history
 * (headless mode: the whole history, user messages left out) and is stuck when:
 *  1. the last 4 actions are identical and so are the last 4 observations;
 *  2. the last 3 actions are identical and the last 3 observations are errors
 *     (needs at least 4 of each in the history);
 *  3. the last 3 messages the agent sent are identical, with no observation
 *     between them (monologue);
 *  4. over the last 6 actions and 6 observations, A-B-A-B-A-B: actions and
 *     observations alternate between two identical pairs.
 *
 * Mapping the trajectory format onto its events: a tool call, retrieval or
 * delegation is an action (the text of the model step that requested it is
 * the `thought` of the first action, as OpenHands attaches it; actions compare
 * all their fields, thought included), its result the observation, an error
 * result an ErrorObservation; a model step that requests nothing is an agent
 * message. Observations compare by content: the corpus records no exit codes,
 * so OpenHands' command-output special case (compare command + exit code
 * only) cannot apply. Not reproduced: its IPython syntax-error variants of rule
 * 2 (no such observations in the format).
 */
import type { BreakerEvent, ProposedToolCall } from '../../src/breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from '../../src/replay/replayable-breaker.ts';
import { ALLOW, stop } from './peer-detector.ts';

type HistoryEvent =
  | { readonly type: 'action'; readonly key: string; readonly message: boolean }
  | { readonly type: 'observation'; readonly key: string; readonly error: boolean };

/** One instance per session. */
export class OpenHandsStuckDetector implements ReplayableBreaker {
  readonly #history: HistoryEvent[] = [];
  /** Text of the last model step, until we know whether it asked for a tool. */
  #pendingText: string | undefined;

  async checkModelCall(): Promise<ReplayDecision> {
    this.#flushMessage();
    return this.#verdict();
  }

  async checkToolCall(_sessionId: string, _call: ProposedToolCall): Promise<ReplayDecision> {
    return this.#verdict();
  }

  async observe(_sessionId: string, event: BreakerEvent): Promise<ReplayDecision> {
    switch (event.kind) {
      case 'model':
        this.#pendingText = event.text;
        return ALLOW;
      case 'tool_call':
        this.#act(`tool:${event.tool}:${JSON.stringify(event.args)}`);
        this.#history.push({ type: 'observation', key: `${event.error === true}:${event.result ?? ''}`, error: event.error === true });
        return ALLOW;
      case 'retrieval':
        this.#act(`retrieval:${event.query}`);
        this.#history.push({ type: 'observation', key: JSON.stringify(event.results ?? []), error: false });
        // No pre-execution hook exists for retrievals in a replay: judge now.
        return this.#verdict();
      case 'delegation':
        this.#act(`delegate:${event.agent}:${event.input}`);
        this.#history.push({ type: 'observation', key: event.output, error: false });
        return this.#verdict();
      case 'user':
        // Headless mode drops user messages from the history it inspects.
        this.#flushMessage();
        return ALLOW;
    }
  }

  #act(what: string): void {
    const thought = this.#pendingText ?? '';
    this.#pendingText = undefined;
    this.#history.push({ type: 'action', key: `${what}\u0000${thought}`, message: false });
  }

  #flushMessage(): void {
    if (this.#pendingText === undefined) return;
    this.#history.push({ type: 'action', key: `message:${this.#pendingText}`, message: true });
    this.#pendingText = undefined;
  }

  #verdict(): ReplayDecision {
    const reason = this.#stuckReason();
    return reason === undefined ? ALLOW : stop('tool_spiral', reason);
  }

  /** Most recent first, up to `n` of each kind. */
  #lastOf(n: number): { actions: HistoryEvent[]; observations: HistoryEvent[] } {
    const actions: HistoryEvent[] = [];
    const observations: HistoryEvent[] = [];
    for (let i = this.#history.length - 1; i >= 0 && (actions.length < n || observations.length < n); i--) {
      const event = this.#history[i] as HistoryEvent;
      if (event.type === 'action' && actions.length < n) actions.push(event);
      else if (event.type === 'observation' && observations.length < n) observations.push(event);
    }
    return { actions, observations };
  }

  #stuckReason(): string | undefined {
    const history = this.#history;
    if (history.length < 3) return undefined;
    const { actions, observations } = this.#lastOf(4);
    const same = (list: HistoryEvent[], count: number): boolean => list.length >= count && list.slice(0, count).every((e) => e.key === list[0]?.key);

    if (actions.length === 4 && observations.length === 4 && same(actions, 4) && same(observations, 4)) {
      return 'the same action produced the same observation 4 times';
    }
    if (actions.length >= 4 && observations.length >= 4 && same(actions, 3)) {
      if (observations.slice(0, 3).every((o) => o.type === 'observation' && o.error)) {
        return 'the same action failed 3 times';
      }
    }
    const messages: number[] = [];
    for (let i = 0; i < history.length; i++) {
      const event = history[i] as HistoryEvent;
      if (event.type === 'action' && event.message) messages.push(i);
    }
    if (messages.length >= 3) {
      const last3 = messages.slice(-3);
      const keys = last3.map((i) => (history[i] as HistoryEvent).key);
      if (keys.every((k) => k === keys[0])) {
        const between = history.slice((last3[0] ?? 0) + 1, last3[2]);
        if (!between.some((e) => e.type === 'observation')) return 'the agent sent itself the same message 3 times';
      }
    }
    if (history.length < 6) return undefined;
    const six = this.#lastOf(6);
    if (six.actions.length === 6 && six.observations.length === 6) {
      const alternates = (list: HistoryEvent[]): boolean =>
        list[0]?.key === list[2]?.key && list[0]?.key === list[4]?.key && list[1]?.key === list[3]?.key && list[1]?.key === list[5]?.key;
      if (alternates(six.actions) && alternates(six.observations)) {
        return 'two actions alternate with the same observations (A-B-A-B-A-B)';
      }
    }
    return undefined;
  }
}
