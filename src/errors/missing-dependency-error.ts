import { GovernorError } from './governor-error.ts';

/**
 * Thrown when a feature needs an optional package that is not installed.
 * `packageName` is what to add: `npm install <packageName>`.
 */
export class MissingDependencyError extends GovernorError {
  declare readonly code: 'GOVERNOR_MISSING_DEPENDENCY';
  /** The npm package to install. */
  readonly packageName: string;
  /** The version installed, when it is one the feature cannot use (too old, another major). */
  readonly installedVersion: string | undefined;

  /** @param options.needs the versions the feature needs (`^1.32.0`), with `installed`: the one there, which it cannot use */
  constructor(packageName: string, feature: string, options?: { cause?: unknown; needs?: string; installed?: string }) {
    const spec = options?.needs === undefined ? packageName : `${packageName}@${options.needs}`;
    super(
      'GOVERNOR_MISSING_DEPENDENCY',
      options?.installed === undefined
        ? `${feature} needs the package "${packageName}", which is not installed. Run: npm install ${spec}`
        : `${feature} needs the package "${packageName}" ${options.needs}, and ${options.installed} is installed. Run: npm install ${spec}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.packageName = packageName;
    this.installedVersion = options?.installed;
  }
}
