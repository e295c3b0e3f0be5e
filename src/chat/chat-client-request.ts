import type { JSONSchema7, LanguageModelV4ToolChoice, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ModelMessage, ToolSet } from 'ai';
import type { AdvisorContext } from './advisor-context.ts';

/**
 * An AI SDK tool, plus Governor's `returnDirect` flag: when every tool call of
 * a model round is return-direct, the tool loop ends with the tools' output
 * instead of sending it back to the model.
 */
export type GovernedTool = ToolSet[string] & { returnDirect?: boolean };

/** Tools by name, as the model sees them. */
export type GovernedToolSet = Readonly<Record<string, GovernedTool>>;

/** Model call settings, with the AI SDK's names. */
export interface ModelOptions {
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
  readonly toolChoice?: LanguageModelV4ToolChoice;
  readonly providerOptions?: SharedV4ProviderOptions;
  readonly headers?: Readonly<Record<string, string | undefined>>;
}

/** Ask the model for JSON matching a schema. */
export interface ResponseFormat {
  readonly type: 'json';
  readonly schema?: JSONSchema7;
  readonly name?: string;
  readonly description?: string;
}

/**
 * What flows down the advisor chain. Advisors change a request by passing a
 * modified copy (`{ ...request, messages }`) to the next link; `context` is the
 * same Map object from the first advisor to the last round of every loop.
 */
export interface ChatClientRequest {
  /** System instructions, or `undefined`. */
  readonly system: string | undefined;
  /** The conversation so far (no system messages): user, assistant and tool messages in order. */
  readonly messages: readonly ModelMessage[];
  readonly tools: GovernedToolSet;
  readonly options: ModelOptions;
  readonly responseFormat: ResponseFormat | undefined;
  /** Shared mutable map: advisor params and whatever advisors leave for each other. */
  readonly context: AdvisorContext;
  readonly abortSignal: AbortSignal | undefined;
}
