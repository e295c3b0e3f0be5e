import type { JSONSchema7, LanguageModelV4ToolChoice, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ModelMessage, ToolSet } from 'ai';
import type { AdvisorContext } from './advisor-context.ts';

/**
 * An AI SDK tool, plus Governor's flags for the tool loop: `returnDirect`
 * (when every tool call of a model round is return-direct, the loop ends
 * with the tools' output instead of sending it back to the model) and
 * `endsLoop` (a finish tool: once it has run, the loop ends after the other
 * calls of its round, whatever they are).
 */
export type GovernedTool = ToolSet[string] & { returnDirect?: boolean; endsLoop?: boolean };

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
  /**
   * Whether and which tools the model may call: the AI SDK's `'auto' | 'none' | 'required'`,
   * or the provider's object form (`{ type: 'required' }`, `{ type: 'tool', toolName }`).
   * The model is always sent the object form.
   */
  readonly toolChoice?: 'auto' | 'none' | 'required' | LanguageModelV4ToolChoice;
  readonly providerOptions?: SharedV4ProviderOptions;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /**
   * Retries of a failed model call (408, 409, 429, 5xx, network errors, stalls;
   * a stream only before its first chunk), with exponential backoff and jitter,
   * honouring `retry-after-ms` / `retry-after` up to 60 s. `0` disables retries.
   * @default 2 (as the AI SDK)
   */
  readonly maxRetries?: number;
  /** First backoff wait in ms; it doubles with every retry. @default 2000 */
  readonly retryDelayMs?: number;
  /**
   * Milliseconds a model connection may send nothing (no response, no stream
   * chunk) before the attempt is cancelled as stalled and retried.
   * @default 300_000 (5 minutes)
   */
  readonly stallTimeoutMs?: number;
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
