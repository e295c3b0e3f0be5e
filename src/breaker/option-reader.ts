import { InvalidOptionError } from '../errors/governor-error.ts';

/**
 * Reads one options object strictly: every value is type- and range-checked
 * and unknown keys are rejected (a misspelt option in a JSON config file must
 * not silently fall back to a default). Errors name the dotted option path.
 */
export class OptionReader {
  readonly path: string;
  private readonly value: Record<string, unknown>;

  constructor(value: unknown, path: string, allowed: readonly string[]) {
    this.path = path;
    if (value === undefined || value === null) {
      this.value = {};
      return;
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new InvalidOptionError(path || 'options', 'must be an object');
    }
    this.value = value as Record<string, unknown>;
    for (const key of Object.keys(this.value)) {
      if (!allowed.includes(key) && this.value[key] !== undefined) {
        throw new InvalidOptionError(this.name(key), `unknown option (known: ${allowed.join(', ')})`);
      }
    }
  }

  name(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }

  raw(key: string): unknown {
    return this.value[key];
  }

  bool(key: string, fallback: boolean): boolean {
    const v = this.value[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw new InvalidOptionError(this.name(key), 'must be true or false');
    return v;
  }

  number(key: string, fallback: number, range: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean }): number {
    const v = this.value[key];
    if (v === undefined) return fallback;
    return checkNumber(v, this.name(key), range);
  }

  optionalNumber(key: string, range: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean }): number | undefined {
    const v = this.value[key];
    if (v === undefined || v === null) return undefined;
    return checkNumber(v, this.name(key), range);
  }

  oneOf<T extends string>(key: string, fallback: T, values: readonly T[]): T {
    const v = this.value[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'string' || !values.includes(v as T)) {
      throw new InvalidOptionError(this.name(key), `must be one of ${values.map((x) => `'${x}'`).join(', ')}`);
    }
    return v as T;
  }

  strings(key: string, fallback: readonly string[]): readonly string[] {
    const v = this.value[key];
    if (v === undefined) return fallback;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.length === 0)) {
      throw new InvalidOptionError(this.name(key), 'must be an array of non-empty strings');
    }
    return [...(v as string[])];
  }

  record(key: string): Record<string, unknown> {
    const v = this.value[key];
    if (v === undefined) return {};
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new InvalidOptionError(this.name(key), 'must be an object keyed by name');
    }
    return v as Record<string, unknown>;
  }

  fn<T>(key: string): T | undefined {
    const v = this.value[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'function') throw new InvalidOptionError(this.name(key), 'must be a function');
    return v as T;
  }
}

function checkNumber(v: unknown, name: string, range: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean }): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidOptionError(name, 'must be a finite number');
  if (range.integer === true && !Number.isInteger(v)) throw new InvalidOptionError(name, 'must be an integer');
  if (range.min !== undefined && (range.exclusiveMin === true ? v <= range.min : v < range.min)) {
    throw new InvalidOptionError(name, `must be ${range.exclusiveMin === true ? 'greater than' : 'at least'} ${range.min}`);
  }
  if (range.max !== undefined && v > range.max) throw new InvalidOptionError(name, `must be at most ${range.max}`);
  return v;
}
