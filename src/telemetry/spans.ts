import { context, createContextKey, SpanStatusCode, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { redact } from '../redaction/redact.ts';
import { activeTracer } from './instruments.ts';
import { ATTR_ERROR_TYPE, OTHER_VALUE } from './semconv.ts';
import type { TelemetrySettings } from './telemetry-options.ts';

/**
 * Starts a span under the active context, or returns `undefined` when no
 * tracer provider is registered. Name and options are built only when a
 * span will be: the no-SDK path allocates nothing.
 */
export function startSpan(name: () => string, options: () => SpanOptions): Span | undefined {
  const tracer = activeTracer();
  return tracer === undefined ? undefined : tracer.startSpan(name(), options());
}

/** Whether the spans of a ChatClient call record content, by span: what its `TELEMETRY` settings say, for sinks that find only the active span. */
const contentRecording = new WeakMap<Span, boolean>();

/** Notes whether content is recorded in `span` (the settings of the call it belongs to). */
export function markContentRecording(span: Span | undefined, on: boolean): void {
  if (span !== undefined) contentRecording.set(span, on);
}

/** Whether content is recorded in `span`, when the call that started it said so; undefined otherwise. */
export function contentRecordingOf(span: Span | undefined): boolean | undefined {
  return span === undefined ? undefined : contentRecording.get(span);
}

// The settings of the ChatClient call a context belongs to. A span mark is not
// enough: a call with telemetry off has no spans of its own, so what runs
// inside it (the breaker's events) would land on the application's span.
const CALL_TELEMETRY = createContextKey('agent-governor.call-telemetry');

/** `ctx` marked as running inside a ChatClient call with these telemetry settings. */
export function withCallTelemetry(ctx: Context, settings: TelemetrySettings): Context {
  return ctx.setValue(CALL_TELEMETRY, settings);
}

/**
 * The telemetry settings of the ChatClient call running in the active
 * context; undefined outside one (or without a context manager, where
 * nothing propagates).
 */
export function callTelemetry(): TelemetrySettings | undefined {
  return context.active().getValue(CALL_TELEMETRY) as TelemetrySettings | undefined;
}

/** Runs `fn` with `span` as the active span, so spans started inside become its children. */
export function runInSpan<T>(span: Span | undefined, fn: () => T): T {
  if (span === undefined) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** A low-cardinality name for an error: its class name (`ToolSpiralError`, `AI_APICallError`, `AbortError`). */
export function errorType(error: unknown): string {
  if (error instanceof Error) return redact(error.name && error.name !== 'Error' ? error.name : error.constructor.name || 'Error');
  return OTHER_VALUE;
}

// Errors already recorded as an exception event: the spans they propagate through only get the status.
const recorded = new WeakSet<object>();

/**
 * Marks a span failed: status ERROR and `error.type`; the exception itself
 * (secrets redacted) is recorded once, on the innermost span it fails.
 */
function failSpan(span: Span, error: unknown): void {
  const message = redact(error instanceof Error ? error.message : String(error)).slice(0, 1000);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  if (!span.isRecording()) return;
  const type = errorType(error);
  span.setAttribute(ATTR_ERROR_TYPE, type);
  if (error !== null && typeof error === 'object') {
    if (recorded.has(error)) return;
    recorded.add(error);
  }
  const stack = error instanceof Error && error.stack !== undefined ? redact(error.stack) : undefined;
  span.recordException({ name: type, message, ...(stack === undefined ? {} : { stack }) });
}

/** Ends a span, failed when `error` is given. */
export function endSpan(span: Span | undefined, failed = false, error?: unknown): void {
  if (span === undefined) return;
  if (failed) failSpan(span, error);
  span.end();
}

/**
 * Wraps a lazily created async iterable in a span that starts at the first
 * `next()`, stays the active span while the source produces each item (so
 * spans the source starts are its children), and ends when the source ends,
 * fails or the consumer stops early. Context is re-entered on every `next()`
 * because an async generator resumes in whatever context its consumer is in.
 */
export function traceIterable<T>(
  open: () => Span | undefined,
  source: () => AsyncIterable<T>,
  onItem?: (span: Span, item: T) => void,
  /** Adds to the context the source runs in, once `open` has run (e.g. {@link withCallTelemetry}). */
  scope?: (ctx: Context) => Context,
): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      let span: Span | undefined;
      let ctx: Context | undefined;
      let iterator: AsyncIterator<T> | undefined;
      let finished = false;
      const finish = (failed = false, error?: unknown): void => {
        if (finished) return;
        finished = true;
        endSpan(span, failed, error);
      };
      const within = <R>(fn: (it: AsyncIterator<T>) => Promise<R>): Promise<R> => {
        if (ctx === undefined) {
          span = open();
          ctx = span === undefined ? context.active() : trace.setSpan(context.active(), span);
          if (scope !== undefined) ctx = scope(ctx);
        }
        return context.with(ctx, () => {
          iterator ??= source()[Symbol.asyncIterator]();
          return fn(iterator);
        });
      };
      return {
        async next(): Promise<IteratorResult<T>> {
          if (finished) return { done: true, value: undefined };
          try {
            const result = await within((it) => it.next());
            if (result.done) finish();
            else if (span !== undefined && onItem !== undefined) onItem(span, result.value);
            return result;
          } catch (error) {
            finish(true, error);
            throw error;
          }
        },
        async return(value?: unknown): Promise<IteratorResult<T>> {
          try {
            if (iterator?.return !== undefined && !finished) await within((it) => it.return!(value));
          } finally {
            finish();
          }
          return { done: true, value: value as T };
        },
      };
    },
  };
}
