import { InvalidOptionError } from '../errors/governor-error.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';

/** A tool call the scripted stand-in model asks for in one turn. */
export interface ScriptedToolCall {
  /** Name of the tool, as the agent registered it. */
  name: string;
  /**
   * Tool input. An object (or any non-string value) is sent as `JSON.stringify(arguments)`;
   * a string is sent exactly as given, which lets a test send arguments that are not valid JSON.
   */
  arguments: unknown;
  /**
   * Tool call id on the wire.
   * @default `call_<turn>_<position>`, unique within the server
   */
  id?: string;
}

/**
 * A web search the provider ran itself before answering (a hosted search
 * tool): a search (`query`) or a page it opened (`openPage`), one of the two.
 */
export interface ScriptedWebSearch {
  /** What was searched for. */
  query?: string;
  /**
   * Addresses the search found.
   * @default none reported, as when the request does not ask for the sources
   */
  sources?: string[];
  /**
   * The address of a page opened instead of a search: an `open_page` action
   * in a Responses answer, a `web_fetch` server tool call in a Messages answer.
   */
  openPage?: string;
  /**
   * The opened page's text, which a Messages answer reports (a Responses answer does not).
   * @default the address
   */
  pageText?: string;
}

/** Code the provider ran itself in its sandbox before answering (a hosted code execution tool). */
export interface ScriptedCodeRun {
  /** The code run: a Python program (Responses `code_interpreter_call`), a shell command (Messages `bash_code_execution`). */
  code: string;
  /**
   * What the run printed.
   * @default ''
   */
  output?: string;
  /**
   * The run's exit code. A Messages answer reports it, with `output` as
   * stderr when it is not 0. A Responses answer reports only the logs, so a
   * failed Python run's `output` should hold its traceback, as the real logs do.
   * @default 0
   */
  exitCode?: number;
}

/** How one command of a hosted shell run ended. */
export interface ScriptedShellResult {
  /**
   * What the command printed on stdout.
   * @default ''
   */
  stdout?: string;
  /**
   * What the command printed on stderr.
   * @default ''
   */
  stderr?: string;
  /**
   * The command's exit code.
   * @default 0
   */
  exitCode?: number;
  /**
   * The command ran out of time instead of exiting (`exitCode` is then not reported).
   * @default false
   */
  timedOut?: boolean;
}

/** Shell commands the provider ran itself in its own container before answering (a hosted shell). */
export interface ScriptedShellRun {
  /** The commands run, in order. */
  commands: string[];
  /**
   * How each command ended, in the order of `commands`.
   * @default each exited 0, printing nothing
   */
  results?: ScriptedShellResult[];
}

/** A tool of a remote MCP server the provider called for the model before answering (a hosted MCP tool, an MCP connector). */
export interface ScriptedMcpCall {
  /** The MCP server's label (Responses `server_label`, Messages `server_name`). */
  server: string;
  /** The tool's name on that server. */
  name: string;
  /** The tool's arguments, an object. */
  arguments: Record<string, unknown>;
  /**
   * What the tool returned.
   * @default ''
   */
  output?: string;
  /** The tool's error instead of an output: the call failed. */
  error?: string;
}

/**
 * Reasoning the model did before answering, as a model with extended
 * thinking reports it: a `thinking` block with its signature, first in a
 * Messages answer. Chat completions and Responses answers leave it out.
 */
export interface ScriptedReasoning {
  /** The reasoning text. Streamed in pieces, then its signature, when the client asks for a stream. */
  text: string;
  /**
   * The signature Anthropic puts on a thinking block, which a client must send back with the block.
   * @default `signature-<turn>`
   */
  signature?: string;
}

/** Token counts a scripted turn reports instead of the estimate. */
export interface ScriptedUsage {
  /**
   * Input tokens.
   * @default ceil(characters of the request messages / 4)
   */
  promptTokens?: number;
  /**
   * Output tokens.
   * @default ceil(characters of the response text and tool arguments / 4)
   */
  completionTokens?: number;
  /**
   * Input tokens served from the provider's prompt cache (part of `promptTokens`).
   * @default not reported
   */
  cachedTokens?: number;
}

/** An HTTP error the scripted stand-in model answers with instead of a completion. */
export interface ScriptedError {
  /** HTTP status, 400-599 (e.g. 429 or 503 to exercise retries and breakers). */
  status: number;
  /**
   * `error.message` in the OpenAI-style error body.
   * @default `Scripted stand-in error (HTTP <status>)`
   */
  message?: string;
  /**
   * `error.type` in the OpenAI-style error body.
   * @default `rate_limit_error` for 429, `server_error` for 5xx, `invalid_request_error` otherwise
   */
  type?: string;
  /**
   * Sent as the `retry-after-ms` header (and `retry-after` in whole seconds), which the
   * AI SDK's retry honours; lets rate-limit tests retry without the default backoff wait.
   * @default no retry headers
   */
  retryAfterMs?: number;
}

/**
 * One answer of the scripted stand-in model: text, tool calls, or both; or an
 * HTTP error. A turn with neither text nor tool calls answers with empty text.
 */
export interface ScriptedTurn {
  /** Reasoning before the answer (Messages answers only). */
  reasoning?: ScriptedReasoning;
  /** Assistant text. Streamed word by word when the client asks for a stream. */
  text?: string;
  /** Tool calls to request; several make a parallel tool call turn. */
  toolCalls?: ScriptedToolCall[];
  /**
   * Web searches (and pages opened) the provider ran itself before this
   * answer, in order: `web_search_call` items in a Responses answer,
   * `server_tool_use` blocks with their `web_search_tool_result` (or
   * `web_fetch_tool_result`) in a Messages answer. A chat completion
   * has no such part and leaves them out.
   */
  webSearches?: ScriptedWebSearch[];
  /**
   * Code the provider ran itself before this answer, in order, after the
   * `webSearches`: `code_interpreter_call` items in a Responses answer (their
   * logs reported when the request's `include` asks for
   * `code_interpreter_call.outputs`, as the API does), `server_tool_use`
   * blocks of `bash_code_execution` with their `bash_code_execution_tool_result`
   * in a Messages answer. A chat completion has no such part and leaves them out.
   */
  codeRuns?: ScriptedCodeRun[];
  /**
   * Remote MCP tools the provider called before this answer, in order,
   * after the `codeRuns`: `mcp_call` items in a Responses answer,
   * `mcp_tool_use` blocks with their `mcp_tool_result` in a Messages answer.
   * A chat completion has no such part and leaves them out.
   */
  mcpCalls?: ScriptedMcpCall[];
  /**
   * Shell commands the provider ran in its own container before this
   * answer, in order, after the `mcpCalls`: a `shell_call` (its environment
   * the container) and the `shell_call_output` that answers it, in a
   * Responses answer. Messages answers and chat completions leave them out.
   */
  shellRuns?: ScriptedShellRun[];
  /**
   * Reported usage; missing numbers are estimated from characters.
   * @default estimated
   */
  usage?: ScriptedUsage;
  /** Answer with this HTTP error instead of a completion (`text`/`toolCalls` are ignored). */
  error?: ScriptedError;
  /**
   * Milliseconds to wait before answering. If the client aborts meanwhile, nothing is sent.
   * @default 0
   */
  delayMs?: number;
  /**
   * Send the response headers, then nothing: the connection stays open without a
   * body until the client gives up or the server closes. Exercises stall timeouts.
   * @default false
   */
  stall?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** The fields of each scripted shape; typed so a field added to an interface must be added here too. */
type Fields<T> = { readonly [K in keyof T]-?: true };
const TURN_FIELDS: Fields<ScriptedTurn> = {
  reasoning: true,
  text: true,
  toolCalls: true,
  webSearches: true,
  codeRuns: true,
  mcpCalls: true,
  shellRuns: true,
  usage: true,
  error: true,
  delayMs: true,
  stall: true,
};
const TOOL_CALL_FIELDS: Fields<ScriptedToolCall> = { name: true, arguments: true, id: true };
const WEB_SEARCH_FIELDS: Fields<ScriptedWebSearch> = { query: true, sources: true, openPage: true, pageText: true };
const CODE_RUN_FIELDS: Fields<ScriptedCodeRun> = { code: true, output: true, exitCode: true };
const MCP_CALL_FIELDS: Fields<ScriptedMcpCall> = { server: true, name: true, arguments: true, output: true, error: true };
const SHELL_RUN_FIELDS: Fields<ScriptedShellRun> = { commands: true, results: true };
const SHELL_RESULT_FIELDS: Fields<ScriptedShellResult> = { stdout: true, stderr: true, exitCode: true, timedOut: true };
const REASONING_FIELDS: Fields<ScriptedReasoning> = { text: true, signature: true };
const USAGE_FIELDS: Fields<ScriptedUsage> = { promptTokens: true, completionTokens: true, cachedTokens: true };
const ERROR_FIELDS: Fields<ScriptedError> = { status: true, message: true, type: true, retryAfterMs: true };

/**
 * Refuses a key that is not a field of `what` (a typo such as `txt` or
 * `inputTokens` would otherwise be ignored), naming it by path.
 */
function refuseUnknownFields(value: Record<string, unknown>, option: string, fields: object, what: string): void {
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(fields, key)) {
      throw new InvalidOptionError(`${option}.${key}`, `is not a field of ${what}; its fields are: ${Object.keys(fields).join(', ')}`);
    }
  }
}

/**
 * Checks one turn's shape, so a typo in a script fails with the offending field
 * named instead of as a confusing client-side parse error: a wrong type, and a
 * key that is not a field (`script[0].txt`, `script[0].usage.inputTokens`).
 *
 * @param option dotted path used in the error, e.g. `script[2]`
 * @throws InvalidOptionError naming the first bad field
 */
export function validateScriptedTurn(turn: unknown, option: string): asserts turn is ScriptedTurn {
  if (!isRecord(turn)) throw new InvalidOptionError(option, 'a scripted turn must be an object');
  refuseUnknownFields(turn, option, TURN_FIELDS, 'ScriptedTurn');
  if (turn['text'] !== undefined && typeof turn['text'] !== 'string') {
    throw new InvalidOptionError(`${option}.text`, 'must be a string');
  }
  if (turn['delayMs'] !== undefined && !(isCount(turn['delayMs']) && (turn['delayMs'] as number) <= MAX_TIMER_MS)) {
    throw new InvalidOptionError(`${option}.delayMs`, `must be an integer from 0 to ${MAX_TIMER_MS} (the timer maximum)`);
  }
  if (turn['stall'] !== undefined && typeof turn['stall'] !== 'boolean') {
    throw new InvalidOptionError(`${option}.stall`, 'must be a boolean');
  }
  validateReasoning(turn['reasoning'], `${option}.reasoning`);
  validateToolCalls(turn['toolCalls'], `${option}.toolCalls`);
  validateWebSearches(turn['webSearches'], `${option}.webSearches`);
  validateCodeRuns(turn['codeRuns'], `${option}.codeRuns`);
  validateMcpCalls(turn['mcpCalls'], `${option}.mcpCalls`);
  validateShellRuns(turn['shellRuns'], `${option}.shellRuns`);
  validateUsage(turn['usage'], `${option}.usage`);
  validateError(turn['error'], `${option}.error`);
}

function validateReasoning(reasoning: unknown, option: string): void {
  if (reasoning === undefined) return;
  if (!isRecord(reasoning)) throw new InvalidOptionError(option, 'must be an object such as { text: "Let me think.", signature: "sig" }');
  refuseUnknownFields(reasoning, option, REASONING_FIELDS, 'ScriptedReasoning');
  if (typeof reasoning['text'] !== 'string') throw new InvalidOptionError(`${option}.text`, 'must be a string');
  if (reasoning['signature'] !== undefined && (typeof reasoning['signature'] !== 'string' || reasoning['signature'] === '')) {
    throw new InvalidOptionError(`${option}.signature`, 'must be a non-empty string');
  }
}

function validateToolCalls(toolCalls: unknown, option: string): void {
  if (toolCalls === undefined) return;
  if (!Array.isArray(toolCalls)) throw new InvalidOptionError(option, 'must be an array');
  toolCalls.forEach((call: unknown, i) => {
    if (!isRecord(call)) throw new InvalidOptionError(`${option}[${i}]`, 'must be an object');
    refuseUnknownFields(call, `${option}[${i}]`, TOOL_CALL_FIELDS, 'ScriptedToolCall');
    if (typeof call['name'] !== 'string' || call['name'].length === 0) {
      throw new InvalidOptionError(`${option}[${i}].name`, 'must be a non-empty string');
    }
    if (call['arguments'] === undefined) {
      throw new InvalidOptionError(`${option}[${i}].arguments`, 'is required (use {} for a tool without input)');
    }
    if (call['id'] !== undefined && (typeof call['id'] !== 'string' || call['id'].length === 0)) {
      throw new InvalidOptionError(`${option}[${i}].id`, 'must be a non-empty string');
    }
  });
}

function validateWebSearches(searches: unknown, option: string): void {
  if (searches === undefined) return;
  if (!Array.isArray(searches)) throw new InvalidOptionError(option, 'must be an array');
  searches.forEach((search: unknown, i) => {
    if (!isRecord(search)) throw new InvalidOptionError(`${option}[${i}]`, 'must be an object such as { query: "weather in Oslo" }');
    refuseUnknownFields(search, `${option}[${i}]`, WEB_SEARCH_FIELDS, 'ScriptedWebSearch');
    if (search['openPage'] !== undefined) {
      if (typeof search['openPage'] !== 'string' || search['openPage'] === '')
        throw new InvalidOptionError(`${option}[${i}].openPage`, 'must be an address (a non-empty string)');
      if (search['query'] !== undefined || search['sources'] !== undefined) {
        throw new InvalidOptionError(`${option}[${i}]`, 'is either a search (query, sources) or a page opened (openPage, pageText), not both');
      }
      if (search['pageText'] !== undefined && typeof search['pageText'] !== 'string')
        throw new InvalidOptionError(`${option}[${i}].pageText`, 'must be a string');
      return;
    }
    if (search['pageText'] !== undefined) throw new InvalidOptionError(`${option}[${i}].pageText`, 'needs openPage: it is the text of the page opened');
    if (typeof search['query'] !== 'string') throw new InvalidOptionError(`${option}[${i}].query`, 'must be a string (or give openPage for a page opened)');
    const sources = search['sources'];
    if (sources !== undefined && !(Array.isArray(sources) && sources.every((s) => typeof s === 'string'))) {
      throw new InvalidOptionError(`${option}[${i}].sources`, 'must be an array of addresses (strings)');
    }
  });
}

function validateCodeRuns(runs: unknown, option: string): void {
  if (runs === undefined) return;
  if (!Array.isArray(runs)) throw new InvalidOptionError(option, 'must be an array');
  runs.forEach((run: unknown, i) => {
    if (!isRecord(run)) throw new InvalidOptionError(`${option}[${i}]`, 'must be an object such as { code: "print(1)", output: "1" }');
    refuseUnknownFields(run, `${option}[${i}]`, CODE_RUN_FIELDS, 'ScriptedCodeRun');
    if (typeof run['code'] !== 'string' || run['code'] === '') throw new InvalidOptionError(`${option}[${i}].code`, 'must be a non-empty string');
    if (run['output'] !== undefined && typeof run['output'] !== 'string') throw new InvalidOptionError(`${option}[${i}].output`, 'must be a string');
    if (
      run['exitCode'] !== undefined &&
      !(typeof run['exitCode'] === 'number' && Number.isInteger(run['exitCode']) && run['exitCode'] >= 0 && run['exitCode'] <= 255)
    ) {
      throw new InvalidOptionError(`${option}[${i}].exitCode`, 'must be an integer from 0 to 255');
    }
  });
}

function validateMcpCalls(calls: unknown, option: string): void {
  if (calls === undefined) return;
  if (!Array.isArray(calls)) throw new InvalidOptionError(option, 'must be an array');
  calls.forEach((call: unknown, i) => {
    if (!isRecord(call))
      throw new InvalidOptionError(
        `${option}[${i}]`,
        'must be an object such as { server: "crm", name: "find_customer", arguments: { email: "a@b.example" } }',
      );
    refuseUnknownFields(call, `${option}[${i}]`, MCP_CALL_FIELDS, 'ScriptedMcpCall');
    for (const key of ['server', 'name']) {
      if (typeof call[key] !== 'string' || call[key] === '') throw new InvalidOptionError(`${option}[${i}].${key}`, 'must be a non-empty string');
    }
    if (!isRecord(call['arguments'])) throw new InvalidOptionError(`${option}[${i}].arguments`, 'must be an object (use {} for a tool without input)');
    for (const key of ['output', 'error']) {
      if (call[key] !== undefined && typeof call[key] !== 'string') throw new InvalidOptionError(`${option}[${i}].${key}`, 'must be a string');
    }
    if (call['output'] !== undefined && call['error'] !== undefined) {
      throw new InvalidOptionError(`${option}[${i}]`, 'has either an output or an error, not both');
    }
  });
}

function validateShellRuns(runs: unknown, option: string): void {
  if (runs === undefined) return;
  if (!Array.isArray(runs)) throw new InvalidOptionError(option, 'must be an array');
  runs.forEach((run: unknown, i) => {
    if (!isRecord(run)) throw new InvalidOptionError(`${option}[${i}]`, 'must be an object such as { commands: ["npm test"] }');
    refuseUnknownFields(run, `${option}[${i}]`, SHELL_RUN_FIELDS, 'ScriptedShellRun');
    const commands = run['commands'];
    if (!Array.isArray(commands) || commands.length === 0 || !commands.every((c) => typeof c === 'string' && c !== '')) {
      throw new InvalidOptionError(`${option}[${i}].commands`, 'must be a non-empty array of commands (non-empty strings)');
    }
    const results = run['results'];
    if (results === undefined) return;
    if (!Array.isArray(results) || results.length !== commands.length) {
      throw new InvalidOptionError(`${option}[${i}].results`, 'must be an array with one result per command');
    }
    results.forEach((result: unknown, j) => {
      const at = `${option}[${i}].results[${j}]`;
      if (!isRecord(result)) throw new InvalidOptionError(at, 'must be an object such as { stdout: "ok", exitCode: 0 }');
      refuseUnknownFields(result, at, SHELL_RESULT_FIELDS, 'ScriptedShellResult');
      for (const key of ['stdout', 'stderr']) {
        if (result[key] !== undefined && typeof result[key] !== 'string') throw new InvalidOptionError(`${at}.${key}`, 'must be a string');
      }
      const exit = result['exitCode'];
      if (exit !== undefined && !(typeof exit === 'number' && Number.isInteger(exit) && exit >= 0 && exit <= 255)) {
        throw new InvalidOptionError(`${at}.exitCode`, 'must be an integer from 0 to 255');
      }
      if (result['timedOut'] !== undefined && typeof result['timedOut'] !== 'boolean') throw new InvalidOptionError(`${at}.timedOut`, 'must be a boolean');
      if (result['timedOut'] === true && exit !== undefined) throw new InvalidOptionError(at, 'either timed out or exited with a code, not both');
    });
  });
}

function validateUsage(usage: unknown, option: string): void {
  if (usage === undefined) return;
  if (!isRecord(usage)) throw new InvalidOptionError(option, 'must be an object');
  refuseUnknownFields(usage, option, USAGE_FIELDS, 'ScriptedUsage');
  for (const key of ['promptTokens', 'completionTokens', 'cachedTokens']) {
    if (usage[key] !== undefined && !isCount(usage[key])) {
      throw new InvalidOptionError(`${option}.${key}`, 'must be a non-negative integer');
    }
  }
}

function validateError(error: unknown, option: string): void {
  if (error === undefined) return;
  if (!isRecord(error)) throw new InvalidOptionError(option, 'must be an object');
  refuseUnknownFields(error, option, ERROR_FIELDS, 'ScriptedError');
  const status = error['status'];
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    throw new InvalidOptionError(`${option}.status`, 'must be an HTTP error status between 400 and 599');
  }
  for (const key of ['message', 'type']) {
    if (error[key] !== undefined && typeof error[key] !== 'string') {
      throw new InvalidOptionError(`${option}.${key}`, 'must be a string');
    }
  }
  if (error['retryAfterMs'] !== undefined && !(isCount(error['retryAfterMs']) && (error['retryAfterMs'] as number) <= MAX_TIMER_MS)) {
    throw new InvalidOptionError(`${option}.retryAfterMs`, `must be an integer from 0 to ${MAX_TIMER_MS} (the timer maximum)`);
  }
}
