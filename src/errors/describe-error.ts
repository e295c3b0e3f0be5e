import { GovernorError } from './governor-error.ts';

/**
 * What went wrong, in one line, for a message that wraps `error`: its
 * message (or name), after its code when the message does not hold it (a
 * system error's `ECONNREFUSED`, a driver's SQLSTATE; a Governor error's
 * code is its own field). Node reports a refused dual-stack connect as an
 * AggregateError with an empty message: its errors are joined instead.
 */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describeError).join('; ');
  if (!(error instanceof Error)) return String(error);
  const message = error.message !== '' ? error.message : error.name;
  const code = GovernorError.isInstance(error) ? undefined : (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' && !message.includes(code) ? `${code} ${message}` : message;
}
