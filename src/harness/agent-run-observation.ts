import { SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { providerName } from '../chat/model-round-observation.ts';
import { redact } from '../redaction/redact.ts';
import { meterInstruments } from '../telemetry/instruments.ts';
import * as A from '../telemetry/semconv.ts';
import { errorType, runInSpan, startSpan } from '../telemetry/spans.ts';
import type { AgentLoopResult } from './agent-loop.ts';

/** What the `invoke_agent` span of a run is told up front. */
export interface AgentRunDescription {
  readonly agentName: string;
  readonly conversationId: string;
  readonly modelId: string;
  readonly provider: string;
  readonly enabled: boolean;
}

/** The observation of one AgentLoop run: the parent span of its ChatClient calls, and the end counter. */
export interface AgentRunObservation {
  run<T>(fn: () => Promise<T>): Promise<T>;
  end(result: AgentLoopResult): void;
}

/** Starts observing an AgentLoop run: an `invoke_agent {name}` span. */
export function observeAgentRun(description: AgentRunDescription): AgentRunObservation {
  if (!description.enabled) return { run: (fn) => fn(), end() {} };
  const span: Span | undefined = startSpan(
    () => `${A.GEN_AI_OPERATION_INVOKE_AGENT} ${description.agentName}`,
    () => ({
      kind: SpanKind.INTERNAL,
      attributes: {
        [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_INVOKE_AGENT,
        [A.ATTR_GEN_AI_AGENT_NAME]: description.agentName,
        // The id is the caller's (a header, a user name): a secret in it is masked, as in health() and logs.
        [A.ATTR_GEN_AI_CONVERSATION_ID]: redact(description.conversationId),
        [A.ATTR_GEN_AI_REQUEST_MODEL]: description.modelId,
        [A.ATTR_GEN_AI_PROVIDER_NAME]: providerName(description.provider),
      },
    }),
  );
  return {
    run: (fn) => runInSpan(span, fn),
    end(result) {
      try {
        if (span !== undefined) {
          if (span.isRecording()) span.setAttributes(resultAttributes(result));
          // result.reason comes redacted from AgentLoop.
          if (result.status === 'error' || result.status === 'stuck') {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (result.reason ?? result.status).slice(0, 1000) });
            if (span.isRecording()) span.setAttribute(A.ATTR_ERROR_TYPE, result.error === undefined ? result.status : errorType(result.error));
          }
          span.end();
        }
        const metrics = meterInstruments();
        if (metrics.live) {
          metrics.agentLoopEnds.add(1, { [A.ATTR_AGENT_LOOP_STATUS]: result.status, [A.ATTR_GEN_AI_AGENT_NAME]: description.agentName });
        }
      } catch {
        // Telemetry never breaks the run it observes.
      }
    },
  };
}

function resultAttributes(result: AgentLoopResult): Attributes {
  const attributes: Attributes = {
    [A.ATTR_AGENT_LOOP_STATUS]: result.status,
    [A.ATTR_AGENT_LOOP_INVOCATIONS]: result.invocations,
    [A.ATTR_AGENT_LOOP_TURNS]: result.turns,
    [A.ATTR_AGENT_LOOP_TOOL_CALLS]: result.toolCalls,
  };
  const { inputTokens, outputTokens, cachedInputTokens } = result.usage;
  if (inputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_INPUT_TOKENS] = inputTokens;
  if (outputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_OUTPUT_TOKENS] = outputTokens;
  if (cachedInputTokens !== undefined) attributes[A.ATTR_USAGE_TOTAL_CACHED_INPUT_TOKENS] = cachedInputTokens;
  if (typeof result.costUsd === 'number') attributes[A.ATTR_COST_USD] = result.costUsd;
  if (result.reason !== undefined) attributes[A.ATTR_AGENT_LOOP_REASON] = result.reason.slice(0, 1000);
  return attributes;
}
