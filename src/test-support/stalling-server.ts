import net from 'node:net';

/** A local server that stops answering when told to; see {@link stallingServer}. */
export interface StallingServer {
  /** `url` with its host and port replaced by this server's. */
  address(url: string): string;
  /** From now on nothing more is passed on either way, and the connections stay open. */
  stall(): void;
  /** Stalls from the next chunk a client sends that holds `text`, that chunk included (a COMMIT, say). */
  stallAtNext(text: string): void;
  /** Passes on, in order, what was held while stalled, as a resumed process reads what its socket buffered; then relays again. */
  resume(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A server that holds every connection open and answers nothing, not even a
 * FIN, as a stopped process or a network that drops packets would; with
 * `upstream`, a relay to it until `stall()`. While stalled, what either side
 * sends (and a hang-up) waits in the relay until `resume()`.
 */
export async function stallingServer(upstream?: { host: string; port: number }): Promise<StallingServer> {
  let stalled = upstream === undefined;
  let armed: string | undefined;
  let held: (() => void)[] = [];
  const later = (deliver: () => void): void => {
    if (stalled) held.push(deliver);
    else deliver();
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    if (upstream === undefined) return;
    const relay = net.connect(upstream.port, upstream.host);
    sockets.add(relay);
    relay.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      if (armed !== undefined && chunk.includes(armed)) {
        armed = undefined;
        stalled = true;
      }
      later(() => relay.write(chunk));
    });
    socket.on('close', () => later(() => relay.end()));
    relay.on('data', (chunk) => later(() => socket.write(chunk)));
    relay.on('close', () => later(() => socket.destroy()));
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
    stallAtNext(text) {
      armed = text;
    },
    resume() {
      stalled = false;
      const due = held;
      held = [];
      for (const deliver of due) deliver();
    },
    async close() {
      held = [];
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
