import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart, SharedV4ProviderMetadata, SharedV4Warning } from '@ai-sdk/provider';
import { convertToLanguageModelPrompt, prepareTools, standardizePrompt } from 'ai/internal';
import { fromProviderUsage, type Usage } from '../model/usage.ts';
import type { ModelTerminal } from './advisor-chain.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent, FinishReason } from './chat-response.ts';
import { buildResponse, toToolCallRequest } from './round-response.ts';
import { toolChoiceViolation } from './tool-choice-violation.ts';
import { StreamedContent } from './streamed-content.ts';
import { ToolInputCallbacks } from './tool-input-callbacks.ts';
import { observeModelRound, type ModelRoundObservation } from './model-round-observation.ts';
import { sessionIdOf } from './advisor-context.ts';
import { MODEL_CALL_LISTENERS, notifyRetry } from './model-call-listener.ts';
import { toProviderToolChoice } from './model-options.ts';
import { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY_MS, DEFAULT_STALL_TIMEOUT_MS, StallWatch, withRetries } from './model-retry.ts';
import { streamProviderError } from './stream-provider-error.ts';

/**
 * The end of every advisor chain: exactly one `doGenerate` or `doStream` per
 * round, with tools declared but never executed here — the loop belongs to the
 * ToolCallAdvisor, where every advisor can watch it.
 */
export class ModelCallTerminal implements ModelTerminal {
  readonly #model: LanguageModelV4;

  constructor(model: LanguageModelV4) {
    this.#model = model;
  }

  async call(request: ChatClientRequest): Promise<ChatClientResponse> {
    request.abortSignal?.throwIfAborted();
    const round = observeModelRound(this.#model, request);
    try {
      const options = await this.#callOptions(request);
      const stallMs = request.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
      const result = await round.run(() =>
        this.#withRetries(request, round, async () => {
          const watch = new StallWatch(stallMs, request.abortSignal);
          try {
            return await watch.race(this.#model.doGenerate({ ...options, abortSignal: watch.signal }));
          } finally {
            watch.dispose();
          }
        }),
      );
      const usage = fromProviderUsage(result.usage);
      const response = await buildResponse(
        result.content,
        { finishReason: result.finishReason.unified, usage, modelId: result.response?.modelId ?? this.#model.modelId, warnings: result.warnings },
        request.tools,
      );
      round.end(response, result.response?.id);
      // After the round is recorded: it was made, and billed, whatever it answered.
      const violation = toolChoiceViolation(request, response, result.content, this.#model);
      if (violation !== undefined) throw violation;
      return { response, context: request.context };
    } catch (error) {
      round.fail(error);
      throw error;
    }
  }

  /** Failed attempts produce no usage, so only the successful one is ever counted. */
  #withRetries<T>(request: ChatClientRequest, round: ModelRoundObservation, attempt: () => Promise<T>): Promise<T> {
    const maxRetries = request.options.maxRetries ?? DEFAULT_MAX_RETRIES;
    return withRetries(attempt, {
      maxRetries,
      initialDelayMs: request.options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      abortSignal: request.abortSignal,
      onRetry: (wait) => {
        round.retry(wait);
        notifyRetry(request.context.get(MODEL_CALL_LISTENERS), {
          ...wait,
          maxRetries,
          modelId: this.#model.modelId,
          sessionId: sessionIdOf(request.context),
        });
      },
    });
  }

  async *stream(request: ChatClientRequest): AsyncIterable<ChatStreamEvent> {
    request.abortSignal?.throwIfAborted();
    const round = observeModelRound(this.#model, request);
    try {
      yield* this.#streamRound(request, round);
    } catch (error) {
      round.fail(error);
      throw error;
    } finally {
      round.abandon(); // a no-op once the round has ended or failed
    }
  }

  async *#streamRound(request: ChatClientRequest, round: ModelRoundObservation): AsyncIterable<ChatStreamEvent> {
    const options = await this.#callOptions(request);
    const toolInputs = new ToolInputCallbacks(request);
    const stallMs = request.options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    // Retried up to the first part the consumer would see: after that a retry would repeat output.
    const opened = await round.run(() =>
      this.#withRetries(request, round, async () => {
        const watch = new StallWatch(stallMs, request.abortSignal);
        let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
        try {
          const { stream } = await watch.race(this.#model.doStream({ ...options, abortSignal: watch.signal }));
          reader = stream.getReader();
          const early: LanguageModelV4StreamPart[] = [];
          for (;;) {
            const next = await watch.race(reader.read());
            if (next.done) return { reader, watch, early, done: true };
            if (next.value.type === 'error') throw streamProviderError(next.value.error);
            early.push(next.value);
            if (VISIBLE_PARTS.has(next.value.type) || toolInputs.listensTo(next.value)) return { reader, watch, early, done: false };
          }
        } catch (error) {
          watch.dispose();
          void reader?.cancel().catch(() => undefined);
          throw error;
        }
      }),
    );
    const { reader, watch } = opened;
    let responseId: string | undefined;
    const content = new StreamedContent();
    let usage: Usage | undefined;
    let finishReason: FinishReason = 'other';
    let modelId = this.#model.modelId;
    let warnings: SharedV4Warning[] = [];
    const early = opened.early;
    let ended = opened.done;
    const nextPart = async (): Promise<LanguageModelV4StreamPart | undefined> => {
      if (early.length > 0) return early.shift();
      if (ended) return undefined;
      const next = await watch.race(reader.read());
      if (next.done) ended = true;
      return next.done ? undefined : next.value;
    };
    try {
      for (;;) {
        const part = await nextPart();
        if (part === undefined) break;
        // Kept as doGenerate reports the round: blocks in the order they streamed, with their provider
        // metadata, and whole parts such as a hosted tool's result (which the breaker judges).
        content.add(part);
        await toolInputs.hear(part);
        switch (part.type) {
          case 'text-delta':
          case 'reasoning-delta':
            yield { type: part.type, text: part.delta, ...metadataOf(part) };
            break;
          case 'text-start':
          case 'text-end':
          case 'reasoning-start':
          case 'reasoning-end':
            // A block's metadata may come on its start or end (OpenAI's item id and encrypted reasoning, say):
            // an empty delta carries it, so that a client keeping the conversation can send it back.
            if (part.providerMetadata !== undefined) {
              yield { type: part.type.startsWith('text') ? 'text-delta' : 'reasoning-delta', text: '', providerMetadata: part.providerMetadata };
            }
            break;
          case 'tool-call':
            // A hosted call is shown as `streamText` shows it; its response leaves it out of `toolCalls`, so no loop runs it.
            yield {
              type: 'tool-call',
              toolCall: toToolCallRequest(part),
              ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
              ...(request.tools[part.toolName]?.type === 'dynamic' ? { dynamic: true } : {}),
            };
            break;
          case 'tool-result':
            // Only a hosted tool's result comes from the model; the tool loop reports the others.
            yield {
              type: 'tool-result',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              output: part.result,
              isError: part.isError === true,
              providerExecuted: true,
            };
            break;
          case 'stream-start':
            warnings = part.warnings;
            break;
          case 'response-metadata':
            if (part.modelId) modelId = part.modelId;
            if (part.id) responseId = part.id;
            break;
          case 'finish':
            usage = fromProviderUsage(part.usage);
            finishReason = part.finishReason.unified;
            break;
          case 'error':
            throw streamProviderError(part.error);
          default:
            break;
        }
      }
    } finally {
      watch.dispose();
      if (!ended) void reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
    const response = await buildResponse(content.parts, { finishReason, usage: usage ?? fromProviderUsage(undefined), modelId, warnings }, request.tools);
    round.end(response, responseId);
    const violation = toolChoiceViolation(request, response, content.parts, this.#model);
    if (violation !== undefined) throw violation;
    yield { type: 'finish', response: { response, context: request.context } };
  }

  async #callOptions(request: ChatClientRequest): Promise<LanguageModelV4CallOptions> {
    const standardized = await standardizePrompt({
      instructions: request.system,
      messages: [...request.messages],
      allowSystemInMessages: true,
    });
    const prompt = await convertToLanguageModelPrompt({
      prompt: standardized,
      supportedUrls: await this.#model.supportedUrls,
      download: undefined,
      abortSignal: request.abortSignal,
      provider: this.#model.provider,
    });
    const tools = Object.keys(request.tools).length > 0 ? await prepareTools({ tools: request.tools }) : undefined;
    const { stopSequences, headers, toolChoice, maxRetries: _retries, retryDelayMs: _delay, stallTimeoutMs: _stall, ...settings } = request.options;
    return {
      ...settings,
      ...(toolChoice ? { toolChoice: toProviderToolChoice(toolChoice) } : {}),
      ...(stopSequences ? { stopSequences: [...stopSequences] } : {}),
      ...(headers ? { headers: { ...headers } } : {}),
      prompt,
      tools,
      responseFormat: request.responseFormat,
      abortSignal: request.abortSignal,
    };
  }
}

/**
 * Stream parts that reach the consumer; once one has, the stream is not
 * retried. The start of the arguments of a tool that listens to them counts
 * too (see {@link ToolInputCallbacks.listensTo}).
 */
const VISIBLE_PARTS: ReadonlySet<string> = new Set(['text-delta', 'reasoning-delta', 'tool-call', 'tool-result', 'finish']);

function metadataOf(part: { readonly providerMetadata?: SharedV4ProviderMetadata }): { providerMetadata?: SharedV4ProviderMetadata } {
  return part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata };
}
