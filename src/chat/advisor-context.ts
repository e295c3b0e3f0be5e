/**
 * The mutable map that travels with a request and its response through every
 * advisor and every round of a recursive advisor. Advisor params set with
 * `.advisors(a => a.param(key, value))` land here.
 */
export type AdvisorContext = Map<string, unknown>;

/** Advisor param naming the conversation (session) a request belongs to. */
export const CONVERSATION_ID = 'chat_memory_conversation_id';

/** Conversation id used when a request names none. */
export const DEFAULT_CONVERSATION_ID = 'default';

/** The conversation id of a request's context, or {@link DEFAULT_CONVERSATION_ID}. */
export function conversationIdOf(context: AdvisorContext): string {
  const id = context.get(CONVERSATION_ID);
  return typeof id === 'string' && id.length > 0 ? id : DEFAULT_CONVERSATION_ID;
}

/**
 * Context key of the breaker session of a request that names no conversation
 * id: the ChatClient gives each such call a fresh one, so one looping request
 * cannot trip the breaker for unrelated requests.
 */
export const CALL_SESSION_ID = 'governor.callSessionId';

/**
 * The session the breaker judges a request under: the call's own session
 * ({@link CALL_SESSION_ID}) when the caller named no conversation id (a
 * memory advisor's `'default'` does not count), else the conversation id.
 */
export function sessionIdOf(context: AdvisorContext): string {
  const call = context.get(CALL_SESSION_ID);
  return typeof call === 'string' && call.length > 0 ? call : conversationIdOf(context);
}

/**
 * Context key of the client's default messages (`defaultMessages`), which
 * open every request's messages. They are a fixed preamble, as the system
 * prompt is: an advisor that adds the conversation so far (a chat memory
 * advisor) puts it after them, not before.
 */
export const DEFAULT_MESSAGES = 'governor.defaultMessages';
