import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { createModelProxy } from './model-proxy.ts';
import { MODEL_PROXY_RULES, type ModelProxyOptions } from './model-proxy-options.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link startModelProxy}. */
export interface ModelProxyServerOptions extends ModelProxyOptions {
  /** Port to listen on; 0 picks a free one. @default 8787 */
  readonly port?: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /**
   * How long `close()` lets requests in flight finish (a streamed answer
   * too) before it drops their connections, in ms. @default 10000
   */
  readonly closeGraceMs?: number;
}

const MODEL_PROXY_SERVER_RULES: OptionRules<ModelProxyServerOptions> = {
  ...MODEL_PROXY_RULES,
  port: is.integer(0, 65_535),
  host: is.string({ nonEmpty: true }),
  closeGraceMs: is.integer(0, 2_147_483_647),
};

/** How a model proxy closed (see {@link ModelProxyServer.close}). */
export interface ModelProxyClosed {
  /** Requests still in flight when `closeGraceMs` ran out, whose connections were dropped. */
  readonly cutOff: number;
}

/** A listening model proxy. */
export interface ModelProxyServer extends AsyncDisposable {
  /** Root URL, e.g. `http://127.0.0.1:8787`; clients use `${url}/v1` as their base URL. */
  readonly url: string;
  /**
   * Stops listening, closes idle connections, and lets requests in flight
   * finish for up to `closeGraceMs` before dropping them; resolves to how
   * many it dropped.
   */
  close(): Promise<ModelProxyClosed>;
}

/** Serves {@link createModelProxy} over HTTP on Node. */
export async function startModelProxy(options: ModelProxyServerOptions): Promise<ModelProxyServer> {
  validateOptions('startModelProxy', options, MODEL_PROXY_SERVER_RULES, { required: ['upstream', 'breaker'] });
  const { port = 8787, host = '127.0.0.1', closeGraceMs = 10_000, ...proxy } = options;
  const app = createModelProxy(proxy);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s as Server));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  /** Answers being written. */
  const open = new Set<ServerResponse>();
  let closing: Promise<ModelProxyClosed> | undefined;
  const close = (): Promise<ModelProxyClosed> =>
    (closing ??= new Promise<ModelProxyClosed>((resolve) => {
      let cutOff = 0;
      // A client's answer in flight is billed already: it is let finish rather than cut off.
      const drop = setTimeout(() => {
        cutOff = open.size;
        server.closeAllConnections();
      }, closeGraceMs);
      server.close(() => {
        clearTimeout(drop);
        resolve({ cutOff });
      });
      server.closeIdleConnections();
    }));
  server.on('request', (_request, response: ServerResponse) => {
    open.add(response);
    response.once('close', () => {
      open.delete(response);
      // A connection whose answer ends during the grace is closed then, not kept alive for a next request.
      if (closing !== undefined) setImmediate(() => server.closeIdleConnections());
    });
  });
  const dispose = async (): Promise<void> => {
    await close();
  };
  return { url: `http://${shown}:${address.port}`, close, [Symbol.asyncDispose]: dispose };
}
