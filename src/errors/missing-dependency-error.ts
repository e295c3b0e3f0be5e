import { GovernorError } from './governor-error.ts';

/**
 * Thrown when a feature needs an optional package that is not installed.
 * `packageName` is what to add: `npm install <packageName>`.
 */
export class MissingDependencyError extends GovernorError {
  /** The npm package to install. */
  readonly packageName: string;

  constructor(packageName: string, feature: string, options?: { cause?: unknown }) {
    super('GOVERNOR_MISSING_DEPENDENCY', `${feature} needs the package "${packageName}", which is not installed. Run: npm install ${packageName}`, options);
    this.packageName = packageName;
  }
}

/**
 * Imports an optional package, or throws `MissingDependencyError` naming it.
 * Errors other than "not found" (a broken install, a syntax error) pass through.
 */
export async function importOptional<T>(packageName: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(packageName)) {
      throw new MissingDependencyError(packageName, feature, { cause: error });
    }
    throw error;
  }
}
