import type { ModelMessage, ToolApprovalResponse, ToolResultPart } from 'ai';

/**
 * The conversation history an assistant sees, by conversation id. What `get`
 * returns is a view chosen by the implementation (a window of recent
 * messages, a token budget, ...), not necessarily everything ever added.
 */
export interface ChatMemory {
  /** Adds messages to the end of a conversation, all or nothing. */
  add(conversationId: string, messages: readonly ModelMessage[]): Promise<void>;

  /** The messages of a conversation that fit this memory's window, oldest first. */
  get(conversationId: string): Promise<ModelMessage[]>;

  /** Forgets a conversation. */
  clear(conversationId: string): Promise<void>;

  /**
   * Largest single message `add` accepts, in bytes of its stored form, when
   * the memory has such a limit. The memory advisors use it to refuse a user
   * turn that is too large before the model is called, and to store an
   * oversized answer or tool result with its largest parts left out rather
   * than throw away a finished call.
   */
  readonly maxMessageBytes?: number;

  /**
   * Claims tool approvals for this caller before the approved calls run, so
   * that two requests answering one approval at once (a double click, two
   * replicas on one store) cannot both run it: records `answers` in the
   * conversation in one atomic write, then reads the conversation back.
   * Returns the ids of the approvals that an earlier write had already
   * answered (their calls must not run here); `[]` when this caller claimed
   * them all. All or nothing: when it returns any id, this caller claimed
   * none of `answers`, and the others stay open for a later answer (no
   * request would run them otherwise). The recorded answers of a claim that
   * won are part of the conversation from then on: the memory advisors do
   * not store them again with the turn.
   *
   * Optional: a memory without it gets no such protection, and concurrent
   * answers to one approval each run the approved call.
   * `WindowedChatMemory` (so `MessageWindowChatMemory` and
   * `TokenWindowChatMemory`) implements it on every repository.
   */
  claimApprovals?(conversationId: string, answers: readonly ToolApprovalResponse[]): Promise<string[]>;

  /**
   * Claims the caller's results of client-side tool calls (tools the caller
   * runs itself) before the model is called with them, so that two requests
   * sending the same results at once (a double click, a request retried
   * while the first still runs, two replicas on one store) do not both get
   * the model to answer them: records `results` in the conversation in one
   * atomic write, then reads the conversation back. All or nothing, as
   * {@link claimApprovals}: when `lost` names any call, this caller claimed
   * none. The claimed results are in flight until the claim is ended: the
   * conversation `get` returns leaves them out until then, so a request that
   * sends them again claims them too, and loses. The memory advisors do not
   * store them again with the turn.
   *
   * Optional, like {@link claimApprovals}; `WindowedChatMemory` implements it
   * on every repository.
   */
  claimToolResults?(conversationId: string, results: readonly ToolResultPart[]): Promise<ToolResultClaim>;

  /**
   * Claims a retry's going on, before the model is called: the retry of a
   * request that failed after its answers (client-side results, an approved
   * call's result) were stored, which sends them again and nothing new, so
   * the model is to answer the round `history` ends with. `history` is what
   * `get` gave the retry. Of two retries at once (a double click, two
   * replicas on one store) one claims it and the other gets `lost`; so does a
   * retry that read the conversation before another request went on from
   * that round. The claim holds until it is ended, so that a retry after the
   * claiming request failed goes on; one never ended (its request died)
   * holds until the conversation goes on from the round (a new user message).
   *
   * Optional: a memory without it gets no such protection, and retries at
   * once each get the model to answer the round. `WindowedChatMemory`
   * implements it on every repository.
   */
  claimRetry?(conversationId: string, history: readonly ModelMessage[]): Promise<RetryClaim>;
}

/** A claim of a retry's going on (see `ChatMemory.claimRetry`). */
export interface RetryClaim {
  /** Whether another request claimed it first, or went on from the round since `history` was read: then this request must not call the model. */
  readonly lost: boolean;
  /**
   * Ends the claim when its request is over, adding `messages` (the turn to
   * store; none when a failed call has nothing to store) to the conversation
   * in the same atomic write. A request that claimed a retry must end the
   * claim, whether its call succeeded or failed.
   */
  end(messages: readonly ModelMessage[]): Promise<void>;
}

/** A claim of client-side tool results (see `ChatMemory.claimToolResults`). */
export interface ToolResultClaim {
  /** The calls whose results an earlier write had recorded already; when there are any, nothing was claimed. */
  readonly lost: readonly string[];
  /**
   * Ends the claim when its request is over: adds `messages` (the turn to
   * store; none when a failed call has nothing else to store) to the
   * conversation, and with them makes the claimed results part of it, in one
   * atomic write. A request that claimed results must end the claim, whether
   * its call succeeded or failed: until then, a retry of the results is refused.
   */
  end(messages: readonly ModelMessage[]): Promise<void>;
}
