/** What every tool-call notification carries. */
export interface ToolCallInfo {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
  /** The breaker session of the call: the conversation id, or the call's own session when the request names none. */
  readonly sessionId: string;
}

/**
 * Hears about every tool call the ToolCallAdvisor executes. Register it once
 * (`new ToolCallAdvisor({ listeners })`, or for a whole client with the
 * `TOOL_CALL_LISTENERS` advisor param) instead of wrapping each tool. Hooks may
 * be async; what they return or throw never reaches the tool call.
 */
export interface ToolCallListener {
  onToolCallStart?(event: ToolCallInfo): unknown;
  onToolCallEnd?(event: ToolCallInfo & { readonly result: unknown; readonly durationMs: number }): unknown;
  onToolCallError?(event: ToolCallInfo & { readonly error: unknown; readonly durationMs: number }): unknown;
  /**
   * A call that could not run, so no other hook hears it: a tool that does
   * not exist (`error` a NoSuchToolError) or input that is not valid for it
   * (an InvalidToolInputError). `message` is the error result the model is
   * sent. Not a call the breaker blocked: that is the breaker's escalation.
   */
  onToolCallRefused?(event: ToolCallInfo & { readonly message: string; readonly error: unknown }): unknown;
}

/** Advisor param holding extra `ToolCallListener[]` for a request or a client. */
export const TOOL_CALL_LISTENERS = 'governor.toolCallListeners';

/** Calls one hook on every listener; a listener that throws never affects the tool call. */
export function notifyToolCallListeners<K extends keyof ToolCallListener>(
  listeners: readonly ToolCallListener[],
  hook: K,
  event: Parameters<NonNullable<ToolCallListener[K]>>[0],
): void {
  for (const listener of listeners) {
    try {
      const returned = (listener[hook] as ((e: typeof event) => unknown) | undefined)?.call(listener, event);
      // An async listener that rejects must not become an unhandled rejection either.
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // Listeners observe; they do not get to break the agent.
    }
  }
}
