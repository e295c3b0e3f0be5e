export { RedisChatMemoryRepository, type RedisChatMemoryRepositoryOptions, type RedisChatMemoryClient, type RedisChatMemoryTransaction } from './redis-chat-memory-repository.ts';
export { RedisBreakerStore, BreakerStoreError, type RedisBreakerStoreOptions, type RedisCommandClient } from './redis-breaker-store.ts';
