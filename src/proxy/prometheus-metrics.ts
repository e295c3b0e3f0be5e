import { importOptional } from '../runtime/import-optional.ts';

/** A `/metrics` handler backed by an OpenTelemetry Prometheus reader registered as the global meter provider. */
export interface PrometheusMetrics {
  readonly handler: (request: Request) => Promise<Response>;
  shutdown(): Promise<void>;
}

/**
 * Registers a MeterProvider whose reader is the OpenTelemetry Prometheus
 * exporter (its own server not started) and serves its scrape text.
 *
 * @throws MissingDependencyError naming `@opentelemetry/exporter-prometheus` or `@opentelemetry/sdk-metrics`
 */
export async function prometheusMetrics(): Promise<PrometheusMetrics> {
  const feature = 'The /metrics endpoint (--metrics)';
  const { PrometheusExporter, PrometheusSerializer } = await importOptional(
    '@opentelemetry/exporter-prometheus',
    feature,
    () => import('@opentelemetry/exporter-prometheus'),
  );
  const { MeterProvider } = await importOptional('@opentelemetry/sdk-metrics', feature, () => import('@opentelemetry/sdk-metrics'));
  const { metrics } = await import('@opentelemetry/api');
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);
  const serializer = new PrometheusSerializer();
  return {
    async handler(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('use GET\n', { status: 405, headers: { allow: 'GET, HEAD' } });
      const { resourceMetrics } = await exporter.collect();
      return new Response(request.method === 'HEAD' ? null : serializer.serialize(resourceMetrics), {
        headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
      });
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
