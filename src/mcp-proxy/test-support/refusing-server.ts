/**
 * A stdio MCP server for tests, built on the SDK's low-level Server: its one
 * tool, `strict`, is refused with a JSON-RPC error answer (invalid params),
 * where the SDK's McpServer would answer a tool result with `isError`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'refusing-test-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'strict', description: 'Refuses every call', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  throw new McpError(ErrorCode.InvalidParams, `${request.params.name} refuses these arguments`, { hint: 'none will do' });
});
await server.connect(new StdioServerTransport());
