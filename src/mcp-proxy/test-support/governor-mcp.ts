/**
 * `governor mcp` as tests speak to it: run as a process of its own, with a
 * real MCP SDK client on its stdio and its log on stderr collected.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The CLI's entry point. */
export const GOVERNOR = fileURLToPath(new URL('../../cli/bin.ts', import.meta.url));

/** The looping test server, run as a stdio program. */
export const LOOPING = fileURLToPath(new URL('./looping-server.ts', import.meta.url));

/** A client of `governor mcp ARGS`, with what it logs on stderr. */
export async function proxiedWithLog(args: string[]): Promise<{ client: Client; log: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [GOVERNOR, 'mcp', ...args], stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const client = new Client({ name: 'test-client', version: '1' });
  await client.connect(transport);
  return { client, log: () => log };
}

/** Waits until `log()` matches `pattern` (stderr is a pipe of its own: its lines may arrive after the answer on stdout). */
export async function logShows(log: () => string, pattern: RegExp): Promise<void> {
  for (const deadline = Date.now() + 10_000; !pattern.test(log()) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
}

/** The lines of `log` that match `pattern`. */
export function linesOf(log: string, pattern: RegExp): string[] {
  return log.split('\n').filter((line) => pattern.test(line));
}

/** The text of a tool result. */
export function textOf(result: unknown): string {
  return ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');
}
