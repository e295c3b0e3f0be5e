/**
 * The registry of `governor` commands.
 *
 * To add a command, write one file `commands/<name>.ts` that exports a
 * `CliCommand` (name, one-line summary, full usage text, `run(argv, io)`), and
 * add it to `COMMANDS` below; nothing else changes. The dispatcher (`main.ts`)
 * then gives it, without code in the command: a line in `governor --help`,
 * `governor help <name>` and `governor <name> --help` (both print `usage`),
 * did-you-mean for near misses of its name, and the process plumbing (exit
 * code, a closed stdout pipe ending quietly). A command parses only its own
 * arguments (`node:util` `parseArgs` is enough), writes results to
 * `io.stdout` and progress and errors to `io.stderr`, and resolves to one of
 * `EXIT_CODES`.
 */
import type { CliCommand } from './cli-command.ts';
import { demoCommand } from './commands/demo.ts';
import { mcpCommand } from './commands/mcp.ts';
import { proxyCommand } from './commands/proxy.ts';
import { replayCommand } from './commands/replay.ts';
import { runCommand } from './commands/run.ts';

/** Every command, in the order `governor --help` lists them. */
export const COMMANDS: readonly CliCommand[] = [demoCommand, runCommand, replayCommand, proxyCommand, mcpCommand];
