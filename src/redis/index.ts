// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export {
  RedisChatMemoryRepository,
  type RedisChatMemoryRepositoryOptions,
  type RedisChatMemoryClient,
  type RedisChatMemoryTransaction,
} from './redis-chat-memory-repository.ts';
export { RedisBreakerStore, type RedisBreakerStoreOptions, type RedisCommandClient } from './redis-breaker-store.ts';
export { BreakerStoreError } from './breaker-store-error.ts';
