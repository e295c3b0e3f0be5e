import {
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  trace,
  ValueType,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableGauge,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import {
  METRIC_AGENT_LOOP_ENDS,
  METRIC_BREAKER_ESCALATIONS,
  METRIC_BREAKER_UNJUDGED,
  METRIC_BREAKER_OPEN,
  METRIC_CACHED_INPUT_TOKENS,
  METRIC_COST,
  METRIC_GEN_AI_OPERATION_DURATION,
  METRIC_GEN_AI_TOKEN_USAGE,
  METRIC_TOOL_CALLS,
  METRIC_TOOL_DURATION,
} from './semconv.ts';

/** Instrumentation scope of every span and metric Governor emits. */
export const INSTRUMENTATION_SCOPE = 'agent-governor';

// Bucket boundaries recommended by the GenAI semantic conventions.
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

interface TracerState {
  readonly provider: TracerProvider;
  readonly tracer: Tracer;
  live: boolean;
}

let tracerState: TracerState | undefined;

function currentTracerState(): TracerState {
  // Looked up on every use, not once: an SDK registered after our objects were
  // built (or swapped in tests) must still receive their spans.
  const provider = trace.getTracerProvider();
  if (tracerState?.provider !== provider) tracerState = { provider, tracer: provider.getTracer(INSTRUMENTATION_SCOPE), live: false };
  if (!tracerState.live) {
    // The API's global provider is a proxy until an SDK is registered; without
    // one, every span would be a no-op, so callers skip building them at all.
    tracerState.live = !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(INSTRUMENTATION_SCOPE) !== undefined;
  }
  return tracerState;
}

/** The tracer, or `undefined` when no tracer provider is registered (then nothing is traced). */
export function activeTracer(): Tracer | undefined {
  const state = currentTracerState();
  return state.live ? state.tracer : undefined;
}

/** Something that can report its open breaker sessions, for the `governor.breaker.open` gauge. */
export interface OpenBreakerSource {
  /** Sources sharing a store are counted once. */
  readonly store: object;
  openSessions(): Promise<readonly string[]>;
}

const openBreakerSources = new Set<WeakRef<OpenBreakerSource>>();
// Breakers made per request must not pile up as dead references when nothing ever collects the gauge.
const forgetCollected = new FinalizationRegistry<WeakRef<OpenBreakerSource>>((ref) => openBreakerSources.delete(ref));

/** Adds a breaker to the `governor.breaker.open` gauge for as long as it is alive. */
export function registerOpenBreakerSource(source: OpenBreakerSource): void {
  const ref = new WeakRef(source);
  openBreakerSources.add(ref);
  forgetCollected.register(source, ref);
  // The instruments may already exist for this provider (a metric was recorded before the first breaker): add the gauge to them.
  meterInstruments().ensureOpenBreakerGauge();
}

async function countOpenBreakers(): Promise<number> {
  const byStore = new Map<object, OpenBreakerSource>();
  for (const ref of openBreakerSources) {
    const source = ref.deref();
    if (source === undefined) openBreakerSources.delete(ref);
    else if (!byStore.has(source.store)) byStore.set(source.store, source);
  }
  const counts = await Promise.all(
    [...byStore.values()].map((s) =>
      s.openSessions().then(
        (ids) => ids.length,
        () => 0,
      ),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Governor's metric instruments on the current global meter provider. */
export class MeterInstruments {
  /** False when no meter provider is registered: recording is skipped entirely. */
  readonly live: boolean;
  readonly #meter: Meter;
  #tokenUsage: Histogram | undefined;
  #operationDuration: Histogram | undefined;
  #cachedInput: Histogram | undefined;
  #toolCalls: Counter | undefined;
  #toolDuration: Histogram | undefined;
  #escalations: Counter | undefined;
  #unjudged: Counter | undefined;
  #agentLoopEnds: Counter | undefined;
  #cost: Counter | undefined;
  #open: ObservableGauge | undefined;

  constructor(meter: Meter) {
    this.#meter = meter;
    this.live = meter !== createNoopMeter();
  }

  /** `gen_ai.client.token.usage`: input and output tokens per model round. */
  get tokenUsage(): Histogram {
    return (this.#tokenUsage ??= this.#histogram(METRIC_GEN_AI_TOKEN_USAGE, 'Input and output tokens per model call', '{token}', TOKEN_BUCKETS, ValueType.INT));
  }

  /** `gen_ai.client.operation.duration`: seconds per model round. */
  get operationDuration(): Histogram {
    return (this.#operationDuration ??= this.#histogram(METRIC_GEN_AI_OPERATION_DURATION, 'Duration of a model call', 's', SECONDS_BUCKETS, ValueType.DOUBLE));
  }

  /** `governor.token.cached_input`: input tokens served from the provider's prompt cache, per model round. */
  get cachedInputTokens(): Histogram {
    return (this.#cachedInput ??= this.#histogram(
      METRIC_CACHED_INPUT_TOKENS,
      'Input tokens read from the prompt cache per model call',
      '{token}',
      TOKEN_BUCKETS,
      ValueType.INT,
    ));
  }

  /** `governor.tool.calls`: tool calls by tool and outcome. */
  get toolCalls(): Counter {
    return (this.#toolCalls ??= this.#counter(METRIC_TOOL_CALLS, 'Tool calls the model asked for, by tool and outcome', '{call}'));
  }

  /** `governor.tool.duration`: seconds per executed tool call. */
  get toolDuration(): Histogram {
    return (this.#toolDuration ??= this.#histogram(METRIC_TOOL_DURATION, 'Duration of an executed tool call', 's', SECONDS_BUCKETS, ValueType.DOUBLE));
  }

  /** `governor.breaker.escalations`: breaker escalations by category and action. */
  get escalations(): Counter {
    return (this.#escalations ??= this.#counter(
      METRIC_BREAKER_ESCALATIONS,
      'Agent breaker escalations (steer, block, stop, recover) by loop category',
      '{escalation}',
    ));
  }

  /** `governor.breaker.unjudged`: breaker operations not judged because the store failed, by outcome (`allowed` / `refused`). */
  get unjudged(): Counter {
    return (this.#unjudged ??= this.#counter(METRIC_BREAKER_UNJUDGED, 'Agent breaker operations not judged because its store failed', '{operation}'));
  }

  /** `governor.agent_loop.ends`: AgentLoop runs by end status. */
  get agentLoopEnds(): Counter {
    return (this.#agentLoopEnds ??= this.#counter(METRIC_AGENT_LOOP_ENDS, 'AgentLoop runs that ended, by status', '{run}'));
  }

  /** `governor.cost`: USD spent on model calls whose price is known. */
  get cost(): Counter {
    return (this.#cost ??= this.#counter(
      METRIC_COST,
      'Cost of model calls in US dollars (calls without a known price are not counted)',
      'USD',
      ValueType.DOUBLE,
    ));
  }

  /** Creates the `governor.breaker.open` gauge once per meter. */
  ensureOpenBreakerGauge(): void {
    if (this.#open !== undefined || !this.live) return;
    try {
      this.#open = this.#meter.createObservableGauge(METRIC_BREAKER_OPEN, {
        description: 'Sessions whose agent breaker is OPEN',
        unit: '{session}',
        valueType: ValueType.INT,
      });
      this.#open.addCallback(async (result) => {
        result.observe(await countOpenBreakers());
      });
    } catch {
      // A partial meter implementation must not break the caller.
    }
  }

  #histogram(name: string, description: string, unit: string, buckets: number[], valueType: ValueType): Histogram {
    try {
      return this.#meter.createHistogram(name, { description, unit, valueType, advice: { explicitBucketBoundaries: buckets } });
    } catch {
      return createNoopMeter().createHistogram(name);
    }
  }

  #counter(name: string, description: string, unit: string, valueType: ValueType = ValueType.INT): Counter {
    try {
      return this.#meter.createCounter(name, { description, unit, valueType });
    } catch {
      return createNoopMeter().createCounter(name);
    }
  }
}

let meterState: { provider: MeterProvider; instruments: MeterInstruments } | undefined;

/**
 * The instruments on the current global meter provider, created on first use
 * (and again when the provider changes), so a provider registered after our
 * objects were built still receives their measurements.
 */
export function meterInstruments(): MeterInstruments {
  const provider = metrics.getMeterProvider();
  if (meterState?.provider !== provider) {
    let meter: Meter;
    try {
      meter = provider.getMeter(INSTRUMENTATION_SCOPE);
    } catch {
      meter = createNoopMeter();
    }
    meterState = { provider, instruments: new MeterInstruments(meter) };
    if (openBreakerSources.size > 0) meterState.instruments.ensureOpenBreakerGauge();
  }
  return meterState.instruments;
}
