import { conversationIdOf, sessionIdOf, type AdvisorContext } from './advisor-context.ts';
import type { ChatClientRequest } from './chat-client-request.ts';

/**
 * What a tool receives as its `context` in a ChatClient request: in
 * `execute`, `onInputStart`, `onInputDelta`, `onInputAvailable` and
 * `needsApproval`, and as an `approve` policy's second argument. A type
 * alias, not an interface, so that it fits the AI SDK's `Context` and
 * `options.context as GovernorToolContext` compiles in a tool.
 */
export type GovernorToolContext = {
  readonly conversationId: string;
  /**
   * The breaker session of this call: the conversation id, or the call's own
   * session when the request names none. Report to the breaker under this id.
   */
  readonly sessionId: string;
  readonly abortSignal: AbortSignal | undefined;
  /** The request's advisor context (shared by every round). */
  readonly requestContext: AdvisorContext;
};

/** The `context` a request's tools receive. */
export function toolContextOf(request: ChatClientRequest): GovernorToolContext {
  return {
    conversationId: conversationIdOf(request.context),
    sessionId: sessionIdOf(request.context),
    abortSignal: request.abortSignal,
    requestContext: request.context,
  };
}
