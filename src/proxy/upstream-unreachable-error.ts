import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/**
 * The model API behind the proxy did not answer (refused, reset, timed
 * out, DNS), or broke off its answer. The message names its origin and the
 * network error's code, never a header or a body.
 */
export class UpstreamUnreachableError extends GovernorError {
  declare readonly code: 'GOVERNOR_UPSTREAM_UNREACHABLE';
  /**
   * @param timeoutMs the limit the proxy's fetch put on each wait, named in
   *   the message when that is what ran out
   */
  constructor(origin: string, error: unknown, what: 'did not answer' | 'broke off its answer' = 'did not answer', timeoutMs?: number) {
    super('GOVERNOR_UPSTREAM_UNREACHABLE', `governor proxy: the upstream ${origin} ${what}${timedOut(error, timeoutMs)} (${reason(error)}).`, {
      cause: error,
    });
  }
}

/** How undici names a wait that ran out: for the headers, or for the next part of the body. */
const TIMEOUTS: Readonly<Record<string, string>> = { UND_ERR_HEADERS_TIMEOUT: '', UND_ERR_BODY_TIMEOUT: ' of silence' };

function timedOut(error: unknown, timeoutMs: number | undefined): string {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (timeoutMs === undefined || timeoutMs === 0 || typeof code !== 'string' || !Object.hasOwn(TIMEOUTS, code)) return '';
  return `: timed out after ${timeoutMs / 1000} s${TIMEOUTS[code]}`;
}

/**
 * What went wrong, in a word or a line: the network error's code, else what
 * fetch said (it refuses a port on the fetch standard's list of bad ports
 * with a bare `bad port`, no code), else the error's name.
 */
function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') {
    const said = redact(cause.message.split('\n')[0]!.slice(0, 160));
    return said === 'bad port' ? 'fetch refuses this port: serve the upstream on another one' : said;
  }
  return error instanceof Error ? error.name : 'error';
}
