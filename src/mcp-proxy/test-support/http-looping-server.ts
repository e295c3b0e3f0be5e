import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loopingServer } from './looping-server.ts';

/** A running {@link startHttpLoopingServer}. */
export interface HttpLoopingServer {
  readonly url: string;
  /**
   * Drops the response of every request being answered, as a server that
   * crashed or a proxy in between would: `destroy` cuts the connection,
   * `end` ends the response stream without the answer. Resolves to how many
   * responses were dropped.
   */
  dropResponses(how: 'destroy' | 'end'): Promise<number>;
  close(): Promise<void>;
}

/**
 * The looping test server over Streamable HTTP (stateless: one server per
 * request), on a free loopback port; with `authorization`, a request without
 * that exact header gets 401; with `sized`, it has the tools for the size
 * limit of messages (see {@link loopingServer}).
 */
export async function startHttpLoopingServer(options: { authorization?: string; sized?: boolean } = {}): Promise<HttpLoopingServer> {
  const answering = new Map<ServerResponse, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    if (options.authorization !== undefined && req.headers.authorization !== options.authorization) {
      res.writeHead(401, { 'www-authenticate': 'Basic' }).end();
      return;
    }
    void (async () => {
      const server = loopingServer({ sized: options.sized === true });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      answering.set(res, transport);
      res.on('close', () => {
        answering.delete(res);
        void transport.close().then(() => server.close());
      });
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
    async dropResponses(how) {
      const dropped = [...answering];
      // Closing the transport ends each of its response streams, answered or not, as the SDK's server does when it shuts down.
      await Promise.all(dropped.map(([res, transport]) => (how === 'destroy' ? res.destroy() : transport.close())));
      return dropped.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/** A running {@link startStatefulHttpLoopingServer}. */
export interface StatefulHttpLoopingServer {
  readonly url: string;
  /** How many sessions were started (initialize requests answered) since the first start. */
  readonly sessionsStarted: number;
  /**
   * What it was told, in order: the method of each JSON-RPC message of a
   * known session, `DELETE` for each request ending a session, and `wait
   * aborted` when a `wait` call saw its signal fire.
   */
  readonly heard: readonly string[];
  /**
   * Stops the server and starts it again on the same port, knowing no
   * session, as a restarted process does; with `refuseNewSessions`, an
   * initialize request then gets 503.
   */
  restart(options?: { refuseNewSessions?: boolean }): Promise<void>;
  /** Cuts the connection of every response being sent, as a network failure would; the server runs on. Resolves to how many were cut. */
  cutConnections(): number;
  close(): Promise<void>;
}

/**
 * The looping test server over Streamable HTTP with sessions (one server per
 * session, the SDK's own stateful setup), on a free loopback port: a request
 * with an `mcp-session-id` it does not know gets 404, as the MCP spec says.
 * With `resumable`, its response streams can be resumed (the SDK's event
 * store: each event has an id, and a client that lost a stream asks for the
 * rest with a GET), after 10 ms.
 */
export async function startStatefulHttpLoopingServer(options: { resumable?: boolean } = {}): Promise<StatefulHttpLoopingServer> {
  const resumability = options.resumable === true ? { eventStore: new InMemoryEventStore(), retryInterval: 10 } : {};
  const sending = new Set<ServerResponse>();
  let sessions = new Map<string, StreamableHTTPServerTransport>();
  let sessionsStarted = 0;
  let refuseNewSessions = false;
  const heard: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'DELETE') heard.push('DELETE');
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const known = sessions.get(id);
      if (known === undefined) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await known.handleRequest(req, res);
      return;
    }
    if (refuseNewSessions) {
      res.writeHead(503).end();
      return;
    }
    const known = sessions;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      ...resumability,
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        known.set(sessionId, transport);
        sessionsStarted += 1;
      },
    });
    await loopingServer({ onWaitAborted: () => heard.push('wait aborted') }).connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if ('method' in message) heard.push(message.method);
      deliver?.(message, extra);
    };
    await transport.handleRequest(req, res);
  };
  const listen = async (port: number): Promise<Server> => {
    const http = createServer((req, res) => {
      sending.add(res);
      res.on('close', () => sending.delete(res));
      handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
    return http;
  };
  const stop = async (http: Server): Promise<void> => {
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeAllConnections();
    await closed;
    await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
  };
  let http = await listen(0);
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get sessionsStarted() {
      return sessionsStarted;
    },
    heard,
    async restart(options = {}) {
      await stop(http);
      sessions = new Map();
      refuseNewSessions = options.refuseNewSessions ?? false;
      http = await listen(port);
    },
    cutConnections() {
      const cut = sending.size;
      for (const res of sending) res.destroy();
      return cut;
    },
    close: () => stop(http),
  };
}
