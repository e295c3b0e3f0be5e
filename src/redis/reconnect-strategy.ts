import { isErrorReply } from './error-reply.ts';

/**
 * node-redis's `reconnectStrategy` for a client a store creates: waits
 * `backoff(retries)` before trying again (false: no retry), but never
 * retries a handshake the server refused with an error reply (a wrong or
 * missing password, a database index it lacks, a user without permission
 * for the handshake's commands). The server answered: retrying in the
 * background would hold `connect()` pending, so that the caller waits its
 * whole timeout and reads a timeout instead of the server's reason. Given
 * up, `connect()` rejects with that reply, and the store's next call
 * connects anew (one round trip) and is told again.
 */
export function unlessRefused(backoff: (retries: number) => number | false): (retries: number, cause: Error) => number | false {
  return (retries, cause) => (isErrorReply(cause) ? false : backoff(retries));
}
