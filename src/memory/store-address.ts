/** What is shown for a URL whose host and path may be pieces of its user info. */
const NOT_SHOWN = 'an address not shown, as its URL may hold a password';

/** How to write a user name or password that holds a character URLs give a meaning to. */
export const PERCENT_ENCODE_USER_INFO = 'percent-encode special characters (# / ? @ : %) in the user name and password (encodeURIComponent)';

/**
 * Whether `url` has an `@` after its host: an unencoded `/`, `?` or `#` in
 * the user info ended it early for a URL parser, which then reads part of
 * the password as the host and the rest, up to the `@`, as the path, query
 * or fragment.
 */
export function atAfterHost(url: URL): boolean {
  return `${url.pathname}${url.search}${url.hash}`.includes('@');
}

/**
 * A connection URL reduced to what is safe to show in errors and logs:
 * `host:port/path`, without user name, password or query parameters.
 * A URL with an `@` after its host ({@link atAfterHost}) shows neither host
 * nor path: they may be pieces of its password.
 */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (atAfterHost(parsed)) return NOT_SHOWN;
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${parsed.host === '' ? 'localhost' : parsed.host}${path}`;
  } catch {
    return 'an unparseable URL';
  }
}
