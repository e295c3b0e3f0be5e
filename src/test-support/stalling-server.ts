import net from 'node:net';

/** A local server that stops answering when told to; see {@link stallingServer}. */
export interface StallingServer {
  /** `url` with its host and port replaced by this server's. */
  address(url: string): string;
  /** From now on nothing more is passed on either way, and the connections stay open. */
  stall(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A server that holds every connection open and answers nothing, not even a
 * FIN, as a stopped process or a network that drops packets would; with
 * `upstream`, a relay to it until `stall()`.
 */
export async function stallingServer(upstream?: { host: string; port: number }): Promise<StallingServer> {
  let stalled = upstream === undefined;
  const held = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    held.add(socket);
    socket.on('error', () => {});
    if (upstream === undefined) return;
    const relay = net.connect(upstream.port, upstream.host);
    held.add(relay);
    relay.on('error', () => {});
    socket.on('data', (chunk) => stalled || relay.write(chunk));
    relay.on('data', (chunk) => stalled || socket.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address(url) {
      const through = new URL(url);
      through.host = `127.0.0.1:${port}`;
      return through.toString();
    },
    stall() {
      stalled = true;
    },
    async close() {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
