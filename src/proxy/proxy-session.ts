import { createHash } from 'node:crypto';
import type { JsonObject, WireApi } from './wire-api.ts';

/** Request header naming the session explicitly. */
export const SESSION_HEADER = 'x-governor-session';

/**
 * Headers with which a client names its own conversation: Codex sends its
 * conversation id in `session-id` (earlier versions in `session_id`),
 * opencode in `x-session-id`.
 */
const CLIENT_SESSION_HEADERS = ['session-id', 'session_id', 'x-session-id'] as const;

/** The session a request names outright (the header, else the client's conversation id, else a stored conversation), if it names one. */
export function namedSession(headers: Headers, body: JsonObject, api: WireApi): string | undefined {
  const header = headers.get(SESSION_HEADER)?.trim();
  if (header) return header;
  // Agents that open every conversation with the same preamble would otherwise share one session by their prompt.
  for (const name of CLIENT_SESSION_HEADERS) {
    const client = headers.get(name)?.trim();
    if (client) return `session:${client}`;
  }
  const conversation = api.conversation(body);
  return conversation === undefined ? undefined : `conversation:${conversation}`;
}

/**
 * The breaker session of a proxied request: the `x-governor-session` header;
 * else the client's own conversation id (a `session-id` or `session_id`
 * header, as Codex sends it, or `x-session-id`, as opencode does); else the conversation it belongs to (the Responses API's `conversation`);
 * else the session of the response it continues (`previous_response_id` in
 * the Responses API), when `sessionOfResponse` knows it; else the request's
 * user id (`user` in OpenAI, `metadata.user_id` in Anthropic); else, for a
 * request continuing a response not known here, that response's id; else a
 * stable hash of the system prompt and the first user message, which every
 * request of one conversation repeats. The user id and the hash are the
 * client's own: scoped by its credential (see {@link clientTag}).
 */
export function proxySessionId(headers: Headers, body: JsonObject, api: WireApi, sessionOfResponse?: (responseId: string) => string | undefined): string {
  const named = namedSession(headers, body, api);
  if (named !== undefined) return named;
  const continued = api.continues(body);
  const session = continued === undefined ? undefined : sessionOfResponse?.(continued);
  if (session !== undefined) return session;
  const client = clientTag(headers);
  const user = api.userHint(body);
  if (user !== undefined) return client === undefined ? `user:${user}` : `user:${user}@${client}`;
  // What it continues is unknown here (another replica served it): its prompt is not in the request, and
  // a session of its own judges it without mixing it up with other conversations.
  if (continued !== undefined) return `response:${continued}`;
  const seed = createHash('sha256');
  if (client !== undefined) seed.update(`${client}\n`);
  return `prompt:${seed.update(api.promptSeed(body)).digest('hex').slice(0, 32)}`;
}

/** Headers a client authenticates with to the upstream: OpenAI's, Anthropic's, Azure OpenAI's, Gemini's. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key'] as const;

/**
 * A short digest of the credential the request carries, if any. Two clients
 * of one proxy (two tenants of a templated app) may send the same user id or
 * open with the same prompt: without it they would share a session, and a
 * steer decided on one's answers (quoting them) would go into the other's
 * request. Clients that share a key share sessions as before.
 */
function clientTag(headers: Headers): string | undefined {
  for (const name of CREDENTIAL_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) return createHash('sha256').update(value).digest('hex').slice(0, 12);
  }
  return undefined;
}
