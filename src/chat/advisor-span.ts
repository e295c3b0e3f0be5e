import { SpanKind, type Span } from '@opentelemetry/api';
import { activeTracer } from '../telemetry/instruments.ts';
import { ATTR_ADVISOR_NAME, ATTR_ADVISOR_ORDER } from '../telemetry/semconv.ts';
import { endSpan, markContentRecording, runInSpan, startSpan, traceIterable } from '../telemetry/spans.ts';
import { telemetrySettings } from '../telemetry/telemetry-options.ts';
import type { Advisor } from './advisor.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';

function traced(request: ChatClientRequest): boolean {
  // Checked before anything is built: with no tracer provider an advisor hop costs nothing extra.
  return activeTracer() !== undefined && telemetrySettings(request.context).enabled;
}

function openAdvisorSpan(advisor: Advisor, request: ChatClientRequest): Span | undefined {
  const span = startSpan(
    () => `advisor ${advisor.name}`,
    () => ({
      kind: SpanKind.INTERNAL,
      attributes: { [ATTR_ADVISOR_NAME]: advisor.name, [ATTR_ADVISOR_ORDER]: advisor.order },
    }),
  );
  // What advisors report into their span (the breaker's evidence) follows the call's content setting.
  markContentRecording(span, telemetrySettings(request.context).recordContent);
  return span;
}

/** Runs one advisor's `adviseCall` inside its own `advisor {name}` span. */
export function traceAdvisorCall(advisor: Advisor, request: ChatClientRequest, advise: () => Promise<ChatClientResponse>): Promise<ChatClientResponse> {
  if (!traced(request)) return advise();
  const span = openAdvisorSpan(advisor, request);
  return runInSpan(span, async () => {
    try {
      const response = await advise();
      endSpan(span);
      return response;
    } catch (error) {
      endSpan(span, true, error);
      throw error;
    }
  });
}

/** Runs one advisor's `adviseStream` inside its own `advisor {name}` span, from the first event to the last. */
export function traceAdvisorStream(advisor: Advisor, request: ChatClientRequest, advise: () => AsyncIterable<ChatStreamEvent>): AsyncIterable<ChatStreamEvent> {
  if (!traced(request)) return advise();
  return traceIterable(() => openAdvisorSpan(advisor, request), advise);
}
