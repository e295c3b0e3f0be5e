import type { LanguageModelV4 } from '@ai-sdk/provider';
import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { cachedPrice, priceUsage } from '../model/pricing.ts';
import { redact } from '../redaction/redact.ts';
import { inputMessagesAttribute, outputMessagesAttribute, systemInstructionsAttribute } from '../telemetry/content.ts';
import { meterInstruments } from '../telemetry/instruments.ts';
import * as A from '../telemetry/semconv.ts';
import { endSpan, errorType, runInSpan, startSpan } from '../telemetry/spans.ts';
import { telemetrySettings, type TelemetrySettings } from '../telemetry/telemetry-options.ts';
import { CONVERSATION_ID } from './advisor-context.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatResponse } from './chat-response.ts';
import type { RetryWait } from './model-retry.ts';

/**
 * The one observation point of a model round trip (one `doGenerate` /
 * `doStream`): its `chat {model}` span and the GenAI client metrics.
 */
export interface ModelRoundObservation {
  /** Runs the provider call with the round's span active (HTTP spans nest under it). */
  run<T>(fn: () => PromiseLike<T>): PromiseLike<T>;
  /** The round answered. */
  end(response: ChatResponse, responseId: string | undefined): void;
  /** The round failed. */
  fail(error: unknown): void;
  /** The consumer stopped reading a streamed round before it finished. */
  abandon(): void;
  /** An attempt failed and the round will be tried again after a wait. */
  retry(wait: RetryWait): void;
}

const NOOP: ModelRoundObservation = { run: (fn) => fn(), end() {}, fail() {}, abandon() {}, retry() {} };

// AI SDK provider ids (`openai.chat`, `anthropic.messages`) → GenAI `gen_ai.provider.name` values.
// A Map, not an object literal: a provider id such as `constructor` must not find Object's prototype.
const PROVIDER_NAMES: ReadonlyMap<string, string> = new Map([
  ['amazon-bedrock', 'aws.bedrock'],
  ['azure', 'azure.ai.openai'],
  ['google', 'gcp.gemini'],
  // `@ai-sdk/google-vertex` reports `google.vertex.chat`: Vertex AI, not the Gemini Developer API (`google.generative-ai`).
  ['google.vertex', 'gcp.vertex_ai'],
  ['google-vertex', 'gcp.vertex_ai'],
  ['vertex', 'gcp.vertex_ai'],
  ['mistral', 'mistral_ai'],
  ['xai', 'x_ai'],
]);

/** The GenAI provider name of an AI SDK model. */
export function providerName(provider: string): string {
  const [base = provider, second] = provider.split('.');
  // Two segments first: one vendor's SDK may serve two GenAI providers (`google.vertex` is not `google`).
  return (second === undefined ? undefined : PROVIDER_NAMES.get(`${base}.${second}`)) ?? PROVIDER_NAMES.get(base) ?? base;
}

/** GenAI finish reasons use underscores (`tool_calls`); the AI SDK uses dashes. */
function finishReason(reason: string): string {
  return reason.replaceAll('-', '_');
}

/** Starts observing one model round. */
export function observeModelRound(model: LanguageModelV4, request: ChatClientRequest): ModelRoundObservation {
  const settings = telemetrySettings(request.context);
  if (!settings.enabled) return NOOP;
  const started = performance.now();
  const provider = providerName(model.provider);
  const requestModel = model.modelId;
  const span = startSpan(
    () => `${A.GEN_AI_OPERATION_CHAT} ${requestModel}`,
    () => ({
      kind: SpanKind.CLIENT,
      attributes: {
        [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_CHAT,
        [A.ATTR_GEN_AI_PROVIDER_NAME]: provider,
        [A.ATTR_GEN_AI_REQUEST_MODEL]: requestModel,
      },
    }),
  );
  if (span?.isRecording()) describeRequest(span, request, settings);
  let done = false;
  const metricAttributes = (responseModel: string | undefined): Attributes => ({
    [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_CHAT,
    [A.ATTR_GEN_AI_PROVIDER_NAME]: provider,
    [A.ATTR_GEN_AI_REQUEST_MODEL]: requestModel,
    ...(responseModel === undefined ? {} : { [A.ATTR_GEN_AI_RESPONSE_MODEL]: responseModel }),
  });
  return {
    run: (fn) => runInSpan(span, fn),
    end(response, responseId) {
      if (done) return;
      done = true;
      try {
        const recording = span?.isRecording() === true;
        const metrics = meterInstruments();
        // Pricing is only worth its lookups when someone records the result.
        const cost = recording || metrics.live ? roundCost(response, requestModel, settings) : undefined;
        if (span !== undefined) {
          if (recording) describeResponse(span, response, responseId, cost, settings);
          span.end();
        }
        if (!metrics.live) return;
        const attributes = metricAttributes(response.modelId);
        metrics.operationDuration.record((performance.now() - started) / 1000, attributes);
        const { inputTokens, outputTokens, cachedInputTokens } = response.usage;
        if (inputTokens !== undefined) metrics.tokenUsage.record(inputTokens, { ...attributes, [A.ATTR_GEN_AI_TOKEN_TYPE]: 'input' });
        if (outputTokens !== undefined) metrics.tokenUsage.record(outputTokens, { ...attributes, [A.ATTR_GEN_AI_TOKEN_TYPE]: 'output' });
        if (cachedInputTokens !== undefined && cachedInputTokens > 0) metrics.cachedInputTokens.record(cachedInputTokens, attributes);
        if (cost !== undefined) {
          metrics.cost.add(cost, { [A.ATTR_GEN_AI_PROVIDER_NAME]: provider, [A.ATTR_GEN_AI_REQUEST_MODEL]: requestModel });
        }
      } catch {
        // Telemetry never breaks the call it observes.
      }
    },
    fail(error) {
      if (done) return;
      done = true;
      try {
        endSpan(span, true, error);
        const metrics = meterInstruments();
        if (metrics.live) {
          metrics.operationDuration.record((performance.now() - started) / 1000, { ...metricAttributes(undefined), [A.ATTR_ERROR_TYPE]: errorType(error) });
        }
      } catch {
        // as above
      }
    },
    abandon() {
      if (done) return;
      done = true;
      endSpan(span);
    },
    retry(wait) {
      try {
        span?.addEvent('governor.retry', {
          'governor.retry.attempt': wait.attempt,
          'governor.retry.delay_ms': Math.round(wait.delayMs),
          'governor.retry.from_retry_after': wait.fromRetryAfter,
          ...(wait.statusCode === undefined ? {} : { 'http.response.status_code': wait.statusCode }),
          [A.ATTR_ERROR_TYPE]: errorType(wait.error),
        });
      } catch {
        // Telemetry never breaks the call it observes.
      }
    },
  };
}

/** USD of one round, when its model has a price and its token counts are known. */
function roundCost(response: ChatResponse, requestModel: string, settings: TelemetrySettings): number | undefined {
  const price =
    cachedPrice(settings.priceModelId ?? response.modelId, settings.prices) ??
    (settings.priceModelId === undefined ? cachedPrice(requestModel, settings.prices) : undefined);
  if (price === undefined) return undefined;
  const cost = priceUsage(response.usage, price);
  return typeof cost.usd === 'number' ? cost.usd : undefined;
}

function describeRequest(span: Span, request: ChatClientRequest, settings: TelemetrySettings): void {
  const o = request.options;
  const attributes: Attributes = {};
  if (o.maxOutputTokens !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_MAX_TOKENS] = o.maxOutputTokens;
  if (o.temperature !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_TEMPERATURE] = o.temperature;
  if (o.topP !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_TOP_P] = o.topP;
  if (o.topK !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_TOP_K] = o.topK;
  if (o.seed !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_SEED] = o.seed;
  if (o.frequencyPenalty !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY] = o.frequencyPenalty;
  if (o.presencePenalty !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY] = o.presencePenalty;
  if (o.stopSequences !== undefined) attributes[A.ATTR_GEN_AI_REQUEST_STOP_SEQUENCES] = [...o.stopSequences];
  attributes[A.ATTR_GEN_AI_OUTPUT_TYPE] = request.responseFormat?.type === 'json' ? 'json' : 'text';
  const conversation = request.context.get(CONVERSATION_ID);
  // The id is the caller's (a header, a user name): a secret in it is masked, as in health() and logs.
  if (typeof conversation === 'string' && conversation !== '') attributes[A.ATTR_GEN_AI_CONVERSATION_ID] = redact(conversation);
  if (settings.recordContent) {
    if (request.system) attributes[A.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS] = systemInstructionsAttribute(request.system, settings.maxContentLength);
    attributes[A.ATTR_GEN_AI_INPUT_MESSAGES] = inputMessagesAttribute(request.messages, settings.maxContentLength);
  }
  span.setAttributes(attributes);
}

function describeResponse(span: Span, response: ChatResponse, responseId: string | undefined, cost: number | undefined, settings: TelemetrySettings): void {
  const attributes: Attributes = {
    [A.ATTR_GEN_AI_RESPONSE_MODEL]: response.modelId,
    [A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [finishReason(response.finishReason)],
  };
  if (responseId !== undefined) attributes[A.ATTR_GEN_AI_RESPONSE_ID] = responseId;
  const { inputTokens, outputTokens, cachedInputTokens } = response.usage;
  if (inputTokens !== undefined) attributes[A.ATTR_GEN_AI_USAGE_INPUT_TOKENS] = inputTokens;
  if (outputTokens !== undefined) attributes[A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = outputTokens;
  if (cachedInputTokens !== undefined) attributes[A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = cachedInputTokens;
  if (cost !== undefined) attributes[A.ATTR_COST_USD] = cost;
  if (settings.recordContent) {
    attributes[A.ATTR_GEN_AI_OUTPUT_MESSAGES] = outputMessagesAttribute(response.content, finishReason(response.finishReason), settings.maxContentLength);
  }
  span.setAttributes(attributes);
}
