/**
 * What `governor proxy` adds to a model call: the same productive requests
 * are sent straight to the scripted stand-in and through the model proxy
 * (in-memory breaker), interleaved, over real local HTTP. Reports the
 * latency of each path (p50, p90) and the difference, per non-streamed
 * request, per streamed request and per streamed chunk.
 *
 * The stand-in answers at once, so the difference is the proxy's own cost
 * (one more HTTP hop on loopback, JSON/SSE handling, the breaker's
 * judgement), not network time.
 */
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import { startModelProxy } from '../src/proxy/model-proxy-server.ts';
import { ScriptedModelServer } from '../src/testing/index.ts';

/** p50 and p90 of one path, in ms. */
interface LatencyFigures {
  readonly p50: number;
  readonly p90: number;
}

/** One kind of request, straight and proxied. */
interface ProxyPathFigures {
  readonly requests: number;
  readonly direct: LatencyFigures;
  readonly proxied: LatencyFigures;
  /** proxied − direct, per percentile (ms). */
  readonly added: LatencyFigures;
}

/** What {@link measureProxyOverhead} reports. */
export interface ProxyOverheadFigures {
  readonly nonStreamed: ProxyPathFigures;
  readonly streamed: ProxyPathFigures & {
    /** Chunks (server-sent events) per streamed answer. */
    readonly chunksPerResponse: number;
    /** Added time per chunk: added p50 / chunks (µs). */
    readonly addedPerChunkMicros: number;
  };
  /** Responses the breaker changed or refused (must be 0 for the figures to mean anything). */
  readonly interventions: number;
}

/** Options of {@link measureProxyOverhead}. */
export interface ProxyOverheadOptions {
  /** Timed requests per path and mode. @default 1000 */
  readonly requests?: number;
  /** Untimed requests first. @default 200 */
  readonly warmUp?: number;
  /** Words of each answer (one streamed chunk per word). @default 200 */
  readonly words?: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

function latency(samples: number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9) };
}

/** A deterministic answer of `words` words, different for every request. */
function answer(index: number, words: number): string {
  const parts: string[] = [];
  let x = (index + 1) * 2654435761;
  for (let i = 0; i < words; i += 1) {
    x = (x * 1103515245 + 12345) >>> 0;
    parts.push(`w${(x % 100_000).toString(36)}`);
  }
  return parts.join(' ');
}

export async function measureProxyOverhead(options: ProxyOverheadOptions = {}): Promise<ProxyOverheadFigures> {
  const requests = options.requests ?? 1000;
  const warmUp = options.warmUp ?? 200;
  const words = options.words ?? 200;
  await using upstream = await new ScriptedModelServer({
    script: (_request, index) => ({ text: answer(index, words), usage: { promptTokens: 20, completionTokens: words } }),
  }).start();
  await using proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker(), port: 0 });
  let interventions = 0;
  let chunks = 0;

  const send = async (baseURL: string, i: number, stream: boolean): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-governor-session': `bench-${i % 50}` },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `Question ${i}` }], stream }),
    });
    const text = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200 || response.headers.has('x-governor-stop') || text.includes('[governor]')) interventions += 1;
    if (stream) chunks = text.split('\n\n').filter((e) => e.startsWith('data: ')).length;
    return elapsed;
  };

  const run = async (stream: boolean): Promise<ProxyPathFigures> => {
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < warmUp; i += 1) {
      await send(upstream.baseURL, i, stream);
      await send(`${proxy.url}/v1`, i, stream);
    }
    // Interleaved, so a slow spell of the machine hits both paths alike.
    for (let i = 0; i < requests; i += 1) {
      direct.push(await send(upstream.baseURL, i, stream));
      proxied.push(await send(`${proxy.url}/v1`, i, stream));
    }
    const d = latency(direct);
    const p = latency(proxied);
    return { requests, direct: d, proxied: p, added: { p50: p.p50 - d.p50, p90: p.p90 - d.p90 } };
  };

  const nonStreamed = await run(false);
  const streamed = await run(true);
  return {
    nonStreamed,
    streamed: { ...streamed, chunksPerResponse: chunks, addedPerChunkMicros: chunks === 0 ? 0 : (streamed.added.p50 * 1000) / chunks },
    interventions,
  };
}

export function formatProxyOverhead(f: ProxyOverheadFigures): string {
  const ms = (v: number): string => v.toFixed(3).padStart(8);
  const row = (name: string, p: ProxyPathFigures): string =>
    `${name.padEnd(14)}${ms(p.direct.p50)}${ms(p.direct.p90)}${ms(p.proxied.p50)}${ms(p.proxied.p90)}${ms(p.added.p50)}${ms(p.added.p90)}`;
  return [
    `governor proxy: added latency per request (${f.nonStreamed.requests} timed requests per row, loopback, in-memory breaker; ms)`,
    `${''.padEnd(14)}${'direct'.padStart(16)}${'proxied'.padStart(16)}${'added'.padStart(16)}`,
    `${''.padEnd(14)}${'p50'.padStart(8)}${'p90'.padStart(8)}${'p50'.padStart(8)}${'p90'.padStart(8)}${'p50'.padStart(8)}${'p90'.padStart(8)}`,
    row('not streamed', f.nonStreamed),
    row('streamed', f.streamed),
    `per streamed chunk: ${f.streamed.addedPerChunkMicros.toFixed(1)} µs added (p50 added / ${f.streamed.chunksPerResponse} chunks per answer)`,
    f.interventions === 0
      ? 'breaker interventions: 0 (every answer passed unchanged)'
      : `breaker interventions: ${f.interventions} — figures are not of pass-through requests`,
  ].join('\n');
}
