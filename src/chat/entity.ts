import type { JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, safeValidateTypes, type FlexibleSchema } from '@ai-sdk/provider-utils';
import { GovernorError } from '../errors/governor-error.ts';

/** Context key under which `.entity(schema)` publishes the expected output schema to the chain. */
export const OUTPUT_SCHEMA = 'governor.outputSchema';

/** The schema an answer must match, as a validator and as JSON Schema. */
export interface OutputSchema {
  readonly schema: FlexibleSchema<unknown>;
  readonly jsonSchema: JSONSchema7;
}

/** Thrown when an answer is not JSON matching the requested schema. */
export class EntityParseError extends GovernorError {
  /** The answer text that failed. */
  readonly text: string;
  /** Human-readable validation errors. */
  readonly errors: readonly string[];

  constructor(text: string, errors: readonly string[]) {
    super('GOVERNOR_ENTITY_PARSE', `The model's answer does not match the requested schema: ${errors.join('; ')}`);
    this.text = text;
    this.errors = errors;
  }
}

/** Builds the {@link OutputSchema} of a zod (or any AI SDK flexible) schema. */
export async function toOutputSchema(schema: FlexibleSchema<unknown>): Promise<OutputSchema> {
  return { schema, jsonSchema: await asSchema(schema).jsonSchema };
}

/** The instruction added to the system prompt when JSON output is requested. */
export function jsonInstruction(jsonSchema: JSONSchema7): string {
  return `Answer with a single JSON value that matches this JSON Schema, and nothing else (no prose, no code fences):\n${JSON.stringify(jsonSchema)}`;
}

/** Strips the code fences or prose models like to wrap JSON in. */
function extractJson(text: string): string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1] !== undefined) return fenced[1].trim();
  const trimmed = text.trim();
  const start = trimmed.search(/[[{]/);
  if (start <= 0) return trimmed;
  const end = Math.max(trimmed.lastIndexOf('}'), trimmed.lastIndexOf(']'));
  return end > start ? trimmed.slice(start, end + 1) : trimmed;
}

/** Validates an answer; returns the value or the list of problems. */
export async function validateAnswer<T>(schema: FlexibleSchema<T>, text: string): Promise<{ success: true; value: T } | { success: false; errors: string[] }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(extractJson(text));
  } catch (error) {
    return { success: false, errors: [`not valid JSON (${(error as Error).message})`] };
  }
  const result = await safeValidateTypes({ value: parsed, schema });
  if (result.success) return { success: true, value: result.value };
  return { success: false, errors: describeValidationError(result.error) };
}

function describeValidationError(error: Error): string[] {
  const cause = (error as { cause?: unknown }).cause;
  const issues = (cause as { issues?: Array<{ path?: PropertyKey[]; message?: string }> } | undefined)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    return issues.map((issue) => {
      const path = issue.path && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message ?? 'invalid'}`;
    });
  }
  return [error.message];
}

/** Parses and validates an answer, or throws {@link EntityParseError}. */
export async function parseEntity<T>(schema: FlexibleSchema<T>, text: string): Promise<T> {
  const result = await validateAnswer(schema, text);
  if (!result.success) throw new EntityParseError(text, result.errors);
  return result.value;
}
