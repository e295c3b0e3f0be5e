import type { Pool, PoolClient } from 'pg';
import { isQueryTimeout } from './bounded-pool.ts';

/** What a transaction that failed left behind, as far as this process can tell. */
export interface TransactionOutcome {
  /**
   * The COMMIT was sent and no answer came (a timeout, a connection that
   * dropped): the server may have committed it.
   */
  unknown: boolean;
}

/** Whether the server answered with this error (a PostgreSQL error carries its SQLSTATE). */
function hasSqlState(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/**
 * Runs `work` in a transaction on a connection checked out of `pool`, and
 * rejects with the error that ended it; `outcome` says whether a failed
 * COMMIT may still have been applied.
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
export async function inTransaction(pool: Pool, work: (client: PoolClient) => Promise<void>, outcome?: TransactionOutcome): Promise<void> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error): void => {
    lost ??= error;
  };
  client.on('error', onError);
  let broken = false;
  let committing = false;
  try {
    await client.query('BEGIN');
    await work(client);
    committing = true;
    await client.query('COMMIT');
  } catch (error) {
    // The server answered the COMMIT with an error (it has a SQLSTATE): not applied. No answer: it may have been.
    if (committing && outcome !== undefined) outcome.unknown = !hasSqlState(error);
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
