import { context, metrics, trace, type Attributes, type HrTime } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

/** A metric reader the test pulls from with `collect()`. */
class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One data point: a counter's or gauge's value, or a histogram's sum and count. */
export interface Point {
  readonly attributes: Attributes;
  readonly value: number;
  readonly count?: number;
}

function toMs(t: HrTime): number {
  return t[0] * 1000 + t[1] / 1e6;
}

/**
 * The OpenTelemetry SDK as an application would register it, with an
 * in-memory span exporter and a pull metric reader. Globals are per process,
 * and the test runner gives each test file its own process.
 */
export class OtelHarness {
  // A shut-down exporter drops what it is given: each install gets a new one.
  #exporter = new InMemorySpanExporter();
  #reader = new PullReader();
  #tracerProvider: TracerProvider | undefined;
  #meterProvider: MeterProvider | undefined;

  /** Registers a tracer provider, a meter provider and an async context manager globally. */
  install(): this {
    this.#exporter = new InMemorySpanExporter();
    this.#reader = new PullReader();
    this.#tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: this.#exporter })] });
    this.#meterProvider = new MeterProvider({ readers: [this.#reader] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(this.#tracerProvider);
    metrics.setGlobalMeterProvider(this.#meterProvider);
    return this;
  }

  /** Unregisters everything (the API falls back to its no-ops). */
  async uninstall(): Promise<void> {
    await this.#tracerProvider?.shutdown();
    await this.#meterProvider?.shutdown();
    trace.disable();
    metrics.disable();
    context.disable();
    this.#tracerProvider = undefined;
    this.#meterProvider = undefined;
  }

  /** Finished spans, in start order. */
  spans(): ReadableSpan[] {
    return [...this.#exporter.getFinishedSpans()].sort((a, b) => toMs(a.startTime) - toMs(b.startTime));
  }

  /** The one finished span called `name`; fails when there is not exactly one. */
  span(name: string): ReadableSpan {
    const found = this.spans().filter((s) => s.name === name);
    if (found.length !== 1)
      throw new Error(
        `expected one span "${name}", found ${found.length}: ${this.spans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    return found[0]!;
  }

  /**
   * The span tree as indented lines (`name` under its parent, children in
   * start order), the shape assertions compare against.
   */
  tree(): string[] {
    const spans = this.spans();
    const ids = new Set(spans.map((s) => s.spanContext().spanId));
    const lines: string[] = [];
    const walk = (parent: string | undefined, depth: number): void => {
      for (const s of spans) {
        const p = s.parentSpanContext?.spanId;
        const isChild = parent === undefined ? p === undefined || !ids.has(p) : p === parent;
        if (!isChild) continue;
        lines.push(`${'  '.repeat(depth)}${s.name}`);
        walk(s.spanContext().spanId, depth + 1);
      }
    };
    walk(undefined, 0);
    return lines;
  }

  /** All metrics collected now. */
  async metrics(): Promise<MetricData[]> {
    const { resourceMetrics } = await this.#reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  }

  /** Data points of one metric (empty when it has none). */
  async points(name: string): Promise<Point[]> {
    const metric = (await this.metrics()).find((m) => m.descriptor.name === name);
    if (metric === undefined) return [];
    return metric.dataPoints.map((p) => {
      if (metric.dataPointType === DataPointType.HISTOGRAM) {
        const h = p.value as { sum?: number; count: number };
        return { attributes: p.attributes, value: h.sum ?? 0, count: h.count };
      }
      return { attributes: p.attributes, value: p.value as number };
    });
  }
}
