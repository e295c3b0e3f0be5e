import type * as NodeSqlite from 'node:sqlite';

/**
 * `node:sqlite`, loaded without the one-time ExperimentalWarning Node 22
 * prints for it: the part used here (DatabaseSync, prepared statements) is the
 * same on 22 and 24, and a library should not write to its host's stderr.
 * Every other warning passes through untouched. Loaded synchronously (not a
 * top-level await), so that CommonJS code can `require('agent-governor/sqlite')`.
 */
function loadSqlite(): typeof NodeSqlite {
  const emitWarning = process.emitWarning;
  process.emitWarning = function filtered(this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if ((type === 'ExperimentalWarning' || (warning as Error).name === 'ExperimentalWarning') && /SQLite/i.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return process.getBuiltinModule('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
}

const sqlite = loadSqlite();

export const { DatabaseSync } = sqlite;
export type DatabaseSync = NodeSqlite.DatabaseSync;
