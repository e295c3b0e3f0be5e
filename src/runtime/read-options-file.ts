import fs from 'node:fs/promises';

/** A `--config` file that cannot be read or is not a JSON object; the message names the file and what to fix. */
export class OptionsFileError extends Error {
  override readonly name = 'OptionsFileError';
}

/**
 * Reads a JSON file of options (`--config FILE`), named `shown` in errors.
 * A leading byte-order mark, which Windows editors write, is skipped.
 *
 * @throws OptionsFileError for a file that cannot be read, is not JSON, or is not an object
 */
export async function readOptionsFile(file: string, shown: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new OptionsFileError(`cannot read --config ${shown}: ${describeFsError(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (error) {
    throw new OptionsFileError(`--config ${shown} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsFileError(`--config ${shown} must contain a JSON object of breaker options`);
  }
  return value as Record<string, unknown>;
}

/** A file system error in a few words. */
export function describeFsError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return error instanceof Error ? error.message : String(error);
}
