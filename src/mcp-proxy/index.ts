/**
 * An MCP proxy that puts the agent breaker in front of any MCP server.
 *
 * @module
 */
// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export { startMcpProxy, type McpProxy, type McpProxyEnd } from './mcp-proxy.ts';
export type { McpCommandUpstream, McpProxyOptions, McpUrlUpstream } from './mcp-proxy-options.ts';
export { McpMessageTooLargeError } from './mcp-message-too-large-error.ts';
export { McpRequestError } from './mcp-request-error.ts';
export { McpUpstreamError } from './mcp-upstream-error.ts';
export type { McpServerExit } from './server-exit.ts';
export { judgeToolCall, refusedResult } from './tool-call-judge.ts';
