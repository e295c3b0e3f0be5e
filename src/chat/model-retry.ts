import { APICallError } from '@ai-sdk/provider';
import { retryWithExponentialBackoff } from '@ai-sdk/provider-utils';
import { RetryError, StreamProviderError } from 'ai';
import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/** Retries of a model call when `ModelOptions.maxRetries` is not set (the AI SDK's default). */
export const DEFAULT_MAX_RETRIES = 2;
/** First backoff wait; it doubles with every retry. */
export const DEFAULT_RETRY_DELAY_MS = 2_000;
/** Longest wait between attempts, whatever the backoff or a `retry-after` header asks for. */
export const MAX_RETRY_DELAY_MS = 60_000;
/** How long a model connection may send nothing before the attempt counts as stalled. */
export const DEFAULT_STALL_TIMEOUT_MS = 300_000;

/** A model connection sent no part of its answer for `stallTimeoutMs`; retried like a network error. */
export class ModelStallError extends GovernorError {
  declare readonly code: 'GOVERNOR_MODEL_STALLED';
  readonly stallTimeoutMs: number;

  constructor(stallTimeoutMs: number) {
    super(
      'GOVERNOR_MODEL_STALLED',
      `The model sent no part of its answer for ${stallTimeoutMs} ms, so the attempt was cancelled. Raise ModelOptions.stallTimeoutMs if the model is slow rather than stuck.`,
    );
    this.stallTimeoutMs = stallTimeoutMs;
  }
}

/**
 * 408, 409, 429, 5xx and network errors (as the provider marks them), an
 * in-stream error the provider marks retryable (an overload before any
 * output), and stalls; never another 4xx.
 */
function isRetryableModelError(error: unknown): boolean {
  if (ModelStallError.isInstance(error)) return true;
  return (APICallError.isInstance(error) || StreamProviderError.isInstance(error)) && error.isRetryable;
}

function statusCodeOf(error: unknown): number | undefined {
  return APICallError.isInstance(error) || StreamProviderError.isInstance(error) ? error.statusCode : undefined;
}

/** The wait the provider asked for with `retry-after-ms` or `retry-after`, if any. */
function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers['retry-after'];
  if (after === undefined) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after); // the HTTP-date form
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What a retry listener learns about the wait before the next attempt. */
export interface RetryWait {
  readonly attempt: number;
  readonly delayMs: number;
  readonly fromRetryAfter: boolean;
  readonly statusCode: number | undefined;
  readonly error: unknown;
}

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  readonly abortSignal: AbortSignal | undefined;
  readonly onRetry: (wait: RetryWait) => void;
}

/**
 * Runs `attempt` under the AI SDK's exponential backoff, with jitter, the
 * provider's `retry-after` honoured up to {@link MAX_RETRY_DELAY_MS}, and the
 * abort signal cancelling the wait (the run ends with the signal's reason, not
 * a retry error).
 */
export async function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  let attempts = 0;
  const retry = retryWithExponentialBackoff({
    maxRetries: policy.maxRetries,
    initialDelayInMs: policy.initialDelayMs,
    abortSignal: policy.abortSignal,
    shouldRetry: isRetryableModelError,
    getDelayInMs: ({ error, exponentialBackoffDelay }) => {
      const asked = retryAfterMs(error);
      // Jitter spreads clients that failed together; a server's own wait is taken as given.
      const delayMs = Math.min(MAX_RETRY_DELAY_MS, asked ?? exponentialBackoffDelay * (0.5 + Math.random() / 2));
      policy.onRetry({ attempt: attempts, delayMs, fromRetryAfter: asked !== undefined, statusCode: statusCodeOf(error), error });
      return delayMs;
    },
    // The message quotes the last error's, which a provider may fill with what it was sent (a key it refused): it is
    // what gets logged. The errors themselves are kept as they are, for the caller to inspect.
    createRetryError: ({ message, reason, errors }) => new RetryError({ message: redact(message), reason, errors }),
  });
  try {
    return await retry(async () => {
      attempts += 1;
      policy.abortSignal?.throwIfAborted();
      return attempt();
    });
  } catch (error) {
    if (policy.abortSignal?.aborted) throw policy.abortSignal.reason;
    throw error;
  }
}

/**
 * An abort signal for one attempt that also fires when a wait on the model
 * (`race`) sees no progress for `stallTimeoutMs`. The clock only runs while
 * waiting on the model, never while a slow consumer holds a streamed chunk.
 */
export class StallWatch {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  readonly signal: AbortSignal;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stalled = false;

  constructor(stallTimeoutMs: number, outer: AbortSignal | undefined) {
    this.#timeoutMs = stallTimeoutMs;
    this.signal = outer ? AbortSignal.any([outer, this.#controller.signal]) : this.#controller.signal;
  }

  get stalled(): boolean {
    return this.#stalled;
  }

  /** Resolves with `promise`, or rejects as soon as the attempt is aborted or stalls, even if the provider ignores the signal. */
  race<T>(promise: PromiseLike<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(this.#reason());
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#stalled = true;
      this.#controller.abort(new ModelStallError(this.#timeoutMs));
    }, this.#timeoutMs);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.#reason());
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (): void => {
        clearTimeout(this.#timer);
        signal.removeEventListener('abort', onAbort);
      };
      promise.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(this.#stalled ? this.#reason() : error);
        },
      );
    });
  }

  #reason(): unknown {
    return this.#stalled ? new ModelStallError(this.#timeoutMs) : this.signal.reason;
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }
}
