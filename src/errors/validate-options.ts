import { InvalidOptionError } from './governor-error.ts';
import { redact } from '../redaction/redact.ts';

/**
 * Checks one option's value; throws {@link InvalidOptionError} naming `path`
 * and what is accepted. Only called for values that are not `undefined`.
 */
export type OptionRule = (value: unknown, path: string) => void;

/** A rule for every key of an options type, so a new option cannot be added without one. */
export type OptionRules<T> = { readonly [K in keyof T]-?: OptionRule };

/** The longest delay `setTimeout` keeps (2³¹−1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A short, safe rendering of a bad value for an error message (never the whole value). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    // A key pasted into the wrong option must not come back in the error that names it.
    const shown = redact(value);
    return JSON.stringify(shown.length > 40 ? `${shown.slice(0, 40)}…` : shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined) return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function fail(path: string, accepted: string, value: unknown): never {
  throw new InvalidOptionError(path, `must be ${accepted}, got ${describeValue(value)}`);
}

/**
 * Validates an options object at construction: rejects a non-object, unknown
 * keys (a typo would otherwise be ignored silently), missing `required` keys,
 * and every value its rule refuses.
 *
 * @param owner what the options configure, e.g. `AgentLoop`, used in messages
 * @param prefix dotted path in front of every key, for nested options
 */
export function validateOptions<T extends object>(
  owner: string,
  options: T | undefined,
  rules: OptionRules<T>,
  { required = [], prefix = '' }: { readonly required?: readonly (keyof T & string)[]; readonly prefix?: string } = {},
): void {
  const at = (key: string): string => (prefix === '' ? key : `${prefix}.${key}`);
  if (options === undefined && required.length === 0) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(prefix === '' ? 'options' : prefix, `the options of ${owner} must be an object, got ${describeValue(options)}`);
  }
  const known = Object.keys(rules);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(rules, key)) {
      throw new InvalidOptionError(at(key), `is not an option of ${owner}; its options are: ${known.join(', ')}`);
    }
  }
  for (const key of required) {
    if ((options as Record<string, unknown>)[key] === undefined) throw new InvalidOptionError(at(key), `is required by ${owner}`);
  }
  for (const key of known) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) (rules as Record<string, OptionRule>)[key]!(value, at(key));
  }
}

/** Rules for common option shapes. */
export const is = {
  /** Anything: for options whose type is checked elsewhere (a client, a model). */
  any: (): OptionRule => () => {},

  /** An integer from `min` to `max`. */
  integer:
    (min: number, max = Number.MAX_SAFE_INTEGER): OptionRule =>
    (value, path) => {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        fail(path, max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`, value);
      }
    },

  /** A finite number from `min` to `max`; `exclusiveMin` excludes `min` itself. */
  number:
    (min: number, max = Number.MAX_VALUE, { exclusiveMin = false }: { exclusiveMin?: boolean } = {}): OptionRule =>
    (value, path) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min || (exclusiveMin && value === min) || value > max) {
        const low = exclusiveMin ? `greater than ${min}` : `at least ${min}`;
        fail(path, max === Number.MAX_VALUE ? `a finite number ${low}` : `a number ${low} and at most ${max}`, value);
      }
    },

  /** Milliseconds usable as a timer: `min` (default 1) to {@link MAX_TIMER_MS}; never overflows `setTimeout`. */
  timeMs:
    (min = 1): OptionRule =>
    (value, path) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
        fail(path, `a number of milliseconds from ${min} to ${MAX_TIMER_MS} (about 24.8 days)`, value);
      }
    },

  /** A string; `nonEmpty` refuses `''` and whitespace. */
  string:
    ({ nonEmpty = false }: { nonEmpty?: boolean } = {}): OptionRule =>
    (value, path) => {
      if (typeof value !== 'string' || (nonEmpty && value.trim() === '')) fail(path, nonEmpty ? 'a non-empty string' : 'a string', value);
    },

  boolean: (): OptionRule => (value, path) => {
    if (typeof value !== 'boolean') fail(path, 'true or false', value);
  },

  function: (): OptionRule => (value, path) => {
    if (typeof value !== 'function') fail(path, 'a function', value);
  },

  /** A plain object (not an array, not null). */
  object: (): OptionRule => (value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
  },

  /** One of the listed literal values. */
  oneOf:
    (...allowed: readonly unknown[]): OptionRule =>
    (value, path) => {
      if (!allowed.includes(value)) fail(path, `one of ${allowed.map((a) => describeValue(a)).join(', ')}`, value);
    },

  /** An object with the given method(s), e.g. an AbortSignal or a store. */
  having:
    (what: string, ...members: readonly string[]): OptionRule =>
    (value, path) => {
      if (typeof value !== 'object' || value === null || members.some((m) => !(m in value))) fail(path, what, value);
    },

  /** An array whose every item passes `item`. */
  arrayOf:
    (item: OptionRule): OptionRule =>
    (value, path) => {
      if (!Array.isArray(value)) fail(path, 'an array', value);
      for (const [i, v] of value.entries()) item(v, `${path}[${i}]`);
    },

  /** An object whose every value passes `item`. */
  recordOf:
    (item: OptionRule): OptionRule =>
    (value, path) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
      for (const [key, v] of Object.entries(value)) item(v, `${path}.${key}`);
    },

  /**
   * Passes when any of `rules` passes; the message lists what is accepted.
   * When a shape matched but one of its members is wrong (the refusal names a
   * path inside `path`), that refusal is the one thrown, naming the member.
   */
  either:
    (accepted: string, ...rules: readonly OptionRule[]): OptionRule =>
    (value, path) => {
      let inner: InvalidOptionError | undefined;
      for (const rule of rules) {
        try {
          rule(value, path);
          return;
        } catch (error) {
          if (inner === undefined && InvalidOptionError.isInstance(error) && error.option !== path) inner = error;
        }
      }
      if (inner !== undefined) throw inner;
      fail(path, accepted, value);
    },
} as const;
