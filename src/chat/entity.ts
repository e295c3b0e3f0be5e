import type { JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, getErrorMessage, safeValidateTypes, type FlexibleSchema } from '@ai-sdk/provider-utils';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { bracketed, fencedBlocks, syntaxProblem, trim } from './answer-json.ts';
import type { AdvisorContext } from './advisor-context.ts';
import type { ChatResponse } from './chat-response.ts';

/** Context key under which `.entity(schema)` publishes the expected output schema to the chain. */
export const OUTPUT_SCHEMA = 'governor.outputSchema';

/** The schema an answer must match, as a validator and as JSON Schema. */
export interface OutputSchema {
  readonly schema: FlexibleSchema<unknown>;
  readonly jsonSchema: JSONSchema7;
}

/** Thrown when an answer is not JSON matching the requested schema. */
export class EntityParseError extends GovernorError {
  declare readonly code: 'GOVERNOR_ENTITY_PARSE';
  /** The answer text that failed. */
  readonly text: string;
  /**
   * What is wrong, for people: where the JSON breaks (line and column) or
   * which fields do not match, never the answer's own text. At most 20
   * issues, then how many more there are.
   */
  readonly errors: readonly string[];
  /**
   * The call's response, when the answer came from a `ChatClient` call: its
   * usage (the spend), rounds and messages. Not enumerable: the messages hold
   * what tools returned, which a logged error must not print.
   */
  declare readonly response: ChatResponse | undefined;

  constructor(text: string, errors: readonly string[], response?: ChatResponse) {
    super('GOVERNOR_ENTITY_PARSE', `The model's answer does not match the requested schema: ${errors.join('; ')}`);
    this.text = text;
    this.errors = errors;
    hidden(this, 'response', response);
  }
}

/**
 * Thrown by `.entity(schema)` when the call ended before the model answered:
 * its tool loop stopped at calls that wait for the caller, tool approvals
 * (`pendingApprovals`) or calls of tools without `execute` (`toolCalls`).
 * There is no answer to parse yet; `response` holds what is needed to go on
 * (its `messages`, the approvals to answer, the calls to run), as
 * `chatResponse()` would have returned it. Tools of the round that needed
 * neither have run, and their results are in `messages`.
 */
export class EntityPendingError extends GovernorError {
  declare readonly code: 'GOVERNOR_ENTITY_PENDING';
  /**
   * The call's response: send its `messages` back with the answers, then ask
   * for the entity again. Not enumerable: the messages hold what tools
   * returned, which a logged error must not print.
   */
  declare readonly response: ChatResponse;

  constructor(response: ChatResponse) {
    const waiting = [
      ...(response.pendingApprovals?.length
        ? [`${count(response.pendingApprovals.length, 'tool call')} waiting for approval (${names(response.pendingApprovals.map((p) => p.toolCall.toolName))})`]
        : []),
      ...(response.toolCalls.length > 0
        ? [`${count(response.toolCalls.length, 'tool call')} for the caller to run (${names(response.toolCalls.map((c) => c.toolName))})`]
        : []),
    ];
    super(
      'GOVERNOR_ENTITY_PENDING',
      `The call ended before the model answered, so there is no entity to parse: ${waiting.join(' and ')}. ` +
        'error.response holds them with the messages of the call: send those back with the answers or results, and ask for the entity again.',
    );
    hidden(this, 'response', response);
  }
}

/** Sets `value` as a property that logging (`console.error`, `JSON.stringify`) does not show. */
function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: false, writable: false, configurable: true });
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function names(tools: readonly string[]): string {
  return [...new Set(tools)].join(', ');
}

/** Whether a call's response ended at calls that wait for the caller, with no answer to parse. */
export function isPending(response: ChatResponse): boolean {
  return (response.pendingApprovals?.length ?? 0) > 0 || response.toolCalls.length > 0;
}

/**
 * Builds the {@link OutputSchema} of a zod (or any AI SDK flexible) schema.
 * A zod schema is converted at once, so a bad one throws here, before any
 * model call.
 *
 * @param option what the schema was given as, for the error
 * @throws InvalidOptionError naming `option` when the schema has no JSON Schema form (z.date(), z.bigint(), …)
 */
export function toOutputSchema(schema: FlexibleSchema<unknown>, option = 'entity(schema)'): Promise<OutputSchema> {
  const refuse = (error: unknown): never => {
    throw new InvalidOptionError(
      option,
      `cannot be written as the JSON Schema the model is asked to follow (${getErrorMessage(error)}); use types JSON can carry: z.iso.datetime() for a date, a string or number for a bigint, an object or array for a map or set, and no z.custom() or z.symbol()`,
    );
  };
  let jsonSchema: JSONSchema7 | PromiseLike<JSONSchema7>;
  try {
    jsonSchema = asSchema(schema).jsonSchema;
  } catch (error) {
    return refuse(error);
  }
  return Promise.resolve(jsonSchema).then((resolved) => ({ schema, jsonSchema: resolved }), refuse);
}

/** The instruction added to the system prompt when JSON output is requested. */
export function jsonInstruction(jsonSchema: JSONSchema7): string {
  return `Answer with a single JSON value that matches this JSON Schema, and nothing else (no prose, no code fences):\n${JSON.stringify(jsonSchema)}`;
}

/** Most issues an error or a re-ask lists; a huge invalid answer would otherwise make a message of megabytes. */
const MAX_LISTED_ISSUES = 20;

/** Why an answer failed: `errors` for people (no text of the answer), `feedback` for the model (its own text may be quoted). */
export interface AnswerProblems {
  readonly success: false;
  readonly errors: string[];
  readonly feedback: string[];
}

/** Most fenced blocks, and most bracketed stretches, tried (the last ones): an answer of thousands of `[1]` must not take seconds. */
const MAX_TRIED = 16;

/**
 * Validates an answer; returns the value or the list of problems. The JSON
 * is looked for, in this order: the whole answer; the content of each fenced
 * block (any language tag), last first, as models show an example before
 * their answer; each outermost bracketed stretch of prose, last first (of
 * both, the last {@link MAX_TRIED}). The first that parses and matches the
 * schema is the value.
 */
export async function validateAnswer<T>(schema: FlexibleSchema<T>, text: string): Promise<{ success: true; value: T } | AnswerProblems> {
  const whole = trim(text, { start: 0, end: text.length });
  const fences = fencedBlocks(text);
  const tried = new Set<string>();
  let mismatch: { errors: string[]; feedback: string[] } | undefined;
  for (const span of [whole, ...fences.slice(-MAX_TRIED).toReversed(), ...bracketed(text).slice(-MAX_TRIED).toReversed()]) {
    const key = `${span.start}:${span.end}`;
    if (tried.has(key)) continue;
    tried.add(key);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.slice(span.start, span.end));
    } catch {
      continue;
    }
    const result = await safeValidateTypes({ value: parsed, schema });
    if (result.success) return { success: true, value: result.value };
    mismatch ??= { errors: describeValidationError(result.error, false), feedback: describeValidationError(result.error, true) };
  }
  if (mismatch !== undefined) return { success: false, ...mismatch };
  // What the model meant as its answer: its (last) fenced block, or else the whole text.
  const meant = fences.at(-1) ?? whole;
  const where = syntaxProblem(text, meant);
  let detail = '';
  try {
    JSON.parse(text.slice(meant.start, meant.end));
  } catch (error) {
    // The engine's message quotes the text around the spot: fine for the model, which wrote it, not for a log.
    detail = ` (${getErrorMessage(error)})`;
  }
  const error = where === undefined ? 'not valid JSON' : `not valid JSON: ${where}`;
  return { success: false, errors: [error], feedback: [error + detail] };
}

/**
 * The schema's issues, at most {@link MAX_LISTED_ISSUES} of them, then how
 * many more there are. `quoting`: for the model, which wrote the answer, keys
 * the schema does not know are named (zod's message lists them); for people,
 * only counted, as they are the answer's own text.
 */
function describeValidationError(error: Error, quoting: boolean): string[] {
  const cause = (error as { cause?: unknown }).cause;
  // A zod error carries `issues`; a Standard Schema's failure is its issues themselves.
  const issues = Array.isArray(cause) ? cause : (cause as { issues?: unknown } | undefined)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const listed = (issues.slice(0, MAX_LISTED_ISSUES) as Array<{ path?: unknown[]; message?: string; code?: unknown; keys?: unknown }>).map((issue) => {
      const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.map(pathSegment).join('.') : '(root)';
      if (!quoting && issue.code === 'unrecognized_keys' && Array.isArray(issue.keys)) {
        return `${path}: ${issue.keys.length} key${issue.keys.length === 1 ? '' : 's'} the schema does not allow`;
      }
      return `${path}: ${issue.message ?? 'invalid'}`;
    });
    return issues.length > MAX_LISTED_ISSUES ? [...listed, `and ${issues.length - MAX_LISTED_ISSUES} more issues`] : listed;
  }
  // Not the error's own message: the AI SDK's quotes the whole value.
  return [cause instanceof Error ? cause.message : 'the value does not match the schema'];
}

function pathSegment(segment: unknown): string {
  return String(typeof segment === 'object' && segment !== null && 'key' in segment ? segment.key : segment);
}

/** Context key of the answer a validating advisor parsed, so that `.entity()` need not parse it again. */
const VALIDATED_ANSWER = 'governor.validatedAnswer';

interface ValidatedAnswer {
  readonly output: OutputSchema;
  readonly text: string;
  readonly value: unknown;
}

/** Notes in the call's context that `text` parsed as `value` against `output`. */
export function noteValidated(context: AdvisorContext, output: OutputSchema, text: string, value: unknown): void {
  context.set(VALIDATED_ANSWER, { output, text, value } satisfies ValidatedAnswer);
}

/** The value noted for exactly this schema and answer text, if any (an advisor after the validator may change the text). */
export function validatedAnswer(context: AdvisorContext, output: OutputSchema, text: string): { readonly value: unknown } | undefined {
  const noted = context.get(VALIDATED_ANSWER) as ValidatedAnswer | undefined;
  return noted !== undefined && noted.output === output && noted.text === text ? noted : undefined;
}

/** Parses and validates an answer, or throws {@link EntityParseError} (carrying `response`, the call's, when given). */
export async function parseEntity<T>(schema: FlexibleSchema<T>, text: string, response?: ChatResponse): Promise<T> {
  const result = await validateAnswer(schema, text);
  if (!result.success) throw new EntityParseError(text, result.errors, response);
  return result.value;
}
