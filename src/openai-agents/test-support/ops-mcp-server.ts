/**
 * A small stdio MCP server for the Agents SDK door's tests: `get_issue`
 * answers the same thing for the same issue (an agent asking again loops),
 * `get_invoice` fails as a backend outage does (`isError` with a 503),
 * `deploy` fails with a permission error (`isError`), and `list_issues`
 * answers something new on every call.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/** Where this file is, for `MCPServerStdio`'s `args`. */
export const OPS_MCP_SERVER = new URL(import.meta.url).pathname;

function opsServer(): McpServer {
  const server = new McpServer({ name: 'ops-test-server', version: '1.0.0' });
  server.registerTool('get_issue', { description: 'An issue by id', inputSchema: { id: z.string() } }, async ({ id }) => ({
    content: [{ type: 'text', text: `${id}: open, assigned to nobody` }],
  }));
  server.registerTool('get_invoice', { description: 'An invoice by id', inputSchema: { id: z.string() } }, async () => ({
    content: [{ type: 'text', text: '503 Service Unavailable: upstream billing-api is down' }],
    isError: true,
  }));
  server.registerTool('deploy', { description: 'Deploys a service', inputSchema: { service: z.string() } }, async () => ({
    content: [{ type: 'text', text: 'permission denied: role deployer missing' }],
    isError: true,
  }));
  let listed = 0;
  server.registerTool('list_issues', { description: 'The next page of issues', inputSchema: { project: z.string() } }, async ({ project }) => {
    listed += 1;
    return { content: [{ type: 'text', text: `${project} page ${listed}: ENG-${listed * 2 - 1}, ENG-${listed * 2}` }] };
  });
  return server;
}

if (import.meta.main) await opsServer().connect(new StdioServerTransport());
