import { AsyncLocalStorage } from 'node:async_hooks';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';

/** A governed tool call running, and the ones it runs inside. */
interface ToolScope {
  /** The breakers that govern the call (any objects: only their identity counts). */
  readonly breakers: readonly object[];
  readonly sessionId: string;
  readonly outer: ToolScope | undefined;
  /** Told of a stop decided inside the call (see {@link stopInsideToolOf}). */
  readonly onStop: ((decision: BreakerDecision) => void) | undefined;
}

/**
 * The governed tool calls the current code runs inside, across the
 * ChatClient's tool loop and every door: a sub-agent that is a tool (its tool
 * runs an agent on a model of the same breaker and session) runs its model
 * calls inside its caller's, whichever framework either is built with.
 */
const toolScopes = new AsyncLocalStorage<ToolScope>();

/** What a breaker is told of its governed tool calls (see {@link watchToolCalls}). */
export interface ToolCallWatcher {
  /**
   * A call of session `sessionId` starts, before it runs anything and in
   * the context of the code that starts it: there `currentToolOf` names the
   * call it starts in, if any.
   */
  start(sessionId: string): void;
  /** A stop was decided inside a call of session `sessionId` (see {@link stopInsideToolOf}). */
  stop(sessionId: string, decision: BreakerDecision): void;
}

const callWatchers = new WeakMap<object, ToolCallWatcher>();

/**
 * Has `watcher` told of the governed tool calls of `breaker` (in the
 * ChatClient's tool loop or any door) as they start, and of a stop decided
 * inside one. The AgentBreaker keeps the steers waiting when a call starts
 * for the agent that calls the tool, not for a sub-agent the call runs, and
 * a sub-agent's stop for the calling agent's next gate.
 */
export function watchToolCalls(breaker: object, watcher: ToolCallWatcher): void {
  callWatchers.set(breaker, watcher);
}

/** Runs `work` as a tool call of session `sessionId` governed by `breakers` (one or several). */
export function runAsToolOf<T>(breakers: object | readonly object[], sessionId: string, work: () => T): T {
  return toolCallOf(breakers, sessionId)(work);
}

/**
 * Starts one tool call of session `sessionId` governed by `breakers` (those
 * that watch their calls are told now, see {@link watchToolCalls}): the
 * function runs work inside it, as often as needed (a streaming tool runs
 * each step in it), and every run is the same call. `onStop` is told of a
 * stop decided inside the call by a door of one of its breakers in its
 * session: a sub-agent's stop, which its own framework may turn into a plain
 * tool failure, or answer the lead model with a text of its own.
 */
export function toolCallOf(breakers: object | readonly object[], sessionId: string, onStop?: (decision: BreakerDecision) => void): <T>(work: () => T) => T {
  const list = Array.isArray(breakers) ? (breakers as readonly object[]) : [breakers as object];
  if (list.length === 0) return (work) => work();
  for (const breaker of list) callWatchers.get(breaker)?.start(sessionId);
  const scope: ToolScope = { breakers: list, sessionId, outer: toolScopes.getStore(), onStop };
  return (work) => toolScopes.run(scope, work);
}

/**
 * The innermost governed tool call of `breaker`'s session `sessionId` the
 * current code runs inside, as a key (the same object for every step of the
 * call), or undefined outside any.
 */
export function currentToolOf(breaker: object, sessionId: string): object | undefined {
  for (let scope = toolScopes.getStore(); scope !== undefined; scope = scope.outer) {
    if (scope.sessionId === sessionId && scope.breakers.includes(breaker)) return scope;
  }
  return undefined;
}

/**
 * The governed tool call of `breaker`'s session `sessionId` that the agent
 * making the innermost one (see {@link currentToolOf}) runs inside: the
 * call's caller, undefined when that agent runs outside any (the lead) or
 * when the current code runs inside none.
 */
export function callerToolOf(breaker: object, sessionId: string): object | undefined {
  let inner = false;
  for (let scope = toolScopes.getStore(); scope !== undefined; scope = scope.outer) {
    if (scope.sessionId !== sessionId || !scope.breakers.includes(breaker)) continue;
    if (inner) return scope;
    inner = true;
  }
  return undefined;
}

/**
 * Whether the current code runs inside a governed tool call of `breaker`'s
 * session `sessionId`. A prompt that ends with a user message there is a
 * sub-agent's task, which the lead model wrote, not a user turn: taken for
 * one, every new task would start the breaker's evidence over.
 */
export function insideToolOf(breaker: object, sessionId: string): boolean {
  return currentToolOf(breaker, sessionId) !== undefined;
}

/**
 * Tells every governed tool call of `breaker`'s session the current code runs
 * inside, innermost first, and `breaker`'s watcher, of a stop decided here
 * (by a door or the ChatClient's advisor): the session is stopped for the
 * agents that run those calls too, whichever door or client they run in.
 */
export function stopInsideToolOf(breaker: object, sessionId: string, decision: BreakerDecision): void {
  let inside = false;
  for (let scope = toolScopes.getStore(); scope !== undefined; scope = scope.outer) {
    if (scope.sessionId !== sessionId || !scope.breakers.includes(breaker)) continue;
    inside = true;
    scope.onStop?.(decision);
  }
  if (inside) callWatchers.get(breaker)?.stop(sessionId, decision);
}
