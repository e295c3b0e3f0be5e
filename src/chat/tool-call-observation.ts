import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import type { ToolCallEvent } from '../breaker/breaker-event.ts';
import { contentAttribute } from '../telemetry/content.ts';
import { meterInstruments } from '../telemetry/instruments.ts';
import * as A from '../telemetry/semconv.ts';
import { endSpan, errorType, markContentRecording, runInSpan, startSpan } from '../telemetry/spans.ts';
import type { TelemetrySettings } from '../telemetry/telemetry-options.ts';
import { notifyToolCallListeners, type ToolCallInfo, type ToolCallListener } from './tool-call-listener.ts';

/**
 * What became of a tool call the model asked for: it ran (`success`) or threw
 * (`error`); or it did not run because a governing advisor blocked it
 * (`blocked`), the tool or its arguments were invalid (`invalid`), or a
 * limit or the approver refused it (`refused`).
 */
export type ToolCallOutcome = 'success' | 'error' | 'blocked' | 'invalid' | 'refused';

/**
 * The one observation point of an executed tool call. Its start, end and
 * error feed the {@link ToolCallListener}s, the `execute_tool {name}` span,
 * the tool metrics and the session's observation sinks (the AgentBreaker), so
 * every consumer sees the same call, arguments, result and duration.
 */
export interface ToolCallObservation {
  /** Runs the tool with the call's span active (spans the tool starts nest under it). */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The tool returned `result` (what it returned, before any note a governing advisor adds for the model). */
  end(result: unknown): Promise<void>;
  /**
   * The tool threw `error`; the model is told `shown`. A call the caller
   * cancelled (`cancelled`) is no failure of the agent's: listeners, spans and
   * metrics hear of it, the session's sinks do not, or a user pressing stop
   * three times would end the conversation as an error loop.
   */
  fail(error: unknown, shown: string, cancelled?: boolean): Promise<void>;
}

/**
 * Hands a tool call and its result to the session's observation sinks.
 * Awaited, so the breaker has judged a result before the next model round.
 */
export type ToolCallReporter = (event: ToolCallEvent) => Promise<void>;

/** What the observation needs beyond the listener payload. */
export interface ToolCallDetails {
  readonly listeners: readonly ToolCallListener[];
  readonly telemetry: TelemetrySettings;
  /** A governing advisor's intervention on a call that still runs (`steer`). */
  readonly intervention?: string;
  readonly description?: string;
  /** Where the session's observation sinks hear of the call; none when absent. */
  readonly report?: ToolCallReporter;
}

/** A tool result as the text the breaker compares; `null` for no result. */
export function resultText(result: unknown): string | null {
  if (result === undefined || result === null) return null;
  if (typeof result === 'string') return result;
  try {
    return JSON.stringify(result) ?? null;
  } catch {
    return String(result);
  }
}

/** Starts observing a tool call that is about to run: listeners hear `onToolCallStart` now. */
export function observeToolCall(info: ToolCallInfo, details: ToolCallDetails): ToolCallObservation {
  notifyToolCallListeners(details.listeners, 'onToolCallStart', info);
  const started = performance.now();
  const { telemetry } = details;
  let span: Span | undefined;
  if (telemetry.enabled) {
    span = startSpan(
      () => `${A.GEN_AI_OPERATION_EXECUTE_TOOL} ${info.toolName}`,
      () => ({
        kind: SpanKind.INTERNAL,
        attributes: {
          [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_EXECUTE_TOOL,
          [A.ATTR_GEN_AI_TOOL_NAME]: info.toolName,
          [A.ATTR_GEN_AI_TOOL_CALL_ID]: info.toolCallId,
          [A.ATTR_GEN_AI_TOOL_TYPE]: 'function',
        },
      }),
    );
    markContentRecording(span, telemetry.recordContent);
    if (span?.isRecording()) {
      const attributes: Attributes = {};
      if (details.description) attributes[A.ATTR_GEN_AI_TOOL_DESCRIPTION] = details.description;
      if (details.intervention) attributes[A.ATTR_TOOL_INTERVENTION] = details.intervention;
      if (telemetry.recordContent) attributes[A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = contentAttribute(info.args, telemetry.maxContentLength);
      span.setAttributes(attributes);
    }
  }
  let done = false;
  const finish = (outcome: 'success' | 'error', durationMs: number, error?: unknown): void => {
    try {
      if (span?.isRecording()) span.setAttribute(A.ATTR_TOOL_OUTCOME, outcome);
      endSpan(span, outcome === 'error', error);
      if (telemetry.enabled) recordToolMetrics(info.toolName, outcome, durationMs, error);
    } catch {
      // Telemetry never breaks the tool call it observes.
    }
  };
  return {
    run: (fn) => runInSpan(span, fn),
    async end(result) {
      if (done) return;
      done = true;
      const durationMs = performance.now() - started;
      notifyToolCallListeners(details.listeners, 'onToolCallEnd', { ...info, result, durationMs });
      if (span !== undefined && telemetry.recordContent && span.isRecording()) {
        span.setAttribute(A.ATTR_GEN_AI_TOOL_CALL_RESULT, contentAttribute(result ?? null, telemetry.maxContentLength));
      }
      finish('success', durationMs);
      await details.report?.({ kind: 'tool_call', tool: info.toolName, args: info.args, result: resultText(result), error: false });
    },
    async fail(error, shown, cancelled = false) {
      if (done) return;
      done = true;
      const durationMs = performance.now() - started;
      notifyToolCallListeners(details.listeners, 'onToolCallError', { ...info, error, durationMs });
      finish('error', durationMs, error);
      if (!cancelled) await details.report?.({ kind: 'tool_call', tool: info.toolName, args: info.args, result: shown, error: true });
    },
  };
}

function recordToolMetrics(toolName: string, outcome: ToolCallOutcome, durationMs: number | undefined, error?: unknown): void {
  const metrics = meterInstruments();
  if (!metrics.live) return;
  const attributes: Attributes = { [A.ATTR_GEN_AI_TOOL_NAME]: toolName, [A.ATTR_TOOL_OUTCOME]: outcome };
  metrics.toolCalls.add(1, attributes);
  if (durationMs !== undefined) {
    metrics.toolDuration.record(durationMs / 1000, error === undefined ? attributes : { ...attributes, [A.ATTR_ERROR_TYPE]: errorType(error) });
  }
}

/** A tool call that did not run, as the observation point needs it. */
export interface UnrunToolCall {
  readonly toolName: string;
  /** The arguments as the model sent them. */
  readonly args: unknown;
  /** Whether the tool exists (a made-up name is counted as `_OTHER`). */
  readonly known: boolean;
  readonly outcome: Exclude<ToolCallOutcome, 'success' | 'error'>;
  /** The error text the model is given instead of a result. */
  readonly shown: string;
}

/**
 * Observes a tool call that did not run (blocked, invalid or refused): it is
 * counted, and, unless a governing advisor blocked it, reported to the
 * sinks as a failed call, since the model gets an error it may keep
 * repeating. A blocked call is not reported: it never happened, which is the
 * point of blocking it. A name the model made up is counted as `_OTHER`, so
 * a confused model cannot create unbounded metric series.
 */
export async function observeUnrunToolCall(call: UnrunToolCall, details: Pick<ToolCallDetails, 'telemetry' | 'report'>): Promise<void> {
  if (details.telemetry.enabled) {
    try {
      recordToolMetrics(call.known ? call.toolName : A.OTHER_VALUE, call.outcome, undefined);
    } catch {
      // as above
    }
  }
  if (call.outcome === 'blocked') return;
  await details.report?.({ kind: 'tool_call', tool: call.toolName, args: call.args, result: call.shown, error: true });
}
