import type { IncomingMessage, ServerResponse } from 'node:http';
import { redact } from '../redaction/redact.ts';
import { health, validateHealthOptions, type HealthOptions, type HealthReport } from './health.ts';

/**
 * A health endpoint that speaks both Web `Request → Response` (Hono, Bun,
 * Deno, Next.js route handlers, `fetch`-style servers) and Node's
 * `(req, res)` (`http.createServer`, Express, Fastify's raw handlers).
 */
export interface HealthHandler {
  (request: Request): Promise<Response>;
  (request: IncomingMessage, response: ServerResponse): Promise<void>;
}

const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

function isNodeResponse(value: unknown): value is ServerResponse {
  return typeof (value as Partial<ServerResponse> | undefined)?.writeHead === 'function';
}

async function answer(
  method: string | undefined,
  report: () => Promise<HealthReport>,
): Promise<{ status: number; headers: Record<string, string>; body: string | null }> {
  if (method !== undefined && method !== 'GET' && method !== 'HEAD') {
    return { status: 405, headers: { ...HEADERS, allow: 'GET, HEAD' }, body: JSON.stringify({ error: 'use GET or HEAD' }) };
  }
  let r: HealthReport;
  try {
    r = await report();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    r = { status: 'DOWN', components: { health: { status: 'DOWN', details: { error: redact(message).slice(0, 500) } } } };
  }
  return { status: r.status === 'UP' ? 200 : 503, headers: { ...HEADERS }, body: method === 'HEAD' ? null : JSON.stringify(r) };
}

/**
 * Serves {@link health}: `200` with the JSON report when every component is
 * `UP`, `503` when any is `DOWN`; `405` for methods other than GET and HEAD.
 *
 * ```ts
 * const handler = healthHandler({ breakers: { agents: breaker } });
 * http.createServer((req, res) => req.url === '/health' ? handler(req, res) : …);  // Node
 * app.get('/health', handler);                                                      // Express
 * app.get('/health', (c) => handler(c.req.raw));                                    // Hono
 * ```
 *
 * @param source health options, or a function producing the report
 * @throws InvalidOptionError at construction for bad options
 */
export function healthHandler(source: HealthOptions | (() => Promise<HealthReport>)): HealthHandler {
  if (typeof source !== 'function') validateHealthOptions(source);
  const report = typeof source === 'function' ? source : () => health(source);
  async function handle(request: Request | IncomingMessage, response?: ServerResponse): Promise<Response | undefined> {
    const { status, headers, body } = await answer(request.method?.toUpperCase(), report);
    if (isNodeResponse(response)) {
      response.writeHead(status, headers);
      response.end(body ?? undefined);
      return;
    }
    return new Response(body, { status, headers });
  }
  return handle as HealthHandler;
}
