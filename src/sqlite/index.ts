export { SqliteChatMemoryRepository, type SqliteChatMemoryRepositoryOptions } from './sqlite-chat-memory-repository.ts';
