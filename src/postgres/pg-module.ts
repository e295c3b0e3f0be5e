import type PgModule from 'pg';
import { importOptional } from '../runtime/import-optional.ts';

/**
 * `pg`, an optional peer dependency: loaded when `agent-governor/postgres` is
 * imported, so an install without it fails there with a `MissingDependencyError`
 * naming the package, not with a bare module-resolution error from inside ours.
 */
const pg: typeof PgModule = (await importOptional('pg', 'agent-governor/postgres', () => import('pg'))).default;

export default pg;
