/**
 * A small MCP server for tests: `search` answers the same thing for the same
 * query (an agent asking again loops), `add` does arithmetic, `build`
 * reports its progress in `steps` steps before it answers, `wait` waits
 * until it is cancelled (reporting progress 0 first, so a caller knows it
 * runs; `onWaitAborted` is told when its signal fires), `status` answers
 * with structured content alone (a count that grows on every poll), and one
 * resource and one prompt are served so mirroring can be checked.
 *
 * With `sized`, more for the size limit of messages over stdio: the tool
 * `large` answers a text of `bytes` bytes, the tool `noisy` sends a log
 * message and a progress notification (when asked for) of `bytes` bytes
 * before it answers `done` (the server has the logging capability, as a log
 * message needs), and reading the resource `memo://refused/<bytes>` is
 * answered with an error (invalid params) whose data has that many bytes.
 *
 * Run as a program it serves stdio, with `sized` and two more tools: `crash`,
 * which ends the process, and `print`, which writes its `line` to stdout
 * before it answers; `loopingServer()` builds one for other transports.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export function loopingServer(options: { sized?: boolean; onWaitAborted?: () => void } = {}): McpServer {
  const server = new McpServer(
    { name: 'looping-test-server', version: '1.2.3' },
    { instructions: 'Search before you book.', ...(options.sized === true ? { capabilities: { logging: {} } } : {}) },
  );
  server.registerTool('search', { description: 'Search flights', inputSchema: { q: z.string().describe('what to search for') } }, async ({ q }) => ({
    content: [{ type: 'text', text: `No flights found for ${q}.` }],
  }));
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  server.registerTool(
    'build',
    { description: 'A long job that reports progress', inputSchema: { steps: z.number().int().min(1).max(10) } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      // Spaced out, and the answer after a pause: notifications read in one chunk with the answer may be dropped
      // by a client, and a loaded machine would otherwise deliver several at once.
      const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
      for (let step = 1; step <= steps; step += 1) {
        await pause();
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
          });
        }
      }
      await pause();
      return { content: [{ type: 'text', text: `built in ${steps} steps` }] };
    },
  );
  server.registerTool(
    'wait',
    { description: 'Waits, until the caller cancels', inputSchema: { ms: z.number().int().min(0).max(60_000) } },
    async ({ ms }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 0 } });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          options.onWaitAborted?.();
          resolve();
        });
      });
      return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
    },
  );
  let polls = 0;
  server.registerTool(
    'status',
    { description: 'How far the job is, as structured content only', inputSchema: {}, outputSchema: { done: z.number() } },
    async () => {
      polls += 1;
      return { content: [], structuredContent: { done: polls } };
    },
  );
  server.registerResource('readme', 'memo://readme', { description: 'Read me', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'Flights leave from gate 7.' }],
  }));
  server.registerPrompt('plan', { description: 'Plan a trip', argsSchema: { city: z.string() } }, ({ city }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Plan a trip to ${city}.` } }],
  }));
  if (options.sized === true) {
    server.registerTool('large', { description: 'Answers a text of that many bytes', inputSchema: { bytes: z.number().int().min(0) } }, async ({ bytes }) => ({
      content: [{ type: 'text', text: 'x'.repeat(bytes) }],
    }));
    server.registerTool(
      'noisy',
      { description: 'Sends a log message and progress of that many bytes, then answers', inputSchema: { bytes: z.number().int().min(0) } },
      async ({ bytes }, extra) => {
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'y'.repeat(bytes) } });
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, message: 'z'.repeat(bytes) } });
        }
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    server.registerResource(
      'refused',
      new ResourceTemplate('memo://refused/{bytes}', { list: undefined }),
      { description: 'Refused' },
      async (_uri, { bytes }) => {
        throw new McpError(ErrorCode.InvalidParams, 'refused', { padding: 'r'.repeat(Number(bytes)) });
      },
    );
  }
  return server;
}

if (import.meta.main) {
  const server = loopingServer({ sized: true });
  // Only as a program of its own: in a test's process this would end the test.
  server.registerTool('crash', { description: 'Ends the server process, as a crash would', inputSchema: {} }, async () => process.exit(3));
  server.registerTool(
    'print',
    { description: 'Writes a line to stdout, as a server that logs there would', inputSchema: { line: z.string() } },
    async ({ line }) => {
      process.stdout.write(`${line}\n`);
      return { content: [{ type: 'text', text: 'printed' }] };
    },
  );
  await server.connect(new StdioServerTransport());
}
