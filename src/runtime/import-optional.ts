import { MissingDependencyError } from '../errors/missing-dependency-error.ts';
import { optionalPeerMismatch } from './peer-versions.ts';

/**
 * Imports an optional package, or throws `MissingDependencyError` naming it:
 * when it is not installed, or installed at a version outside the range
 * this package declares for it (see OPTIONAL_PEERS). Other errors (a broken
 * install, a dependency of the package missing, a syntax error) pass through.
 */
export async function importOptional<T>(packageName: string, feature: string, load: () => Promise<T>, options: ImportOptionalOptions = {}): Promise<T> {
  const mismatch = optionalPeerMismatch(packageName);
  if (mismatch !== undefined) throw new MissingDependencyError(packageName, feature, mismatch);
  try {
    return await load();
  } catch (error) {
    const missing = missingSpecifier(error);
    if (missing !== undefined && (missing === packageName || options.peers?.includes(missing) === true)) {
      throw new MissingDependencyError(missing, feature, { cause: error });
    }
    throw error;
  }
}

/** Options of {@link importOptional}. */
interface ImportOptionalOptions {
  /**
   * The package's own peers, which its user installs beside it (`@langchain/core` for `langchain`): loading it
   * without one fails on a file inside it, which is reported as that peer missing.
   * @default none
   */
  readonly peers?: readonly string[];
}

/**
 * The package a "not found" error of Node's resolver names, as a package name
 * (`zod` of `zod/v4`, `@scope/pkg` of `@scope/pkg/sub`). The message also names
 * the file that imported it, which for a package missing a dependency of its
 * own lies inside the package: only the specifier tells which one is missing.
 */
function missingSpecifier(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const specifier = /Cannot find (?:package|module) '([^']+)'/.exec(String((error as Error).message))?.[1];
  if (specifier === undefined) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
