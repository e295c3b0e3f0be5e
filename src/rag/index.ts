export type { Document, DocumentInput, DocumentMetadata, MetadataValue } from './document.ts';
export {
  EmbeddingDimensionMismatchError,
  InvalidEmbeddingError,
  InvalidMetadataFilterError,
  VectorStoreError,
} from './retrieval-errors.ts';
export {
  matchesMetadataFilter,
  type FieldCondition,
  type FieldOperators,
  type FilterRangeOperand,
  type FilterScalar,
  type MetadataFilter,
} from './metadata-filter.ts';
export type { Embedder } from './embedder.ts';
export { lexicalTokens } from './lexical-tokens.ts';
export {
  DEFAULT_LEXICAL_HASH_DIMENSIONS,
  LexicalHashEmbedding,
  type LexicalHashEmbeddingOptions,
} from './lexical-hash-embedding.ts';
export { aiSdkEmbedder, type AiSdkEmbedderOptions } from './ai-sdk-embedder.ts';
export {
  DEFAULT_TOP_K,
  SIMILARITY_THRESHOLD_ACCEPT_ALL,
  type AddDocumentsOptions,
  type SearchRequest,
  type VectorStore,
} from './vector-store.ts';
export { InMemoryVectorStore, type InMemoryVectorStoreOptions } from './in-memory-vector-store.ts';
export {
  DEFAULT_QUESTION_ANSWER_TEMPLATE,
  FILTER_EXPRESSION,
  QuestionAnswerAdvisor,
  RETRIEVED_DOCUMENTS,
  type QuestionAnswerAdvisorOptions,
  type QuestionAnswerSearchOptions,
} from './question-answer-advisor.ts';
