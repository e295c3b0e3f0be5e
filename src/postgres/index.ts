// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export { PostgresChatMemoryRepository, type PostgresChatMemoryRepositoryOptions } from './postgres-chat-memory-repository.ts';
export { PgVectorStore, DEFAULT_PG_VECTOR_TABLE, type PgVectorStoreOptions } from './pg-vector-store.ts';
