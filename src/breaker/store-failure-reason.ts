import { GovernorError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';

/** Longest reason given: a code and a sentence or two for each error of the chain, never a payload. */
const MAX_REASON = 400;
/** Governor errors wrapped in one another that are named, outermost first. */
const MAX_CAUSES = 3;

/**
 * Why a store operation failed, in one line for a warning, a health report
 * and the message of a call refused for it: so that a store that is down
 * can be told from one that holds a session this version cannot read.
 * A Governor error gives its code and message, and those of the Governor
 * errors it wraps (their words are this library's); any other error its name
 * and message. Other causes are left out: a parser's message quotes the text
 * it failed on, which is stored content. Secrets are masked.
 */
export function storeFailureReason(error: unknown): string {
  const parts: string[] = [];
  if (GovernorError.isInstance(error)) {
    for (let e: unknown = error; GovernorError.isInstance(e) && parts.length < MAX_CAUSES; e = e.cause) parts.push(`${e.code}: ${e.message}`);
  } else if (error instanceof Error) {
    parts.push(error.name !== '' && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message || 'Error');
  } else {
    parts.push(String(error));
  }
  const reason = redact(parts.join('; caused by ')).replace(/\s+/g, ' ').trim();
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}
