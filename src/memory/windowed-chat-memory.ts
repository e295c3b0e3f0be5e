import type { ModelMessage, ToolApprovalResponse, ToolResultPart } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, type OptionRule } from '../errors/validate-options.ts';
import type { ChatMemory, RetryClaim, ToolResultClaim } from './chat-memory.ts';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { assertConversationId } from './conversation-id.ts';
import { claimAnswersIn, claimEnd, claimRetryIn, withClaimsSettled } from './answer-claims.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { closeUnansweredToolCalls } from './message-window.ts';
import { assertMessagesFit, resolveMaxMessageBytes } from './message-size.ts';

/** The repository methods a windowed memory calls. */
const REPOSITORY_METHODS = ['findByConversationId', 'append', 'deleteByConversationId'] as const;

/**
 * The `repository` option's rule: every method the memory calls must be a
 * function, so a wrong object fails at construction rather than at the first
 * `add`, after a paid model call.
 */
export const isRepository: OptionRule = (value, path) => {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(path, `must be a ChatMemoryRepository, got ${describeValue(value)}`);
  }
  for (const method of REPOSITORY_METHODS) {
    if (typeof (value as Record<string, unknown>)[method] !== 'function') {
      throw new InvalidOptionError(path, `must be a ChatMemoryRepository, but its ${method} is not a function`);
    }
  }
};

/**
 * A chat memory that stores everything and windows on read. Storing only by
 * atomic append is what keeps concurrent writers from losing each other's
 * messages; subclasses only say how the window is cut.
 */
export abstract class WindowedChatMemory implements ChatMemory {
  readonly repository: ChatMemoryRepository;
  readonly maxMessageBytes: number;

  protected constructor(repository: ChatMemoryRepository | undefined, maxMessageBytes: number | undefined) {
    this.maxMessageBytes = resolveMaxMessageBytes(maxMessageBytes);
    this.repository = repository ?? new InMemoryChatMemoryRepository();
  }

  /** The part of a conversation's stored messages that is remembered. */
  protected abstract window(messages: ModelMessage[]): ModelMessage[];

  async add(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    assertConversationId(conversationId);
    assertMessagesFit(messages, this.maxMessageBytes);
    if (messages.length > 0) await this.repository.append(conversationId, messages);
  }

  /**
   * The window of a conversation. A tool call the conversation moved on from
   * without a result gets a closing result first (see `closeUnansweredToolCalls`),
   * so what this returns is always a history a model accepts. A claim that
   * lost (see `claimApprovals`, `claimToolResults`) is not part of it, nor are
   * the results of a claim not ended yet. However other requests' turns land
   * among them, a call's results are read right after it, and a claim's turn
   * right after its results (see `withClaimsSettled`).
   */
  async get(conversationId: string): Promise<ModelMessage[]> {
    assertConversationId(conversationId);
    return this.window(closeUnansweredToolCalls(withClaimsSettled(await this.repository.findByConversationId(conversationId))));
  }

  /**
   * Claims tool approvals (see `ChatMemory.claimApprovals`) through the
   * repository's atomic append: the answers are appended, marked with a
   * claim id, and the conversation read back in full (not windowed): the
   * claim wins when none of its approvals was answered before it in the
   * stored order. Works the same on every repository, with no schema of its own.
   */
  async claimApprovals(conversationId: string, answers: readonly ToolApprovalResponse[]): Promise<string[]> {
    assertConversationId(conversationId);
    return (await claimAnswersIn(this.repository, conversationId, answers)).lost;
  }

  /**
   * Claims client-side tool results (see `ChatMemory.claimToolResults`) the
   * way {@link claimApprovals} claims approvals; ending the claim appends a
   * mark of its end with the turn.
   */
  async claimToolResults(conversationId: string, results: readonly ToolResultPart[]): Promise<ToolResultClaim> {
    assertConversationId(conversationId);
    assertMessagesFit([{ role: 'tool', content: [...results] }], this.maxMessageBytes);
    const { claim, lost } = await claimAnswersIn(this.repository, conversationId, results);
    return { lost, end: this.#ender(conversationId, claim) };
  }

  /**
   * Claims a retry's going on (see `ChatMemory.claimRetry`) through the
   * repository's atomic append, as {@link claimApprovals} claims approvals:
   * the claim names the round `history` ends with, and wins when the whole
   * conversation, read back, still ends with that round before it and no
   * claim before it holds the round.
   */
  async claimRetry(conversationId: string, history: readonly ModelMessage[]): Promise<RetryClaim> {
    assertConversationId(conversationId);
    const { claim, lost } = await claimRetryIn(this.repository, conversationId, history);
    return { lost, end: this.#ender(conversationId, claim) };
  }

  /** Ends claim `claim`: appends the mark of its end with the turn to store, in one atomic write. */
  #ender(conversationId: string, claim: string): (messages: readonly ModelMessage[]) => Promise<void> {
    return async (messages) => {
      assertMessagesFit(messages, this.maxMessageBytes);
      await this.repository.append(conversationId, [claimEnd(claim, messages.length), ...messages]);
    };
  }

  async clear(conversationId: string): Promise<void> {
    assertConversationId(conversationId);
    await this.repository.deleteByConversationId(conversationId);
  }
}
