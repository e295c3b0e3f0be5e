import { createHash } from 'node:crypto';
import type { JsonObject, WireApi } from './wire-api.ts';

/** Request header naming the session explicitly. */
export const SESSION_HEADER = 'x-governor-session';

/**
 * The breaker session of a proxied request: the `x-governor-session` header;
 * else the request's user id (`user` in OpenAI, `metadata.user_id` in
 * Anthropic); else a stable hash of the system prompt and the first user
 * message, which every request of one conversation repeats.
 */
export function proxySessionId(headers: Headers, body: JsonObject, api: WireApi): string {
  const header = headers.get(SESSION_HEADER)?.trim();
  if (header) return header;
  const user = api.userHint(body);
  if (user !== undefined) return `user:${user}`;
  return `prompt:${createHash('sha256').update(api.promptSeed(body)).digest('hex').slice(0, 32)}`;
}
