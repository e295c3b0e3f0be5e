import { GovernorError } from './governor-error.ts';

/**
 * Thrown when a feature needs an optional package that is not installed.
 * `packageName` is what to add: `npm install <packageName>`.
 */
export class MissingDependencyError extends GovernorError {
  declare readonly code: 'GOVERNOR_MISSING_DEPENDENCY';
  /** The npm package to install. */
  readonly packageName: string;

  constructor(packageName: string, feature: string, options?: { cause?: unknown }) {
    super('GOVERNOR_MISSING_DEPENDENCY', `${feature} needs the package "${packageName}", which is not installed. Run: npm install ${packageName}`, options);
    this.packageName = packageName;
  }
}

/**
 * Imports an optional package, or throws `MissingDependencyError` naming it.
 * Errors other than the package itself not found (a broken install, a
 * dependency of the package missing, a syntax error) pass through.
 */
export async function importOptional<T>(packageName: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (missingSpecifier(error) === packageName) throw new MissingDependencyError(packageName, feature, { cause: error });
    throw error;
  }
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
