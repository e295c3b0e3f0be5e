import { GovernorError } from '../errors/governor-error.ts';

/**
 * The model API behind the proxy did not answer (refused, reset, timed
 * out, DNS), or broke off its answer. The message names its origin and the
 * network error's code, never a header or a body.
 */
export class UpstreamUnreachableError extends GovernorError {
  constructor(origin: string, error: unknown, what: 'did not answer' | 'broke off its answer' = 'did not answer') {
    const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
    const code = typeof cause?.code === 'string' ? cause.code : error instanceof Error ? error.name : 'error';
    super('GOVERNOR_UPSTREAM_UNREACHABLE', `governor proxy: the upstream ${origin} ${what} (${code}).`, { cause: error });
  }
}
