import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/**
 * The MCP server behind the proxy could not be reached or refused the
 * connection. The message names the server (its URL without credentials, or
 * its command) and what went wrong, with an HTTP status when there was one.
 */
export class McpUpstreamError extends GovernorError {
  /** `hint`: what the proxy saw that explains the failure. */
  constructor(upstream: string, error: unknown, hint?: string) {
    const status = (error as { code?: unknown } | null)?.code;
    const why = error instanceof Error ? error.message.trim() : String(error);
    const network = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
    const detail = typeof status === 'number' && status >= 100 && status < 600 ? ` (HTTP ${status})` : typeof network === 'string' ? ` (${network})` : '';
    super('GOVERNOR_MCP_UPSTREAM', redact(`could not connect to the MCP server ${upstream}: ${why}${detail}${hint === undefined ? '' : `; ${hint}`}`), {
      cause: error,
    });
  }
}
