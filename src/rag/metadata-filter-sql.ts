import type { FieldTest, FilterNode, FilterScalar } from './metadata-filter.ts';

/** A piece of SQL and the values of its `$n` placeholders, in order. */
export interface SqlCondition {
  readonly sql: string;
  readonly values: readonly unknown[];
}

/**
 * Translates a validated filter into a PostgreSQL condition on a `jsonb`
 * column, with the exact meaning `evaluateFilter` gives it in memory.
 *
 * Every key and value travels as a bound parameter; nothing from the filter
 * is spliced into the SQL text, so a filter cannot inject SQL.
 *
 * @param column - the jsonb column, already quoted as an identifier.
 * @param firstPlaceholder - number of the first `$n` placeholder to use.
 */
export function filterToSql(node: FilterNode, column: string, firstPlaceholder: number): SqlCondition {
  const values: unknown[] = [];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${firstPlaceholder + values.length - 1}`;
  };
  return { sql: nodeToSql(node, column, bind), values };
}

type Bind = (value: unknown) => string;

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
  const field = `(${column} #> ${bind([...test.path])}::text[])`;
  switch (test.op) {
    case 'eq':
      return `COALESCE(${field} = ${bind(jsonText(test.operand))}::jsonb, FALSE)`;
    case 'ne':
      return `(${field} IS DISTINCT FROM ${bind(jsonText(test.operand))}::jsonb)`;
    case 'in':
      return `COALESCE(${field} = ANY(${bind(test.operand.map(jsonText))}::jsonb[]), FALSE)`;
    case 'nin':
      return `(NOT COALESCE(${field} = ANY(${bind(test.operand.map(jsonText))}::jsonb[]), FALSE))`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const operator = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[test.op];
      // CASE, unlike AND, guarantees the cast only runs on a value of the right type.
      if (typeof test.operand === 'number') {
        return `(CASE WHEN jsonb_typeof(${field}) = 'number' THEN (${field})::numeric ${operator} ${bind(String(test.operand))}::numeric ELSE FALSE END)`;
      }
      return `(CASE WHEN jsonb_typeof(${field}) = 'string' THEN (${field} #>> '{}') COLLATE "C" ${operator} (${bind(test.operand)}::text COLLATE "C") ELSE FALSE END)`;
    }
  }
}

function jsonText(value: FilterScalar): string {
  return JSON.stringify(value);
}
