/**
 * The AgentBreaker for LangChain.js v1 agents (`createAgent` middleware).
 * Needs the optional peer packages `langchain` and `@langchain/core`.
 *
 * @module
 */
// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
import { importOptional } from '../runtime/import-optional.ts';

// Checked before the middleware module loads, so a missing package is a typed error naming it.
await importOptional('langchain', 'agent-governor/langchain', () => import('langchain'), { peers: ['@langchain/core'] });
await importOptional('@langchain/core', 'agent-governor/langchain', () => import('@langchain/core/messages'));

const middleware = await import('./governor-middleware.ts');

/** {@inheritDoc governorMiddleware} */
export const governorMiddleware: typeof middleware.governorMiddleware = middleware.governorMiddleware;
export type { GovernorMiddlewareOptions } from './governor-middleware.ts';
