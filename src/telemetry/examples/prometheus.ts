/**
 * Example: Governor's metrics on a Prometheus endpoint, with the health
 * endpoint beside it, for an agent running against the scripted stand-in model.
 *
 *   node src/telemetry/examples/prometheus.ts      # then open /metrics and /health
 *
 * The library only talks to `@opentelemetry/api`; the application registers
 * an SDK (here a MeterProvider whose reader is the Prometheus exporter).
 * The exporter's own server is not started: its request handler is mounted
 * on the application's server, next to the health handler.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { tool } from 'ai';
import { z } from 'zod';
import { ToolCallingAdvisor } from '../../advisors/tool-call-advisor.ts';
import { AgentBreaker } from '../../breaker/agent-breaker.ts';
import { CONVERSATION_ID } from '../../chat/advisor-context.ts';
import { ChatClient } from '../../chat/chat-client.ts';
import { scriptedModel } from '../../testing/scripted-model.ts';
import { ScriptedModelServer } from '../../testing/scripted-model-server.ts';
import { healthHandler } from '../health-handler.ts';

/** A running example. */
export interface PrometheusExample {
  /** Prometheus scrape endpoint. */
  readonly metricsUrl: string;
  /** Health endpoint (200 when healthy, 503 when not). */
  readonly healthUrl: string;
  /** Runs one agent call (a tool call, then an answer) and returns the answer. */
  ask(question: string): Promise<string>;
  /** Stops the servers and unregisters the meter provider. */
  close(): Promise<void>;
}

/** Options of {@link startPrometheusExample}. */
export interface PrometheusExampleOptions {
  /** Port of the metrics and health server; 0 picks a free one. @default 9464 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

export async function startPrometheusExample(options: PrometheusExampleOptions = {}): Promise<PrometheusExample> {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);

  // The stand-in asks for the weather tool, then answers; and again for the next question.
  const model = await new ScriptedModelServer({
    script: (_request, index) => (index % 2 === 0 ? { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] } : { text: 'It is 15°C in Paris.' }),
  }).start();
  const weather = tool({
    description: 'Current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `15°C in ${city}`,
  });
  const breaker = new AgentBreaker();
  const client = ChatClient.builder(scriptedModel(model))
    .defaultAdvisors(new ToolCallingAdvisor(), breaker)
    .defaultTools({ weather })
    // A price for the stand-in, so that the cost counter has something to count.
    .telemetry({ prices: { [model.modelId]: { inputPerMillion: 2.5, outputPerMillion: 10 } } })
    .build();

  const health = healthHandler({ breakers: { agents: breaker } });
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/metrics') exporter.getMetricsRequestHandler(req, res);
    else if (path === '/health') void health(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 9464, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  const base = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  let session = 0;
  return {
    metricsUrl: `${base}/metrics`,
    healthUrl: `${base}/health`,
    ask: (question) =>
      client
        .prompt(question)
        .advisors((a) => a.param(CONVERSATION_ID, `example-${++session}`))
        .call()
        .content(),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await model.close();
      await provider.shutdown();
      metrics.disable();
    },
  };
}

if (import.meta.main) {
  const example = await startPrometheusExample();
  console.log(await example.ask('What is the weather in Paris?'));
  console.log(`metrics: ${example.metricsUrl}\nhealth:  ${example.healthUrl}\n(Ctrl-C to stop)`);
  process.once('SIGINT', () => void example.close());
}
