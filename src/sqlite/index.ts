// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export { SqliteChatMemoryRepository, type SqliteChatMemoryRepositoryOptions } from './sqlite-chat-memory-repository.ts';
