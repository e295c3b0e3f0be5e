import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loopingServer } from './looping-server.ts';

/**
 * The looping test server over Streamable HTTP (stateless: one server per
 * request), on a free loopback port; with `authorization`, a request without
 * that exact header gets 401.
 */
export async function startHttpLoopingServer(options: { authorization?: string } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer((req, res) => {
    if (options.authorization !== undefined && req.headers.authorization !== options.authorization) {
      res.writeHead(401, { 'www-authenticate': 'Basic' }).end();
      return;
    }
    void (async () => {
      const server = loopingServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
