import type * as NodeSqlite from 'node:sqlite';
import { UnsupportedRuntimeError } from '../errors/unsupported-runtime-error.ts';

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
  let module: typeof NodeSqlite | undefined;
  try {
    module = process.getBuiltinModule('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
  // Turned off with --no-experimental-sqlite (NODE_OPTIONS may carry it): getBuiltinModule then gives nothing.
  if (module === undefined) {
    throw new UnsupportedRuntimeError(
      `agent-governor/sqlite needs node:sqlite, which this Node.js has turned off (--no-experimental-sqlite, perhaps in NODE_OPTIONS); run without that flag, or use another chat memory repository`,
      process.version,
    );
  }
  return module;
}

const sqlite = loadSqlite();

export const { DatabaseSync } = sqlite;
export type DatabaseSync = NodeSqlite.DatabaseSync;
