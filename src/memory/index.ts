export { WindowedChatMemory } from './windowed-chat-memory.ts';
export type { ChatMemory, RetryClaim, ToolResultClaim } from './chat-memory.ts';
export type { ChatMemoryRepository } from './chat-memory-repository.ts';
export { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
export { MessageWindowChatMemory, type MessageWindowChatMemoryOptions } from './message-window-chat-memory.ts';
export { TokenWindowChatMemory, type TokenWindowChatMemoryOptions } from './token-window-chat-memory.ts';
export { CharsPerTokenEstimator, type CharsPerTokenEstimatorOptions, type Tokenizer } from './tokenizer.ts';
export { countMessageTokens } from './message-tokens.ts';
export { selectWindow, toolSafeGroups } from './message-window.ts';
export { DEFAULT_MAX_MESSAGE_BYTES } from './message-size.ts';
export { encodeMessage, encodeMessages, decodeMessage } from './message-codec.ts';
export { assertConversationId } from './conversation-id.ts';
export {
  ChatMemoryStoreError,
  ChatMemoryTurnNotStoredError,
  InvalidConversationIdError,
  InvalidMessageError,
  MessageDecodingError,
  MessageTooLargeError,
  ToolApprovalConflictError,
  ToolResultConflictError,
  type ToolResultConflictReason,
  ToolResultWithoutCallError,
} from './chat-memory-errors.ts';
export { MessageChatMemoryAdvisor, type MessageChatMemoryAdvisorOptions } from './message-chat-memory-advisor.ts';
export {
  PromptChatMemoryAdvisor,
  defaultMemorySystemPrompt,
  type MemorySystemPrompt,
  type PromptChatMemoryAdvisorOptions,
} from './prompt-chat-memory-advisor.ts';
export { historyText } from './history-text.ts';
export { TokenBudgetAdvisor, type TokenBudgetAdvisorOptions } from './token-budget-advisor.ts';
