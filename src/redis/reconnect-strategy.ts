import { isErrorReply } from './error-reply.ts';

/**
 * Longest wait between two reconnection attempts of a client a store
 * creates. While it reconnects its calls fail at once, so this bounds how
 * long calls go unjudged (or refused) after the server is back; an attempt
 * that is refused costs next to nothing.
 */
export const MAX_RECONNECT_DELAY_MS = 500;

/**
 * node-redis's `reconnectStrategy` for a client a store creates: waits
 * `backoff(retries)` before trying again (false: no retry), but never
 * retries a handshake the server refused with an error reply (a wrong or
 * missing password, a database index it lacks, a user without permission
 * for the handshake's commands). The server answered: retrying in the
 * background would hold `connect()` pending, so that the caller waits its
 * whole timeout and reads a timeout instead of the server's reason. Given
 * up, `connect()` rejects with that reply, and the store's next call
 * connects anew (one round trip) and is told again. So it goes, when asked,
 * for a connection refused before the client was ever ready: a server that
 * is not up is said at once, not after the caller's timeout.
 */
export function unlessRefused(
  backoff: (retries: number) => number | false,
  /** Whether a refused connection is given up on too: before the client was ever ready, it says the server is not up, at once. */
  givesUpOnRefusedConnection: () => boolean = () => false,
): (retries: number, cause: Error) => number | false {
  return (retries, cause) =>
    isErrorReply(cause) || ((cause as { code?: unknown }).code === 'ECONNREFUSED' && givesUpOnRefusedConnection()) ? false : backoff(retries);
}
