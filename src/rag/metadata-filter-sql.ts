import type { FieldTest, FilterNode, FilterScalar } from './metadata-filter.ts';
import { InvalidMetadataFilterError } from './retrieval-errors.ts';

/** A piece of SQL and the values of its `$n` placeholders, in order. */
export interface SqlCondition {
  readonly sql: string;
  readonly values: readonly unknown[];
}

/** Most bind parameters one PostgreSQL statement can carry: the protocol counts them in 16 bits. */
const MAX_PARAMETERS = 65_535;

/**
 * Translates a validated filter into a PostgreSQL condition on a `jsonb`
 * column, with the exact meaning `evaluateFilter` gives it in memory.
 *
 * Every key and value travels as a bound parameter; nothing from the filter
 * is spliced into the SQL text, so a filter cannot inject SQL. Each key path
 * is bound once however often it is tested, which keeps a wide `$or` on one
 * key within the statement's parameter limit.
 *
 * @param column - the jsonb column, already quoted as an identifier.
 * @param firstPlaceholder - number of the first `$n` placeholder to use.
 * @param parametersAfter - parameters the caller binds after the filter's.
 * @throws InvalidMetadataFilterError when the statement would need more
 *   parameters than PostgreSQL accepts.
 */
export function filterToSql(node: FilterNode, column: string, firstPlaceholder: number, parametersAfter = 0): SqlCondition {
  const values: unknown[] = [];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${firstPlaceholder + values.length - 1}`;
  };
  // Only paths are shared: a path is always cast to text[], whereas a value
  // bound once for two different casts would take the type of the first.
  const paths = new Map<string, string>();
  const bindPath = (path: readonly string[]): string => {
    const key = JSON.stringify(path);
    let placeholder = paths.get(key);
    if (placeholder === undefined) {
      placeholder = bind([...path]);
      paths.set(key, placeholder);
    }
    return placeholder;
  };
  const sql = nodeToSql(node, column, { value: bind, path: bindPath });
  const total = firstPlaceholder - 1 + values.length + parametersAfter;
  if (total > MAX_PARAMETERS) {
    throw new InvalidMetadataFilterError(
      'filter',
      `needs ${total} query parameters, more than PostgreSQL's limit of ${MAX_PARAMETERS}; ` +
        'test many values of one key with a single { key: { $in: [...] } } instead of one condition per value',
    );
  }
  return { sql, values };
}

interface Bind {
  readonly value: (value: unknown) => string;
  readonly path: (path: readonly string[]) => string;
}

function nodeToSql(node: FilterNode, column: string, bind: Bind): string {
  switch (node.kind) {
    case 'all':
      return node.children.length === 0 ? 'TRUE' : `(${node.children.map((child) => nodeToSql(child, column, bind)).join(' AND ')})`;
    case 'any':
      return node.children.length === 0 ? 'FALSE' : `(${node.children.map((child) => nodeToSql(child, column, bind)).join(' OR ')})`;
    case 'field':
      return fieldToSql(node, column, bind);
  }
}

function fieldToSql(test: FieldTest, column: string, bind: Bind): string {
  // A missing key yields SQL NULL; every branch below turns that into a plain
  // TRUE/FALSE so that the result never depends on NULL propagation.
  const field = `(${column} #> ${bind.path(test.path)}::text[])`;
  switch (test.op) {
    case 'eq':
      return `COALESCE(${field} = ${bind.value(jsonText(test.operand))}::jsonb, FALSE)`;
    case 'ne':
      return `(${field} IS DISTINCT FROM ${bind.value(jsonText(test.operand))}::jsonb)`;
    case 'in':
      return `COALESCE(${field} = ANY(${bind.value(test.operand.map(jsonText))}::jsonb[]), FALSE)`;
    case 'nin':
      return `(NOT COALESCE(${field} = ANY(${bind.value(test.operand.map(jsonText))}::jsonb[]), FALSE))`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const operator = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[test.op];
      // CASE, unlike AND, guarantees the cast only runs on a value of the right type.
      if (typeof test.operand === 'number') {
        return `(CASE WHEN jsonb_typeof(${field}) = 'number' THEN (${field})::numeric ${operator} ${bind.value(String(test.operand))}::numeric ELSE FALSE END)`;
      }
      return `(CASE WHEN jsonb_typeof(${field}) = 'string' THEN (${field} #>> '{}') COLLATE "C" ${operator} (${bind.value(test.operand)}::text COLLATE "C") ELSE FALSE END)`;
    }
  }
}

function jsonText(value: FilterScalar): string {
  return JSON.stringify(value);
}
