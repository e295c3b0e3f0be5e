/** How many causes deep an error is read for what it says in fields. */
const MAX_CAUSES = 4;

/** A system error code (`ECONNRESET`, `ETIMEDOUT`, `EAI_AGAIN`). */
const SYSTEM_CODE = /^E[A-Z_]{3,}$/;

/**
 * What a tool that threw is recorded with: the error's message, led by what
 * the error (or a cause of it) says only in its fields — an HTTP status
 * (`status`, `statusCode`) and a system error code (`code`) that the message
 * does not name. Many errors carry the outage there alone (`fetch failed`
 * with an `ECONNREFUSED` cause, a client's `{ status: 503 }` with the
 * message `upstream failed`); the breaker reads the text, and gives an
 * outage the allowance for transient errors only when the text says so.
 * They lead because only the start of a result is read for that.
 */
export function thrownText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const named = new Set<string>();
  let e: unknown = error;
  for (let depth = 0; typeof e === 'object' && e !== null && depth <= MAX_CAUSES; depth++) {
    const { status, statusCode, code, cause } = e as { status?: unknown; statusCode?: unknown; code?: unknown; cause?: unknown };
    const http = typeof status === 'number' ? status : statusCode;
    if (typeof http === 'number' && Number.isInteger(http) && http >= 400 && http <= 599 && !message.includes(String(http))) named.add(`HTTP ${http}`);
    if (typeof code === 'string' && SYSTEM_CODE.test(code) && !message.includes(code)) named.add(code);
    e = cause;
  }
  return named.size === 0 ? message : `${[...named].join(', ')}: ${message}`;
}
