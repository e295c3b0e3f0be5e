import { importOptional } from '../runtime/import-optional.ts';

/**
 * `redis` (node-redis), an optional peer dependency: loaded when
 * `agent-governor/redis` is imported, so an install without it fails there with
 * a `MissingDependencyError` naming the package.
 */
export const { createClient, RESP_TYPES } = await importOptional('redis', 'agent-governor/redis', () => import('redis'));
