import type { Pool, PoolClient } from 'pg';
import pg from './pg-module.ts';

/**
 * A pool a store creates from a connection string, bounded against a server
 * that stops answering (a stopped process, a network that drops packets)
 * instead of waiting on it for ever: connecting, startup and authentication
 * included, fails after `connectTimeoutMs`, and each statement after
 * `timeoutMs` without its reply (pg's `query_timeout`; the connection it ran
 * on is then discarded, not reused). {@link BoundedPool.end} is bounded too.
 */
export class BoundedPool {
  readonly pool: Pool;
  readonly #timeoutMs: number;
  /** Connections the pool made and has not seen closed yet. */
  readonly #open = new Set<PoolClient>();

  constructor(connectionString: string, { connectTimeoutMs, timeoutMs }: { connectTimeoutMs: number; timeoutMs: number }) {
    this.#timeoutMs = timeoutMs;
    this.pool = new pg.Pool({ connectionString, connectionTimeoutMillis: connectTimeoutMs, query_timeout: timeoutMs });
    // An idle connection that drops is reported here; the next query reports it to its caller.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => this.#open.add(client));
    // Emitted once the connection's socket has closed.
    this.pool.on('remove', (client) => this.#open.delete(client));
  }

  /**
   * Ends the pool within about `ms` (default `timeoutMs`). pg's `end()` waits
   * for the connections in use (whose statements `query_timeout` bounds) and
   * asks each idle one to close, without waiting for it: against a stalled
   * server that never closes its side, those sockets would stay open and
   * keep the process alive. They get `ms` to close, then are destroyed.
   */
  async end(ms: number = this.#timeoutMs): Promise<void> {
    const pool = this.pool;
    const ended = pool.ending ? Promise.resolve() : pool.end();
    let onRemove: (() => void) | undefined;
    const closed = ended.then(
      () =>
        new Promise<'closed'>((resolve) => {
          // Runs after the listener that forgets the removed connection (registered first).
          onRemove = () => {
            if (this.#open.size === 0) resolve('closed');
          };
          pool.on('remove', onRemove);
          onRemove();
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(resolve, ms, 'expired');
    });
    try {
      if ((await Promise.race([closed, expired])) !== 'expired') return;
      closed.catch(() => {});
      // The statements still running on them fail, which lets pool.end() finish.
      for (const client of this.#open) client.connection.stream.destroy();
    } finally {
      clearTimeout(timer);
      if (onRemove !== undefined) pool.off('remove', onRemove);
    }
  }
}

/**
 * Whether pg gave up on a statement after its `query_timeout`. pg marks it
 * by its message only; a change there makes callers treat the timeout as
 * any other failure, which is slower (a ROLLBACK queued behind the statement
 * waits as long again) but as bounded.
 */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}
