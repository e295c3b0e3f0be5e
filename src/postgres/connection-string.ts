import { InvalidOptionError } from '../errors/governor-error.ts';
import { redact } from '../redaction/redact.ts';
import pg from './pg-module.ts';

/**
 * Refuses a connection string pg cannot parse, when the store is built: a
 * pool parses it only when it first connects, and then fails with a bare
 * "Invalid URL". A client parses it when it is built, and building one opens
 * nothing. The message never echoes the value, which may hold a password.
 *
 * @throws InvalidOptionError naming `connectionString`
 */
export function checkConnectionString(value: string): void {
  try {
    new pg.Client({ connectionString: value });
  } catch (error) {
    // Parsing also reads the certificate files an sslrootcert / sslcert / sslkey parameter names: that
    // error is the one to show (it names a file, not the string).
    if ((error as { code?: unknown } | null)?.code !== 'ERR_INVALID_URL') {
      throw new InvalidOptionError('connectionString', `could not be used: ${redact(error instanceof Error ? error.message : String(error))}`);
    }
    throw new InvalidOptionError(
      'connectionString',
      'is not a valid URL such as postgres://user:password@host:5432/database; ' +
        'percent-encode special characters (# / ? @ : %) in the user name and password',
    );
  }
}
