/**
 * Whether a command failed with the server's error reply, which starts with
 * its code (ERR, NOSCRIPT, OOM, EXECABORT, GOVERNOR_TOO_LATE …), rather than
 * in the client (aborted, offline, connection lost): whatever the client.
 * The server answered it, so it knows what it applied.
 */
export function isErrorReply(error: unknown): boolean {
  return error instanceof Error && /^[A-Z][A-Z0-9_]+(?: |$)/.test(error.message);
}
