import type { ModelMessage, ToolApprovalResponse } from 'ai';

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
   * them all. The recorded answers are part of the conversation from then on
   * (those of a claim that lost are not): the memory advisors do not store
   * them again with the turn.
   *
   * Optional: a memory without it gets no such protection, and concurrent
   * answers to one approval each run the approved call.
   * `WindowedChatMemory` (so `MessageWindowChatMemory` and
   * `TokenWindowChatMemory`) implements it on every repository.
   */
  claimApprovals?(conversationId: string, answers: readonly ToolApprovalResponse[]): Promise<string[]>;
}
