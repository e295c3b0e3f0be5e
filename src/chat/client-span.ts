import type { LanguageModelV4 } from '@ai-sdk/provider';
import { context, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { BREAKER_RECOVERED, recordBreakerRecovery } from '../breaker/breaker-telemetry.ts';
import { redact } from '../redaction/redact.ts';
import * as A from '../telemetry/semconv.ts';
import { activeTracer, meterInstruments } from '../telemetry/instruments.ts';
import { endSpan, markContentRecording, startSpan, traceIterable, withCallTelemetry } from '../telemetry/spans.ts';
import { telemetrySettings, type TelemetrySettings } from '../telemetry/telemetry-options.ts';
import type { Advisor } from './advisor.ts';
import { CONVERSATION_ID, conversationIdOf } from './advisor-context.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';
import { providerName } from './model-round-observation.ts';

function openClientSpan(model: LanguageModelV4, request: ChatClientRequest, advisors: readonly Advisor[], stream: boolean): Span | undefined {
  const span = startSpan(
    () => `chat_client ${model.modelId}`,
    () => ({
      kind: SpanKind.INTERNAL,
      attributes: {
        [A.ATTR_GEN_AI_PROVIDER_NAME]: providerName(model.provider),
        [A.ATTR_GEN_AI_REQUEST_MODEL]: model.modelId,
        [A.ATTR_CHAT_CLIENT_STREAM]: stream,
      },
    }),
  );
  markContentRecording(span, telemetrySettings(request.context).recordContent);
  if (span?.isRecording()) {
    const attributes: Attributes = { [A.ATTR_CHAT_CLIENT_ADVISORS]: advisors.map((a) => a.name) };
    const conversation = request.context.get(CONVERSATION_ID);
    // The id is the caller's (a header, a user name): a secret in it is masked, as in health() and logs.
    if (typeof conversation === 'string' && conversation !== '') attributes[A.ATTR_GEN_AI_CONVERSATION_ID] = redact(conversation);
    span.setAttributes(attributes);
  }
  return span;
}

function describeResult(span: Span, result: ChatClientResponse): void {
  if (!span.isRecording()) return;
  const r = result.response;
  const attributes: Attributes = {
    [A.ATTR_CHAT_CLIENT_ROUNDS]: r.rounds,
    [A.ATTR_GEN_AI_RESPONSE_MODEL]: r.modelId,
    [A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [r.finishReason.replaceAll('-', '_')],
  };
  const { inputTokens, outputTokens, cachedInputTokens } = r.totalUsage;
  if (inputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_INPUT_TOKENS] = inputTokens;
  if (outputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_OUTPUT_TOKENS] = outputTokens;
  if (cachedInputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_CACHED_INPUT_TOKENS] = cachedInputTokens;
  span.setAttributes(attributes);
}

/** A stop the BreakerRecoveryAdvisor recovered from during the call is the breaker's `recover` escalation. */
function noteRecovery(request: ChatClientRequest, span: Span | undefined): void {
  if (!telemetrySettings(request.context).enabled) return;
  const recovered = request.context.get(BREAKER_RECOVERED) as { category?: unknown } | undefined;
  if (recovered === undefined || typeof recovered.category !== 'string') return;
  recordBreakerRecovery(conversationIdOf(request.context), recovered.category, span);
}

/** Whether anything could be recorded: without an SDK a call marks no context. */
function telemetryLive(): boolean {
  return activeTracer() !== undefined || meterInstruments().live;
}

/**
 * The context a call runs in: its span (when it has one) and its settings.
 * What reports into the active context without the request at hand (the
 * breaker's events and counter) follows the call's settings, so a client with
 * telemetry off adds nothing to the application's span either.
 */
function callContext(span: Span | undefined, settings: TelemetrySettings): Context {
  const ctx = withCallTelemetry(context.active(), settings);
  return span === undefined ? ctx : trace.setSpan(ctx, span);
}

/** Runs one `call()` inside its `chat_client {model}` span. */
export function traceClientCall(
  model: LanguageModelV4,
  request: ChatClientRequest,
  advisors: readonly Advisor[],
  run: () => Promise<ChatClientResponse>,
): Promise<ChatClientResponse> {
  if (!telemetryLive()) return run();
  const settings = telemetrySettings(request.context);
  if (!settings.enabled) return context.with(callContext(undefined, settings), run);
  const span = openClientSpan(model, request, advisors, false);
  return context.with(callContext(span, settings), async () => {
    try {
      const result = await run();
      noteRecovery(request, span);
      if (span !== undefined) describeResult(span, result);
      endSpan(span);
      return result;
    } catch (error) {
      noteRecovery(request, span);
      endSpan(span, true, error);
      throw error;
    }
  });
}

/**
 * Runs one `stream()` inside its `chat_client {model}` span, from the first
 * event to the last. `prepare` builds the request when iteration starts (so
 * a bad request fails there, as before).
 */
export function traceClientStream(
  model: LanguageModelV4,
  prepare: () => { request: ChatClientRequest; advisors: readonly Advisor[] },
  run: (request: ChatClientRequest) => AsyncIterable<ChatStreamEvent>,
): AsyncIterable<ChatStreamEvent> {
  let request: ChatClientRequest | undefined;
  const source = async function* (): AsyncIterable<ChatStreamEvent> {
    request ??= prepare().request;
    try {
      yield* run(request);
    } finally {
      noteRecovery(request, span);
    }
  };
  let span: Span | undefined;
  // Without an SDK, no wrapper: one generator, as without telemetry.
  if (!telemetryLive()) return source();
  return traceIterable(
    () => {
      const prepared = prepare();
      request = prepared.request;
      if (!telemetrySettings(request.context).enabled) return undefined;
      span = openClientSpan(model, request, prepared.advisors, true);
      return span;
    },
    source,
    (s, event) => {
      if (event.type === 'finish') describeResult(s, event.response);
    },
    (ctx) => (request === undefined ? ctx : withCallTelemetry(ctx, telemetrySettings(request.context))),
  );
}
