/**
 * Ends a node-redis client that a store created: `graceful` is its `close()`,
 * which waits for every reply still due, and a server that stalls never
 * sends them. If that has not finished (or has failed) within `ms`, the
 * client is destroyed, which fails what is still pending and drops the
 * connection, so that the caller's close is bounded whatever the server does.
 */
export async function closeWithin(graceful: Promise<unknown>, ms: number, destroy: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(resolve, ms, 'expired');
  });
  try {
    const outcome = await Promise.race([
      graceful.then(
        () => 'closed' as const,
        () => 'failed' as const,
      ),
      expired,
    ]);
    if (outcome !== 'closed') destroy();
  } finally {
    clearTimeout(timer);
  }
}
