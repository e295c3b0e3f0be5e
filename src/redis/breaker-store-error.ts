import { GovernorError } from '../errors/governor-error.ts';

/**
 * A Redis operation failed (connection lost, timeout, server error). The
 * breaker decides whether that fails open or closed; the message never holds
 * credentials.
 */
export class BreakerStoreError extends GovernorError {
  declare readonly code: 'GOVERNOR_BREAKER_STORE';
  /** Which store operation failed: `read`, `apply`, `delete`, `listOpen`, `ping`, `addSteers`, `takeSteers`, `claimFirst`, `addAlias`, `sessionOfAlias`, `putNote`, `readNote` or `restore` (writing back a session the server forgot). */
  readonly operation: string;

  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super('GOVERNOR_BREAKER_STORE', `Breaker store ${operation} failed: ${message}`, options);
    this.operation = operation;
  }
}
