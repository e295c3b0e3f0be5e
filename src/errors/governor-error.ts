/**
 * Base class of every error Governor throws on purpose.
 *
 * `code` is stable across releases and safe to branch on; `message` is for
 * people and may change.
 */
export class GovernorError extends Error {
  /** Stable, machine-readable error code, e.g. `GOVERNOR_UNSUPPORTED_MODEL`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Thrown when an options object or argument is invalid; `option` names the culprit. */
export class InvalidOptionError extends GovernorError {
  /** Dotted path of the offending option, e.g. `toolSpiral.window`. */
  readonly option: string;

  constructor(option: string, problem: string) {
    super('GOVERNOR_INVALID_OPTION', `Invalid option "${option}": ${problem}`);
    this.option = option;
  }
}
