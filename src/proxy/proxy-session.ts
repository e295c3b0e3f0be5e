import { createHash } from 'node:crypto';
import type { JsonObject, WireApi } from './wire-api.ts';

/** Request header naming the session explicitly. */
export const SESSION_HEADER = 'x-governor-session';

/** Header with which a client names its own conversation (Codex sends its conversation id in it). */
const CLIENT_SESSION_HEADER = 'session_id';

/** The session a request names outright (the header, else the client's conversation id, else a stored conversation), if it names one. */
export function namedSession(headers: Headers, body: JsonObject, api: WireApi): string | undefined {
  const header = headers.get(SESSION_HEADER)?.trim();
  if (header) return header;
  // Agents that open every conversation with the same preamble would otherwise share one session by their prompt.
  const client = headers.get(CLIENT_SESSION_HEADER)?.trim();
  if (client) return `session:${client}`;
  const conversation = api.conversation(body);
  return conversation === undefined ? undefined : `conversation:${conversation}`;
}

/**
 * The breaker session of a proxied request: the `x-governor-session` header;
 * else the client's own conversation id (a `session_id` header, as Codex
 * sends it); else the conversation it belongs to (the Responses API's `conversation`);
 * else the session of the response it continues (`previous_response_id` in
 * the Responses API), when `sessionOfResponse` knows it; else the request's
 * user id (`user` in OpenAI, `metadata.user_id` in Anthropic); else, for a
 * request continuing a response not known here, that response's id; else a
 * stable hash of the system prompt and the first user message, which every
 * request of one conversation repeats.
 */
export function proxySessionId(headers: Headers, body: JsonObject, api: WireApi, sessionOfResponse?: (responseId: string) => string | undefined): string {
  const named = namedSession(headers, body, api);
  if (named !== undefined) return named;
  const continued = api.continues(body);
  const session = continued === undefined ? undefined : sessionOfResponse?.(continued);
  if (session !== undefined) return session;
  const user = api.userHint(body);
  if (user !== undefined) return `user:${user}`;
  // What it continues is unknown here (another replica served it): its prompt is not in the request, and
  // a session of its own judges it without mixing it up with other conversations.
  if (continued !== undefined) return `response:${continued}`;
  return `prompt:${createHash('sha256').update(api.promptSeed(body)).digest('hex').slice(0, 32)}`;
}
