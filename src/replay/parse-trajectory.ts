import { GovernorError } from '../errors/governor-error.ts';
import type { Trajectory, TrajectoryLabel, TrajectoryStep } from './trajectory.ts';

/**
 * Why one line of a trajectory file could not be used. The message names the
 * offending field (e.g. `steps[3].tool`) so the line can be fixed.
 */
export class TrajectoryFormatError extends GovernorError {
  declare readonly code: 'GOVERNOR_TRAJECTORY_FORMAT';
  constructor(message: string) {
    super('GOVERNOR_TRAJECTORY_FORMAT', message);
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(message: string): never {
  throw new TrajectoryFormatError(message);
}

/**
 * A JSON.parse error without the excerpt of the line V8 quotes (`…, "…" is
 * not valid JSON`): the line may hold a secret, and ten characters of it
 * are enough to give one away. Where the error is stays said.
 */
function withoutExcerpt(message: string): string {
  return message.replace(/,\s*(?:\.\.\.)?".*"(?:\.\.\.)?\s+is not valid JSON$/s, ' (not valid JSON)');
}

/** Options of {@link parseTrajectory} and {@link parseTrajectoryLine}. */
export interface ParseTrajectoryOptions {
  /**
   * Called, instead of throwing, when `label` is there but is not a label:
   * the trajectory is then returned without it. For readers that use no label
   * (replay); a labelled corpus leaves it out, so that such a line is refused.
   */
  readonly onUnreadableLabel?: (problem: string) => void;
}

/**
 * Parses one line of a trajectory file. Unknown fields are ignored; fields the
 * format marks optional may be absent. Throws {@link TrajectoryFormatError}
 * naming the problem when the line is not a usable trajectory.
 */
export function parseTrajectoryLine(line: string, options: ParseTrajectoryOptions = {}): Trajectory {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    fail(`invalid JSON: ${withoutExcerpt(error instanceof Error ? error.message : String(error))}`);
  }
  return parseTrajectory(value, options);
}

/** Validates an already parsed value as a trajectory (see {@link parseTrajectoryLine}). */
export function parseTrajectory(value: unknown, options: ParseTrajectoryOptions = {}): Trajectory {
  if (!isObject(value)) fail('a trajectory must be a JSON object');
  const id = value['id'];
  if (id === undefined) fail('missing "id"');
  if (typeof id !== 'string' || id === '') fail('"id" must be a non-empty string');
  const rawSteps = value['steps'];
  if (rawSteps === undefined) fail(`trajectory ${JSON.stringify(id)}: missing "steps"`);
  if (!Array.isArray(rawSteps)) fail(`trajectory ${JSON.stringify(id)}: "steps" must be an array`);

  const steps: TrajectoryStep[] = [];
  for (let i = 0; i < rawSteps.length; i++) {
    try {
      steps.push(parseStep(rawSteps[i]));
    } catch (error) {
      if (error instanceof TrajectoryFormatError) {
        fail(`trajectory ${JSON.stringify(id)}: steps[${i}]${error.message}`);
      }
      throw error;
    }
  }

  const trajectory: {
    -readonly [K in keyof Trajectory]: Trajectory[K];
  } = { id, steps };
  const source = value['source'];
  if (typeof source === 'string') trajectory.source = source;
  const task = value['task'];
  if (typeof task === 'string') trajectory.task = task;
  if ('outcome' in value) trajectory.outcome = value['outcome'];
  const label = value['label'];
  if (label !== undefined && label !== null) {
    try {
      trajectory.label = parseLabel(label, id);
    } catch (error) {
      if (!(error instanceof TrajectoryFormatError) || options.onUnreadableLabel === undefined) throw error;
      options.onUnreadableLabel(error.message);
    }
  }
  return trajectory;
}

function optionalString(step: JsonObject, field: string, fallback: string): string {
  const value = step[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') fail(`.${field}: must be a string`);
  return value;
}

function requiredString(step: JsonObject, field: string): string {
  const value = step[field];
  if (value === undefined || value === null) fail(`.${field}: missing`);
  if (typeof value !== 'string') fail(`.${field}: must be a string`);
  return value;
}

function tokenCount(step: JsonObject, field: string): number | null {
  const value = step[field];
  if (value === undefined || value === null) return null;
  // The format says int or null: a fraction is no token count, and past 2^53 a double no longer counts exactly (1e308 sums to Infinity).
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    fail(
      `.${field}: must be a non-negative whole number (at most ${Number.MAX_SAFE_INTEGER}) or null, got ${typeof value === 'number' ? String(value) : typeof value}`,
    );
  }
  return value;
}

function parseStep(raw: unknown): TrajectoryStep {
  if (!isObject(raw)) fail(': a step must be a JSON object');
  const kind = raw['kind'];
  switch (kind) {
    case 'model':
      return {
        kind,
        prompt_tokens: tokenCount(raw, 'prompt_tokens'),
        completion_tokens: tokenCount(raw, 'completion_tokens'),
        text: optionalString(raw, 'text', ''),
      };
    case 'tool_call': {
      const tool = requiredString(raw, 'tool');
      if (tool === '') fail('.tool: must not be empty');
      const rawArgs = raw['args'];
      let args: Readonly<Record<string, unknown>> | string;
      if (rawArgs === undefined || rawArgs === null) args = {};
      else if (typeof rawArgs === 'string' || isObject(rawArgs)) args = rawArgs;
      else fail('.args: must be an object or a string');
      const result = raw['result'];
      if (result !== undefined && result !== null && typeof result !== 'string') {
        fail('.result: must be a string or null');
      }
      const error = raw['error'];
      if (error !== undefined && error !== null && typeof error !== 'boolean') fail('.error: must be a boolean');
      return {
        kind,
        tool,
        args,
        result: typeof result === 'string' ? result : null,
        ...(typeof error === 'boolean' ? { error } : {}),
      };
    }
    case 'retrieval': {
      const query = requiredString(raw, 'query');
      const results = raw['results'];
      if (results === undefined || results === null) return { kind, query };
      if (!Array.isArray(results) || !results.every((r) => typeof r === 'string')) {
        fail('.results: must be an array of strings');
      }
      return { kind, query, results: results as string[] };
    }
    case 'delegation':
      return {
        kind,
        agent: requiredString(raw, 'agent'),
        input: optionalString(raw, 'input', ''),
        output: optionalString(raw, 'output', ''),
      };
    case 'user':
      return { kind, text: optionalString(raw, 'text', '') };
    case undefined:
      return fail(': missing "kind"');
    default:
      return fail(`: unknown step kind ${JSON.stringify(kind)} (expected model, tool_call, retrieval, delegation or user)`);
  }
}

function parseLabel(raw: unknown, id: string): TrajectoryLabel {
  const where = `trajectory ${JSON.stringify(id)}: label`;
  if (!isObject(raw)) {
    const got = Array.isArray(raw) ? 'an array' : `a ${typeof raw}`;
    fail(`${where}: must be an object like {"stuck": true, "category": "tool_spiral", "first_stuck_step": 4}, got ${got}`);
  }
  const stuck = raw['stuck'];
  if (typeof stuck !== 'boolean') fail(`${where}.stuck: must be a boolean`);
  const label: { -readonly [K in keyof TrajectoryLabel]: TrajectoryLabel[K] } = { stuck };
  const category = raw['category'];
  if (typeof category === 'string') label.category = category;
  const first = raw['first_stuck_step'];
  if (first !== undefined && first !== null) {
    if (typeof first !== 'number' || !Number.isSafeInteger(first) || first < 0) {
      fail(`${where}.first_stuck_step: must be a non-negative integer`);
    }
    label.first_stuck_step = first;
  }
  return label;
}
