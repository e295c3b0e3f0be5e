import { InvalidOptionError } from '../errors/governor-error.ts';
import { atAfterHost, PERCENT_ENCODE_USER_INFO as ENCODE } from '../memory/store-address.ts';

/** What a store's `url` option takes, for the messages of {@link assertRedisUrl}. */
const URL_FORM = 'a redis:// URL (rediss:// for TLS): redis://[[user]:password@]host[:port][/db], e.g. redis://127.0.0.1:6379';

/**
 * Checks a store's `url` option as node-redis will read it, so that a bad one
 * is an {@link InvalidOptionError} naming the option and what to pass instead
 * of node-redis's bare TypeError. The messages never hold the URL itself:
 * it may hold a password. `unix://` socket URLs are left to node-redis.
 */
export function assertRedisUrl(url: string): void {
  if (url.startsWith('unix:')) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidOptionError('url', `is not a valid URL; ${ENCODE}, and pass ${URL_FORM}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new InvalidOptionError('url', `uses the scheme "${parsed.protocol}", which is not Redis; pass ${URL_FORM}`);
  }
  if (atAfterHost(parsed)) {
    throw new InvalidOptionError(
      'url',
      `has an "@" after its host, so part of the user name or password would be read as the host; ${ENCODE}, and pass ${URL_FORM}`,
    );
  }
  if (!/^(\/\d*)?$/.test(parsed.pathname)) {
    throw new InvalidOptionError('url', `has a path that is not a database number; pass ${URL_FORM}`);
  }
}

/**
 * Runs node-redis's `createClient` for a URL that {@link assertRedisUrl}
 * accepted: anything node-redis still refuses (a malformed `unix://` URL)
 * becomes an {@link InvalidOptionError} too, credentials masked.
 */
export function createClientForUrl<T>(create: () => T): T {
  try {
    return create();
  } catch (error) {
    const problem = (error instanceof Error ? error.message : String(error)).replace(/\/\/[^@/\s]*@/g, '//***@');
    throw new InvalidOptionError('url', `node-redis refused it (${problem}); pass ${URL_FORM}`);
  }
}
