/**
 * Marker every Governor error carries. `Symbol.for` gives the same symbol in
 * every copy of the package, so `isInstance` works where `instanceof` does not
 * (two installed copies, bundlers, realms).
 */
const MARKER = Symbol.for('agent-governor.error');

type ErrorClass = abstract new (...args: never[]) => GovernorError;

/**
 * Base class of every error Governor throws on purpose.
 *
 * `code` is stable across releases and safe to branch on; `message` is for
 * people and may change. Test for a class with its static `isInstance`
 * (`ToolSpiralError.isInstance(e)`), which works across copies of the package.
 */
export class GovernorError extends Error {
  /** Stable, machine-readable error code, e.g. `GOVERNOR_UNSUPPORTED_MODEL`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    const lineage: string[] = [];
    for (let proto: unknown = new.target.prototype; proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
      lineage.push((proto as { constructor: { name: string } }).constructor.name);
    }
    Object.defineProperty(this, MARKER, { value: lineage, enumerable: false });
  }

  /**
   * True when `error` is an instance of the class this is called on (or of a
   * subclass), also when it was thrown by another copy of agent-governor.
   */
  static isInstance<T extends ErrorClass>(this: T, error: unknown): error is InstanceType<T> {
    if (typeof error !== 'object' || error === null) return false;
    const lineage = (error as { [MARKER]?: unknown })[MARKER];
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance is called on, by design.
    return Array.isArray(lineage) && lineage.includes(this.name);
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
