/**
 * A connection URL reduced to what is safe to show in errors and logs:
 * `host:port/path`, without user name, password or query parameters.
 */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${parsed.host === '' ? 'localhost' : parsed.host}${path}`;
  } catch {
    return 'an unparseable URL';
  }
}
