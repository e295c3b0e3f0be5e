#!/usr/bin/env node
import { runDemo } from '../demo/run-demo.ts';
import { runReplayCommand } from '../replay/index.ts';
import type { CliIO } from './progress.ts';
import { runRunCommand } from './run-command.ts';

const HELP = `governor — govern AI agents: a circuit breaker for loops, and a limited agent harness.

Commands:
  governor demo                       run the main job (MiniAgent on a bundled task; no key needed)
  governor run "TASK" [options]       run MiniAgent on TASK (governor run --help)
  governor replay FILE [--json] [--config FILE] [--html FILE]
                                      audit recorded trajectories (JSON Lines) with the breaker
  governor proxy --upstream URL [options]
                                      model proxy (OpenAI + Anthropic APIs) governed by the breaker
  governor mcp [options] -- COMMAND [ARGS…]
                                      MCP proxy: judges every tool call of the wrapped MCP server`;

/** Dispatches a `governor` command line; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'demo':
      return runDemo(io);
    case 'run':
      return runRunCommand(rest, io);
    case 'replay':
      return runReplayCommand(rest, io);
    // Loaded on demand: the servers' packages are not needed by the other commands.
    case 'proxy':
      return (await import('./proxy-command.ts')).runProxyCommand(rest, io);
    case 'mcp':
      return (await import('./mcp-command.ts')).runMcpCommand(rest, io);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      io.stdout.write(`${HELP}\n`);
      return command === undefined ? 2 : 0;
    default:
      io.stderr.write(`governor: unknown command "${command}".\n\n${HELP}\n`);
      return 2;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`governor: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
