/**
 * A model proxy that puts the agent breaker between any agent and its model
 * API (OpenAI Chat Completions, Anthropic Messages).
 *
 * @module
 */
// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export { createModelProxy, STOP_HEADER } from './model-proxy.ts';
export type { ModelProxyOptions } from './model-proxy-options.ts';
export { startModelProxy, type ModelProxyClosed, type ModelProxyServer, type ModelProxyServerOptions } from './model-proxy-server.ts';
export { SESSION_HEADER } from './proxy-session.ts';
export { UpstreamUnreachableError } from './upstream-unreachable-error.ts';
