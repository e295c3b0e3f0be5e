/** One retried model call attempt, as listeners hear about it. */
export interface ModelRetryEvent {
  /** The attempt that failed, from 1; the next attempt is `attempt + 1`. */
  readonly attempt: number;
  /** Most retries of this call (`ModelOptions.maxRetries`). */
  readonly maxRetries: number;
  /** How long the client waits before the next attempt. */
  readonly delayMs: number;
  /** Whether `delayMs` came from the provider's `retry-after-ms` / `retry-after` header. */
  readonly fromRetryAfter: boolean;
  /** HTTP status of the failed attempt, when there was a response. */
  readonly statusCode: number | undefined;
  /** The failed attempt's error. */
  readonly error: unknown;
  readonly modelId: string;
  /** The breaker session of the call: the conversation id, or the call's own session when the request names none. */
  readonly sessionId: string;
}

/**
 * Hears about model calls the ChatClient retries. Register it for a request or
 * a client with the `MODEL_CALL_LISTENERS` advisor param. Hooks may be async;
 * what they return or throw never reaches the call.
 */
export interface ModelCallListener {
  onRetry?(event: ModelRetryEvent): unknown;
}

/** Advisor param holding `ModelCallListener[]` for a request or a client. */
export const MODEL_CALL_LISTENERS = 'governor.modelCallListeners';

/** Tells every listener; a listener that throws never affects the call. */
export function notifyRetry(listeners: unknown, event: ModelRetryEvent): void {
  if (!Array.isArray(listeners)) return;
  for (const listener of listeners as ModelCallListener[]) {
    try {
      const returned = listener?.onRetry?.(event);
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // Listeners observe; they do not get to break the call.
    }
  }
}
