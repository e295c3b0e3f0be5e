import type { DocumentMetadata, MetadataValue } from './document.ts';
import { InvalidMetadataFilterError } from './retrieval-errors.ts';

/** A value a filter compares a metadata field with. */
export type FilterScalar = string | number | boolean | null;

/** A value a range operator (`$gt`, `$gte`, `$lt`, `$lte`) compares with. */
export type FilterRangeOperand = string | number;

/**
 * Operators on one metadata field; several in one object must all hold.
 *
 * - `$eq` / `$ne`: the field equals / does not equal the value. `$ne` also
 *   matches documents that lack the field.
 * - `$in` / `$nin`: the field equals one / none of the values. `$nin` also
 *   matches documents that lack the field.
 * - `$gt`, `$gte`, `$lt`, `$lte`: numbers compare with numbers, strings with
 *   strings (by Unicode code point, so ISO-8601 dates order correctly). A
 *   field of another type, or a missing field, never matches.
 */
export interface FieldOperators {
  readonly $eq?: FilterScalar;
  readonly $ne?: FilterScalar;
  readonly $in?: readonly FilterScalar[];
  readonly $nin?: readonly FilterScalar[];
  readonly $gt?: FilterRangeOperand;
  readonly $gte?: FilterRangeOperand;
  readonly $lt?: FilterRangeOperand;
  readonly $lte?: FilterRangeOperand;
}

/** A bare value means equality (`{ genre: 'jazz' }`); an object applies operators. */
export type FieldCondition = FilterScalar | FieldOperators;

/**
 * Selects documents by their metadata. Every store applies it with the same
 * meaning (in memory, or in SQL for PostgreSQL).
 *
 * Keys name metadata fields; a dotted key (`author.name`) reaches into nested
 * objects. Each key segment starts with a letter or `_` and holds letters,
 * digits, marks, `_` or `-`. Several keys in one object must all match;
 * `$and` / `$or` combine whole filters (an empty `$and` matches everything,
 * an empty `$or` nothing). Equality is exact JSON equality on scalars: a
 * field holding an array or object never equals a scalar, and `'2020'` is not
 * `2020`.
 *
 * A key whose value is `undefined` is rejected rather than ignored, so that
 * `{ tenant: maybeMissing }` can never silently widen a search.
 *
 * @example
 * { $or: [{ genre: 'jazz' }, { year: { $gte: 2000, $lt: 2010 } }], 'author.country': { $in: ['JP', 'KR'] } }
 */
export type MetadataFilter = {
  readonly $and?: readonly MetadataFilter[];
  readonly $or?: readonly MetadataFilter[];
  readonly [key: string]: FieldCondition | readonly MetadataFilter[] | undefined;
};

/** Comparison of one field, after validation. */
export type FieldTest =
  | { readonly kind: 'field'; readonly path: readonly string[]; readonly op: 'eq' | 'ne'; readonly operand: FilterScalar }
  | { readonly kind: 'field'; readonly path: readonly string[]; readonly op: 'in' | 'nin'; readonly operand: readonly FilterScalar[] }
  | {
      readonly kind: 'field';
      readonly path: readonly string[];
      readonly op: 'gt' | 'gte' | 'lt' | 'lte';
      readonly operand: FilterRangeOperand;
    };

/**
 * A validated filter. Stores evaluate this tree rather than the user's
 * object, so that every store sees exactly the same, already-checked shape.
 */
export type FilterNode =
  | { readonly kind: 'all'; readonly children: readonly FilterNode[] }
  | { readonly kind: 'any'; readonly children: readonly FilterNode[] }
  | FieldTest;

/** Deeper filters are rejected: no sensible filter nests this far, a hostile one might. */
const MAX_DEPTH = 32;
const MAX_KEY_LENGTH = 256;
const KEY_SEGMENT = /^[\p{L}_][\p{L}\p{N}\p{M}_-]*$/u;

const FIELD_OPERATORS = {
  $eq: 'eq',
  $ne: 'ne',
  $in: 'in',
  $nin: 'nin',
  $gt: 'gt',
  $gte: 'gte',
  $lt: 'lt',
  $lte: 'lte',
} as const;

/**
 * Validates a filter and turns it into a {@link FilterNode}.
 *
 * @param option - where the filter came from, used in error messages.
 * @throws InvalidMetadataFilterError naming the offending part.
 */
export function parseMetadataFilter(filter: unknown, option = 'filter'): FilterNode {
  return parseFilter(filter, option, 0);
}

/** Whether `metadata` satisfies `filter`, with the same meaning every store applies. */
export function matchesMetadataFilter(filter: MetadataFilter, metadata: DocumentMetadata): boolean {
  return evaluateFilter(parseMetadataFilter(filter), metadata);
}

/** Evaluates an already validated filter against one document's metadata. */
export function evaluateFilter(node: FilterNode, metadata: DocumentMetadata): boolean {
  switch (node.kind) {
    case 'all':
      return node.children.every((child) => evaluateFilter(child, metadata));
    case 'any':
      return node.children.some((child) => evaluateFilter(child, metadata));
    case 'field':
      return evaluateField(node, valueAt(metadata, node.path));
  }
}

function parseFilter(filter: unknown, option: string, depth: number): FilterNode {
  if (depth > MAX_DEPTH) {
    throw new InvalidMetadataFilterError(option, `filters may nest at most ${MAX_DEPTH} levels deep`);
  }
  if (!isPlainObject(filter)) {
    throw new InvalidMetadataFilterError(option, `expected a filter object, got ${describe(filter)}`);
  }
  const children: FilterNode[] = [];
  for (const [key, value] of Object.entries(filter)) {
    const where = `${option}.${key}`;
    if (value === undefined) {
      throw new InvalidMetadataFilterError(where, 'is undefined; remove the key or give it a value');
    }
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value)) {
        throw new InvalidMetadataFilterError(where, `expected an array of filters, got ${describe(value)}`);
      }
      const parts = value.map((part, index) => parseFilter(part, `${where}[${index}]`, depth + 1));
      children.push({ kind: key === '$and' ? 'all' : 'any', children: parts });
      continue;
    }
    if (key.startsWith('$')) {
      throw new InvalidMetadataFilterError(where, `unknown combinator "${key}"; use $and or $or, or put field operators under a field key`);
    }
    children.push(...parseField(parseKey(key, where), value, where));
  }
  return children.length === 1 && children[0] !== undefined ? children[0] : { kind: 'all', children };
}

function parseKey(key: string, where: string): string[] {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new InvalidMetadataFilterError(where, `a key must have 1 to ${MAX_KEY_LENGTH} characters`);
  }
  const path = key.split('.');
  for (const segment of path) {
    if (!KEY_SEGMENT.test(segment)) {
      throw new InvalidMetadataFilterError(
        where,
        `"${segment}" is not a metadata key: each dot-separated part must start with a letter or "_" ` + 'and hold only letters, digits, "_" or "-"',
      );
    }
  }
  return path;
}

function parseField(path: string[], condition: unknown, where: string): FieldTest[] {
  if (isScalar(condition)) {
    return [{ kind: 'field', path, op: 'eq', operand: checkScalar(condition, where) }];
  }
  if (Array.isArray(condition)) {
    throw new InvalidMetadataFilterError(where, 'an array is not a condition; to match any of several values use { $in: [...] }');
  }
  if (!isPlainObject(condition)) {
    throw new InvalidMetadataFilterError(where, `expected a value or an operator object, got ${describe(condition)}`);
  }
  const entries = Object.entries(condition);
  if (entries.length === 0) {
    throw new InvalidMetadataFilterError(where, 'an operator object needs at least one operator');
  }
  return entries.map(([operator, operand]): FieldTest => {
    const at = `${where}.${operator}`;
    if (!Object.hasOwn(FIELD_OPERATORS, operator)) {
      throw new InvalidMetadataFilterError(at, `unknown operator; supported: ${Object.keys(FIELD_OPERATORS).join(', ')}`);
    }
    const op = FIELD_OPERATORS[operator as keyof typeof FIELD_OPERATORS];
    switch (op) {
      case 'eq':
      case 'ne':
        if (!isScalar(operand)) {
          throw new InvalidMetadataFilterError(at, `expected a string, number, boolean or null, got ${describe(operand)}`);
        }
        return { kind: 'field', path, op, operand: checkScalar(operand, at) };
      case 'in':
      case 'nin':
        if (!Array.isArray(operand)) {
          throw new InvalidMetadataFilterError(at, `expected an array of values, got ${describe(operand)}`);
        }
        return {
          kind: 'field',
          path,
          op,
          operand: operand.map((item: unknown, index) => {
            if (!isScalar(item)) {
              throw new InvalidMetadataFilterError(`${at}[${index}]`, `expected a string, number, boolean or null, got ${describe(item)}`);
            }
            return checkScalar(item, `${at}[${index}]`);
          }),
        };
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        if (typeof operand !== 'string' && typeof operand !== 'number') {
          throw new InvalidMetadataFilterError(at, `expected a number or a string, got ${describe(operand)}`);
        }
        return { kind: 'field', path, op, operand: checkScalar(operand, at) as FilterRangeOperand };
      default:
        return op satisfies never;
    }
  });
}

function checkScalar(value: FilterScalar, where: string): FilterScalar {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new InvalidMetadataFilterError(where, `${value} cannot be stored in JSON metadata; use a finite number`);
  }
  // Stores reject these strings in documents, so no document can match them;
  // PostgreSQL would fail on them with a raw error instead of matching nothing.
  const problem = typeof value === 'string' ? storableStringProblem(value) : undefined;
  if (problem !== undefined) throw new InvalidMetadataFilterError(where, problem);
  return value;
}

/**
 * Why a store cannot keep `value` as it is, or `undefined` when it can. Every
 * store refuses such strings, so every store accepts exactly the same
 * documents and filters: PostgreSQL refuses U+0000 in text and jsonb, and the
 * driver rewrites a lone UTF-16 surrogate (what `.slice()` leaves of a split
 * emoji) to U+FFFD, so two distinct ids would become one row.
 */
export function storableStringProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains the character U+0000, which PostgreSQL cannot store; remove it';
  if (!value.isWellFormed()) {
    return 'contains a lone UTF-16 surrogate (often half of an emoji cut by slicing a string), which PostgreSQL cannot store; repair it, e.g. with toWellFormed()';
  }
  return undefined;
}

function valueAt(metadata: DocumentMetadata, path: readonly string[]): MetadataValue | undefined {
  let current: MetadataValue | undefined = metadata;
  for (const segment of path) {
    if (!isPlainObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, MetadataValue>)[segment];
  }
  return current;
}

function evaluateField(test: FieldTest, value: MetadataValue | undefined): boolean {
  switch (test.op) {
    case 'eq':
      return scalarEquals(value, test.operand);
    case 'ne':
      return !scalarEquals(value, test.operand);
    case 'in':
      return test.operand.some((operand) => scalarEquals(value, operand));
    case 'nin':
      return !test.operand.some((operand) => scalarEquals(value, operand));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const order = compareSameType(value, test.operand);
      if (order === undefined) return false;
      if (test.op === 'gt') return order > 0;
      if (test.op === 'gte') return order >= 0;
      if (test.op === 'lt') return order < 0;
      return order <= 0;
    }
  }
}

function scalarEquals(value: MetadataValue | undefined, operand: FilterScalar): boolean {
  if (operand === null) return value === null;
  return typeof value === typeof operand && value === operand;
}

function compareSameType(value: MetadataValue | undefined, operand: FilterRangeOperand): number | undefined {
  if (typeof operand === 'number') {
    return typeof value === 'number' ? Math.sign(value - operand) : undefined;
  }
  return typeof value === 'string' ? compareCodePoints(value, operand) : undefined;
}

/**
 * Orders strings by Unicode code point, as PostgreSQL's "C" collation orders
 * UTF-8: JavaScript's `<` compares UTF-16 units, which puts characters beyond
 * U+FFFF before U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a.charCodeAt(i) !== b.charCodeAt(i)) {
      return Math.sign((a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0));
    }
  }
  return Math.sign(a.length - b.length);
}

function isScalar(value: unknown): value is FilterScalar {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? `an object (${Object.prototype.toString.call(value)})` : typeof value;
}
