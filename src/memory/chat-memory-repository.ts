import type { ModelMessage } from 'ai';

/**
 * Where a {@link ChatMemory} keeps conversations. A repository stores every
 * message it is given, in order, and hands them back deep-equal (binary data,
 * URLs, tool calls and tool results included).
 *
 * Conversation ids must be non-blank, well-formed strings without U+0000 and
 * of at most 1024 UTF-8 bytes (see `assertConversationId`), so that every
 * store keeps them apart and can index them; every method rejects anything
 * else with an `InvalidConversationIdError`. Messages that cannot be stored
 * faithfully are rejected with an `InvalidMessageError` before anything is
 * written.
 */
export interface ChatMemoryRepository {
  /** Ids of every conversation that holds at least one message, sorted. */
  findConversationIds(): Promise<string[]>;

  /** The messages of a conversation in the order they were written; `[]` when there are none. */
  findByConversationId(conversationId: string): Promise<ModelMessage[]>;

  /**
   * Replaces a conversation's messages with `messages`, atomically: readers
   * see either the old or the new list. An empty list deletes the conversation.
   */
  saveAll(conversationId: string, messages: readonly ModelMessage[]): Promise<void>;

  /** Deletes a conversation and its messages. Deleting an unknown conversation is not an error. */
  deleteByConversationId(conversationId: string): Promise<void>;

  /**
   * Appends `messages` to a conversation, atomically. Concurrent appends to
   * one conversation (from this process or others) never lose a message, and
   * each batch stays contiguous and in order: another writer's batch lands
   * entirely before or entirely after it. Appending nothing is a no-op.
   */
  append(conversationId: string, messages: readonly ModelMessage[]): Promise<void>;
}
