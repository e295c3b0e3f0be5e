import { hash53 } from './hash.ts';

/**
 * Parts of a tool result that change on every call without carrying news:
 * timestamps, UUIDs, memory addresses, epoch times, elapsed durations. A
 * status poll that differs only in these returned nothing new.
 */
const VOLATILE: readonly RegExp[] = [
  /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g,
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /\b0x[0-9a-f]{6,}\b/gi,
  /\b1[5-9]\d{8}(?:\d{3})?\b/g,
  /\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|secs?|seconds)\b/g,
];

const HEAD_CHARS = 8192;
const TAIL_CHARS = 2048;

/** A result with its volatile parts replaced and whitespace collapsed. */
export function normalizeResult(text: string): string {
  let out = text;
  for (const pattern of VOLATILE) out = out.replace(pattern, '#');
  return out.replace(/\s+/g, ' ').trim();
}

/**
 * Hash of a tool result after {@link normalizeResult}; `0` for an empty or
 * missing result (no information). Long results are hashed by their start,
 * their end and their length, which is where pages, chunks and growing logs
 * differ, so cost stays flat for large outputs.
 */
export function resultHash(result: string | null | undefined): number {
  if (result === null || result === undefined) return 0;
  const sample =
    result.length > HEAD_CHARS + TAIL_CHARS
      ? `${result.slice(0, HEAD_CHARS)}\u0000${result.length}\u0000${result.slice(-TAIL_CHARS)}`
      : result;
  const normalized = normalizeResult(sample);
  return normalized === '' ? 0 : hash53(normalized) || 1;
}

/** Hash of a set of retrieved documents, independent of their order. */
export function resultSetHash(results: readonly string[] | undefined): number | null {
  if (results === undefined) return null;
  const hashes = results.map((r) => resultHash(r)).sort((a, b) => a - b);
  return hash53(hashes.join(','));
}

const TRANSIENT =
  /\b(?:429|50[0-4])\b|rate[ -]?limit|too many requests|timed? ?out|timeout|temporar(?:il)?y unavailable|service unavailable|bad gateway|gateway time|overloaded|econnreset|econnrefused|etimedout|eai_again|epipe|socket hang up|network error|connection (?:reset|refused|closed|aborted)|try again later/i;

/**
 * Whether an error result reads like an outage (HTTP 429/5xx, timeouts, rate
 * limits, dropped connections) rather than a rejection of the request itself.
 * Only the start of the message is read: that is where such errors say so.
 */
export function isTransientError(result: string | null | undefined): boolean {
  if (result === null || result === undefined) return false;
  return TRANSIENT.test(result.slice(0, 300));
}

const ERROR_START = /^\s*(?:error|exception|traceback \(most recent call last\)|fatal)\b/i;

/** Whether a result that was not flagged as an error still opens like one. */
export function looksLikeError(result: string | null | undefined): boolean {
  return result !== null && result !== undefined && ERROR_START.test(result.slice(0, 200));
}
