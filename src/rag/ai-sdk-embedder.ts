import type { ProviderOptions } from '@ai-sdk/provider-utils';
import { embedMany, type EmbeddingModel } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { checkEmbeddings, type Embedder } from './embedder.ts';

/** Options of {@link aiSdkEmbedder}. */
export interface AiSdkEmbedderOptions {
  /**
   * Length of the vectors the model returns, when known in advance, so that
   * a vector store can check its own configuration at construction. Every
   * response is checked against it. Not sent to the provider.
   * @default learnt from the first response
   */
  readonly dimensions?: number;
  /**
   * Asks the provider for vectors of this length (the AI SDK's `dimensions`
   * call setting), for models that can shorten their output such as OpenAI's
   * `text-embedding-3-*`. Implies {@link AiSdkEmbedderOptions.dimensions}.
   * @default not requested: the model's own size
   */
  readonly requestDimensions?: number;
  /**
   * Retries per embedding call on retryable provider errors.
   * @default 2 (the AI SDK's default)
   */
  readonly maxRetries?: number;
  /**
   * Most concurrent requests when a batch is larger than the model accepts per call.
   * @default Infinity (the AI SDK's default)
   */
  readonly maxParallelCalls?: number;
  /**
   * Provider-specific settings passed through to the model.
   * @default none
   */
  readonly providerOptions?: ProviderOptions;
}

const AI_SDK_EMBEDDER_RULES: OptionRules<AiSdkEmbedderOptions> = {
  dimensions: is.integer(1),
  requestDimensions: is.integer(1),
  maxRetries: is.integer(0),
  maxParallelCalls: is.either('a positive integer or Infinity', is.integer(1), is.oneOf(Number.POSITIVE_INFINITY)),
  providerOptions: is.recordOf(is.object()),
};

/**
 * Adapts any AI SDK embedding model (`openai.embedding('text-embedding-3-small')`,
 * an OpenAI-compatible endpoint, a gateway id…) to the {@link Embedder} that
 * vector stores use. Batches go through `embedMany`, which splits them to the
 * model's per-call limit.
 *
 * @example new InMemoryVectorStore({ embedder: aiSdkEmbedder(openai.embedding('text-embedding-3-small')) })
 */
export function aiSdkEmbedder(model: EmbeddingModel, options: AiSdkEmbedderOptions = {}): Embedder {
  return new AiSdkEmbedder(model, options);
}

class AiSdkEmbedder implements Embedder {
  readonly #model: EmbeddingModel;
  readonly #options: AiSdkEmbedderOptions;
  #dimensions: number | undefined;

  constructor(model: EmbeddingModel, options: AiSdkEmbedderOptions) {
    if (model === undefined || model === null) {
      throw new InvalidOptionError('model', 'an AI SDK embedding model (or model id) is required');
    }
    validateOptions('aiSdkEmbedder', options, AI_SDK_EMBEDDER_RULES);
    if (options.dimensions !== undefined && options.requestDimensions !== undefined && options.dimensions !== options.requestDimensions) {
      throw new InvalidOptionError(
        'requestDimensions',
        `requests ${options.requestDimensions} dimensions but dimensions says ${options.dimensions}; give one of them`,
      );
    }
    this.#model = model;
    this.#options = options;
    this.#dimensions = options.dimensions ?? options.requestDimensions;
  }

  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    const { embeddings } = await embedMany({
      model: this.#model,
      values: [...texts],
      ...(this.#options.requestDimensions !== undefined && { dimensions: this.#options.requestDimensions }),
      ...(this.#options.maxRetries !== undefined && { maxRetries: this.#options.maxRetries }),
      ...(this.#options.maxParallelCalls !== undefined && { maxParallelCalls: this.#options.maxParallelCalls }),
      ...(this.#options.providerOptions !== undefined && { providerOptions: this.#options.providerOptions }),
      ...(signal !== undefined && { abortSignal: signal }),
    });
    const vectors = checkEmbeddings(embeddings, texts.length, this.#dimensions, 'embedding model response');
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
