import type { Pool } from 'pg';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { PERCENT_ENCODE_USER_INFO as ENCODE, redactedAddress } from '../memory/store-address.ts';
import { redact } from '../redaction/redact.ts';
import pg from './pg-module.ts';

/** What pg reads as a connection string, for the messages. */
const URL_FORM = 'a URL such as postgres://user:password@host:5432/database';

/**
 * Refuses a connection string pg cannot parse, when the store is built: a
 * pool parses it only when it first connects, and then fails with a bare
 * "Invalid URL". A client parses it when it is built, and building one opens
 * nothing. The message never echoes the value, which may hold a password.
 *
 * pg reads a `postgres://` URL (it ignores the scheme), a `socket:` URL, or
 * a socket directory (`/var/run/postgresql dbname`). Anything else it
 * resolves against the URL `postgres://base`, so a libpq keyword/value
 * string (`host=db dbname=app`, which pg does not parse), a `host:port` or
 * a bare database name would each try the host `base` at first use: those
 * are refused here.
 *
 * An unencoded `/`, `?` or `#` in the user info ends it early, so pg would
 * take part of the password for the host and database, connect there, and
 * every error would show it: such a string is refused too.
 *
 * @throws InvalidOptionError naming `connectionString`
 */
export function checkConnectionString(value: string): void {
  const form = formProblem(value);
  if (form !== undefined) throw new InvalidOptionError('connectionString', form);
  try {
    new pg.Client({ connectionString: value });
  } catch (error) {
    // Parsing also reads the certificate files an sslrootcert / sslcert / sslkey parameter names: that
    // error is the one to show (it names a file, not the string).
    if ((error as { code?: unknown } | null)?.code !== 'ERR_INVALID_URL') {
      throw new InvalidOptionError('connectionString', `could not be used: ${redact(error instanceof Error ? error.message : String(error))}`);
    }
    throw new InvalidOptionError('connectionString', `is not a valid URL such as postgres://user:password@host:5432/database; ${ENCODE}`);
  }
  if (userInfoMisread(value)) {
    throw new InvalidOptionError(
      'connectionString',
      `has an "@" after its host, so pg would read part of the user name or password as the host and database; ${ENCODE}`,
    );
  }
}

/**
 * Whether pg reads the `@` that ends the user info after the host, in the
 * path, the fragment or a query parameter's name (a parameter's value may
 * hold one: `?user=app@server`). The URL is parsed as pg-connection-string
 * parses it: spaces and stray `%` encoded first, an empty host allowed.
 */
function userInfoMisread(value: string): boolean {
  // pg splits a socket directory on its space; it reads no URL there.
  if (value.startsWith('/')) return false;
  const url = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(value) ? encodeURI(value).replace(/%25(\d\d)/g, '%$1') : value;
  let parsed: URL;
  try {
    parsed = new URL(url, 'postgres://base');
  } catch {
    try {
      parsed = new URL(url.replace('@/', '@___DUMMY___/'), 'postgres://base');
    } catch {
      return false;
    }
  }
  return parsed.pathname.includes('@') || parsed.hash.includes('@') || [...parsed.searchParams.keys()].some((key) => key.includes('@'));
}

/** Why pg would misread the string, or `undefined` when it reads it as what it is. */
function formProblem(value: string): string | undefined {
  // A socket directory, a socket: URL, or a URL with a host part (pg reads any scheme as postgres://).
  if (value.startsWith('/') || /^socket:/i.test(value) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined;
  if (/^\s*[a-z_]+\s*=/i.test(value)) {
    return `looks like a libpq keyword/value string (host=… dbname=…), which pg does not read; give ${URL_FORM}`;
  }
  return `is not a postgres:// URL (pg would resolve it against postgres://base and try a host named "base"); give ${URL_FORM}, or a socket directory such as /var/run/postgresql`;
}

/** Where a pool connects, as `host:port/database`: safe for messages, as it never holds credentials. */
export function poolAddress(pool: Pool): string {
  const options = pool.options as { connectionString?: string; host?: string; port?: number; database?: string };
  if (typeof options.connectionString === 'string') return redactedAddress(options.connectionString);
  return `${options.host ?? 'localhost'}:${options.port ?? 5432}/${options.database ?? ''}`;
}
