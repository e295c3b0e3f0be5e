/** What is shown for a URL whose host and path may be pieces of its user info. */
const NOT_SHOWN = 'an address not shown, as its URL may hold a password';

/**
 * A connection URL reduced to what is safe to show in errors and logs:
 * `host:port/path`, without user name, password or query parameters.
 *
 * An unencoded `/`, `?` or `#` in the user info ends it early for a URL
 * parser, which then reads part of the password as the host and the rest,
 * up to the `@`, as the path, query or fragment. An `@` after the host is
 * the sign of that, so such a URL shows neither host nor path.
 */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (`${parsed.pathname}${parsed.search}${parsed.hash}`.includes('@')) return NOT_SHOWN;
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${parsed.host === '' ? 'localhost' : parsed.host}${path}`;
  } catch {
    return 'an unparseable URL';
  }
}
