import { StreamProviderError } from 'ai';

/** Retryable as the AI SDK judges a status: 408, 409, 429, 5xx. */
function isRetryableStatus(status: number | undefined): boolean {
  return status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500);
}

function recordOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function statusOf(...values: unknown[]): number | undefined {
  for (const value of values) {
    const n = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599) return n;
  }
  return undefined;
}

/**
 * What a provider's in-stream `error` part carries, as an error: an `Error`
 * as it is, a plain object with a message (Anthropic's `overloaded_error`,
 * an OpenAI-compatible server's `{ error: { … } }`) as the AI SDK's
 * `StreamProviderError`, with the status and retryability it states (an
 * "Overloaded" message is retryable), as `streamText` reports it. Anything
 * else is left as it is.
 */
export function streamProviderError(error: unknown): unknown {
  if (error instanceof Error || StreamProviderError.isInstance(error)) return error;
  const outer = recordOf(error);
  if (outer === undefined) return error;
  const details = recordOf(outer['error']) ?? outer;
  const message = details['message'];
  if (typeof message !== 'string') return error;
  const type = typeof details['type'] === 'string' ? details['type'] : typeof outer['type'] === 'string' ? outer['type'] : undefined;
  const code = details['code'] ?? outer['code'];
  const statusCode = statusOf(details['statusCode'], outer['statusCode'], details['status'], outer['status'], code);
  const stated = details['isRetryable'] ?? outer['isRetryable'];
  const overloaded = /^overloaded(?: error)?$/i.test(message.trim()) || type === 'overloaded_error';
  return new StreamProviderError({
    message,
    ...(type !== undefined ? { type } : {}),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(statusCode !== undefined ? { statusCode } : {}),
    isRetryable: typeof stated === 'boolean' ? stated : overloaded || isRetryableStatus(statusCode),
    data: error,
  });
}
