import type { CliIO } from './progress.ts';

/**
 * Writes `governor <command>: <reason>` to stderr, followed by the command's
 * usage when the command line itself is what to fix.
 */
export function writeCommandError(io: CliIO, command: string, problem: unknown, usage?: string): void {
  const reason = problem instanceof Error ? problem.message : String(problem);
  io.stderr.write(`governor ${command}: ${reason}${usage === undefined ? '' : `\n\n${usage}`}\n`);
}
