import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createModelProxy } from './model-proxy.ts';
import { MODEL_PROXY_RULES, type ModelProxyOptions } from './model-proxy-options.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link startModelProxy}. */
export interface ModelProxyServerOptions extends ModelProxyOptions {
  /** Port to listen on; 0 picks a free one. @default 8787 */
  readonly port?: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
}

const MODEL_PROXY_SERVER_RULES: OptionRules<ModelProxyServerOptions> = {
  ...MODEL_PROXY_RULES,
  port: is.integer(0, 65_535),
  host: is.string({ nonEmpty: true }),
};

/** A listening model proxy. */
export interface ModelProxyServer extends AsyncDisposable {
  /** Root URL, e.g. `http://127.0.0.1:8787`; clients use `${url}/v1` as their base URL. */
  readonly url: string;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Serves {@link createModelProxy} over HTTP on Node. */
export async function startModelProxy(options: ModelProxyServerOptions): Promise<ModelProxyServer> {
  validateOptions('startModelProxy', options, MODEL_PROXY_SERVER_RULES, { required: ['upstream', 'breaker'] });
  const { port = 8787, host = '127.0.0.1', ...proxy } = options;
  const app = createModelProxy(proxy);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s as Server));
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://${shown}:${address.port}`, close, [Symbol.asyncDispose]: close };
}
