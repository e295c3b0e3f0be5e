/**
 * Marker every Governor error carries. `Symbol.for` gives the same symbol in
 * every copy of the package, so `isInstance` works where `instanceof` does not
 * (two installed copies, bundlers, realms).
 */
const MARKER = Symbol.for('agent-governor.error');

type ErrorClass = abstract new (...args: never[]) => GovernorError;

/**
 * Every `code` a {@link GovernorError} can carry. Codes are stable across
 * releases; a new one is added to this union, none is renamed. Compare
 * `error.code` with these (a misspelt code does not compile), or narrow first
 * with a class's `isInstance`, whose `code` is then the class's own.
 */
export type GovernorErrorCode =
  // Options, runtime and models
  | 'GOVERNOR_INVALID_OPTION'
  | 'GOVERNOR_UNSUPPORTED_RUNTIME'
  | 'GOVERNOR_MISSING_DEPENDENCY'
  | 'GOVERNOR_NESTING_TOO_DEEP'
  | 'GOVERNOR_UNSUPPORTED_MODEL'
  // Chat client and advisors
  | 'GOVERNOR_INVALID_REQUEST'
  | 'GOVERNOR_MODEL_STALLED'
  | 'GOVERNOR_ADVISOR_PLACEMENT'
  | 'GOVERNOR_ADVISOR_NOT_IN_CHAIN'
  | 'GOVERNOR_DUPLICATE_ADVISOR'
  | 'GOVERNOR_ADVISOR_HOOK_RESULT'
  | 'GOVERNOR_ADVISOR_RESULT'
  | 'GOVERNOR_ENTITY_PARSE'
  | 'GOVERNOR_ENTITY_PENDING'
  | 'GOVERNOR_TOOL_CALL_LIMIT'
  | 'GOVERNOR_STREAM_INCOMPLETE'
  | 'GOVERNOR_OUTPUT_VALIDATION'
  | 'GOVERNOR_INVALID_TOOL_APPROVAL'
  | 'GOVERNOR_UNANSWERED_TOOL_APPROVAL'
  | 'GOVERNOR_TOOL_TIMEOUT'
  // Agent breaker
  | 'GOVERNOR_BREAKER_TOOL_SPIRAL'
  | 'GOVERNOR_BREAKER_CYCLE'
  | 'GOVERNOR_BREAKER_ERROR_LOOP'
  | 'GOVERNOR_BREAKER_TOKEN_DRIFT'
  | 'GOVERNOR_BREAKER_RAG_FIXATION'
  | 'GOVERNOR_BREAKER_DELEGATION_LOOP'
  | 'GOVERNOR_BREAKER_TEXT_REPETITION'
  | 'GOVERNOR_BREAKER_BUDGET'
  | 'GOVERNOR_BREAKER_OPEN'
  | 'GOVERNOR_BREAKER_UNAVAILABLE'
  | 'GOVERNOR_BREAKER_STORE'
  | 'GOVERNOR_TOOL_CALL_BLOCKED'
  | 'GOVERNOR_INVALID_STATE'
  | 'GOVERNOR_INVALID_OP'
  // Chat memory
  | 'GOVERNOR_INVALID_CONVERSATION_ID'
  | 'GOVERNOR_INVALID_MESSAGE'
  | 'GOVERNOR_MESSAGE_TOO_LARGE'
  | 'GOVERNOR_MESSAGE_DECODING'
  | 'GOVERNOR_CHAT_MEMORY_STORE'
  | 'GOVERNOR_TOOL_APPROVAL_CONFLICT'
  | 'GOVERNOR_TOOL_RESULT_CONFLICT'
  | 'GOVERNOR_TOOL_RESULT_WITHOUT_CALL'
  // Retrieval
  | 'GOVERNOR_EMBEDDING_DIMENSION_MISMATCH'
  | 'GOVERNOR_INVALID_EMBEDDING'
  | 'GOVERNOR_VECTOR_STORE'
  // Harness, replay and command line
  | 'GOVERNOR_COMMAND_START_FAILED'
  | 'GOVERNOR_SANDBOX_UNAVAILABLE'
  | 'GOVERNOR_LOOP_LIMIT'
  | 'GOVERNOR_TRAJECTORY_FORMAT'
  | 'GOVERNOR_CLI_USAGE'
  | 'GOVERNOR_MODEL_SPEC'
  // MCP proxy and model proxy
  | 'GOVERNOR_MCP_UPSTREAM'
  | 'GOVERNOR_MCP_MESSAGE_TOO_LARGE'
  | 'GOVERNOR_MCP_REQUEST'
  | 'GOVERNOR_UPSTREAM_UNREACHABLE'
  // Testing helpers
  | 'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED'
  | 'GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED';

/**
 * Base class of every error Governor throws on purpose.
 *
 * `code` is stable across releases and safe to branch on; `message` is for
 * people and may change. Test for a class with its static `isInstance`
 * (`ToolSpiralError.isInstance(e)`), which works across copies of the package.
 */
export class GovernorError extends Error {
  /** Stable, machine-readable error code, e.g. `GOVERNOR_UNSUPPORTED_MODEL`. */
  readonly code: GovernorErrorCode;

  constructor(code: GovernorErrorCode, message: string, options?: { cause?: unknown }) {
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
  declare readonly code: 'GOVERNOR_INVALID_OPTION';
  /** Dotted path of the offending option, e.g. `toolSpiral.window`. */
  readonly option: string;

  constructor(option: string, problem: string) {
    super('GOVERNOR_INVALID_OPTION', `Invalid option "${option}": ${problem}`);
    this.option = option;
  }
}
