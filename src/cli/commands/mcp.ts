import type { CliCommand } from '../cli-command.ts';
import { STORE_FLAGS_USAGE } from '../store-flags-usage.ts';

export const MCP_USAGE = `Usage: governor mcp [--config FILE] [--store redis://…] [--session ID] -- COMMAND [ARGS…]
       governor mcp [--config FILE] [--store redis://…] [--session ID] --url URL

A stdio MCP server in front of another MCP server (started as COMMAND, or
reached over Streamable HTTP at URL): its tools, resources and prompts are
mirrored, and every tools/call is judged by the agent breaker first. A
blocked or stopped call comes back as a tool result with isError: true.

  --config FILE    JSON file with the breaker options (default: built-in defaults)
  --store URL      shared breaker state, redis://… (default: in memory)
${STORE_FLAGS_USAGE}
  --session ID     breaker session (default: a new one per connection)
  --url URL        upstream Streamable HTTP MCP server instead of COMMAND

Needs @modelcontextprotocol/sdk (npm install @modelcontextprotocol/sdk).
Stdout carries the MCP protocol; messages go to stderr.`;

/** Loaded on use: the server code (and its HTTP or MCP libraries) only when this command runs. */
export const mcpCommand: CliCommand = {
  name: 'mcp',
  summary: 'MCP proxy: judges every tool call of the MCP server it wraps',
  usage: MCP_USAGE,
  run: async (argv, io) => (await import('../mcp-command.ts')).runMcpCommand(argv, io),
};
