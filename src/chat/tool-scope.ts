import { AsyncLocalStorage } from 'node:async_hooks';

/** A governed tool call running, and the ones it runs inside. */
interface ToolScope {
  /** The breakers that govern the call (any objects: only their identity counts). */
  readonly breakers: readonly object[];
  readonly sessionId: string;
  readonly outer: ToolScope | undefined;
}

/**
 * The governed tool calls the current code runs inside, across the
 * ChatClient's tool loop and every door: a sub-agent that is a tool (its tool
 * runs an agent on a model of the same breaker and session) runs its model
 * calls inside its caller's, whichever framework either is built with.
 */
const toolScopes = new AsyncLocalStorage<ToolScope>();

/** Runs `work` as a tool call of session `sessionId` governed by `breakers` (one or several). */
export function runAsToolOf<T>(breakers: object | readonly object[], sessionId: string, work: () => T): T {
  const list = Array.isArray(breakers) ? (breakers as readonly object[]) : [breakers as object];
  if (list.length === 0) return work();
  return toolScopes.run({ breakers: list, sessionId, outer: toolScopes.getStore() }, work);
}

/**
 * Whether the current code runs inside a governed tool call of `breaker`'s
 * session `sessionId`. A prompt that ends with a user message there is a
 * sub-agent's task, which the lead model wrote, not a user turn: taken for
 * one, every new task would start the breaker's evidence over.
 */
export function insideToolOf(breaker: object, sessionId: string): boolean {
  for (let scope = toolScopes.getStore(); scope !== undefined; scope = scope.outer) {
    if (scope.sessionId === sessionId && scope.breakers.includes(breaker)) return true;
  }
  return false;
}
