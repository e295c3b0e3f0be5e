import { GovernorError } from './governor-error.ts';

/** Thrown when the package is loaded on a Node.js it does not support. */
export class UnsupportedRuntimeError extends GovernorError {
  declare readonly code: 'GOVERNOR_UNSUPPORTED_RUNTIME';
  /** The Node.js version found. */
  readonly nodeVersion: string;

  constructor(message: string, nodeVersion: string) {
    super('GOVERNOR_UNSUPPORTED_RUNTIME', message);
    this.nodeVersion = nodeVersion;
  }
}
