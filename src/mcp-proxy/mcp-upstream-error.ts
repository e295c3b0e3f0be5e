import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/**
 * The MCP server behind the proxy could not be reached or refused the
 * connection. The message names the server (the origin of its URL, or its
 * command) and what went wrong, with an HTTP status when there was one.
 */
export class McpUpstreamError extends GovernorError {
  declare readonly code: 'GOVERNOR_MCP_UPSTREAM';
  /**
   * `hint`: what the proxy saw that explains the failure; `conceal`: takes out
   * of the failure's own words what they must not show (the path of the
   * server's URL, which an error page or a redirect may echo).
   */
  constructor(upstream: string, error: unknown, hint?: string, conceal: (text: string) => string = (text) => text) {
    const status = (error as { code?: unknown } | null)?.code;
    const why = conceal(error instanceof Error ? error.message.trim() : String(error));
    const cause = (error as { cause?: unknown } | null)?.cause;
    const network = (cause as { code?: unknown } | undefined)?.code;
    // fetch's own "fetch failed" says why only in its cause: a code (ECONNREFUSED), or words alone ("bad port").
    const causeWords = cause instanceof Error ? conceal(cause.message.trim().split('\n')[0]!) : '';
    const detail =
      typeof status === 'number' && status >= 100 && status < 600
        ? ` (HTTP ${status})`
        : typeof network === 'string'
          ? ` (${network})`
          : causeWords !== '' && !why.includes(causeWords)
            ? ` (${causeWords})`
            : '';
    super('GOVERNOR_MCP_UPSTREAM', redact(`could not connect to the MCP server ${upstream}: ${why}${detail}${hint === undefined ? '' : `; ${hint}`}`), {
      cause: error,
    });
  }
}
