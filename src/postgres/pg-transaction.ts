import type { Pool, PoolClient } from 'pg';
import { isQueryTimeout } from './bounded-pool.ts';

/**
 * Runs `work` in a transaction on a connection checked out of `pool`, and
 * rejects with the error that ended it.
 *
 * While a client is checked out, pg-pool takes its own 'error' listener off
 * it: a connection that drops then (the server restarts, or terminates the
 * backend) emits an 'error' event no one hears, which crashes the process.
 * This listens for the whole time the client is out, so the query in flight
 * and this call fail instead. A connection that dropped is ended before it
 * goes back to the pool, which discards it: it can report nothing more, so no
 * late error reaches the pool (whose listener a pool of the caller's may lack).
 * One that could not roll back is discarded too, and so is one whose
 * statement timed out (`query_timeout`): the statement still runs there, so
 * a ROLLBACK would wait behind it as long again; dropping the connection
 * rolls the transaction back instead.
 */
export async function inTransaction(pool: Pool, work: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error): void => {
    lost ??= error;
  };
  client.on('error', onError);
  let broken = false;
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    if (isQueryTimeout(error)) {
      broken = true;
    } else {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
    }
    throw error;
  } finally {
    if (lost !== undefined) {
      // The socket is dead: ending destroys it at once, and pg emits no error for a client told to end.
      await client.end().catch(() => {});
      client.release(lost);
    } else {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}
