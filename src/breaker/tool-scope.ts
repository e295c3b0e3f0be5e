import { AsyncLocalStorage } from 'node:async_hooks';

/** A governed tool call running, and the ones it runs inside. */
interface ToolScope {
  /** The breaker that governs the call (any object: only its identity counts). */
  readonly breaker: object;
  readonly sessionId: string;
  readonly outer: ToolScope | undefined;
}

/**
 * The governed tool calls the current code runs inside, across every door: a
 * sub-agent that is a tool (its tool runs an agent on a model of the same
 * breaker and session) runs its model calls inside its caller's, whichever
 * framework either is built with.
 */
const toolScopes = new AsyncLocalStorage<ToolScope>();

/** Runs `work` as a governed tool call of `breaker`'s session `sessionId`. */
export function runAsToolOf<T>(breaker: object, sessionId: string, work: () => T): T {
  return toolScopes.run({ breaker, sessionId, outer: toolScopes.getStore() }, work);
}

/**
 * Whether the current code runs inside a governed tool call of `breaker`'s
 * session `sessionId`. A prompt that ends with a user message there is a
 * sub-agent's task, which the lead model wrote, not a user turn: taken for
 * one, every new task would start the breaker's evidence over.
 */
export function insideToolOf(breaker: object, sessionId: string): boolean {
  for (let scope = toolScopes.getStore(); scope !== undefined; scope = scope.outer) {
    if (scope.breaker === breaker && scope.sessionId === sessionId) return true;
  }
  return false;
}
