import { printable } from '../redaction/terminal-text.ts';
import type { CliIO } from './progress.ts';

/**
 * Writes `governor <command>: <reason>` to stderr, followed by the command's
 * usage when the command line itself is what to fix. The reason is redacted:
 * errors quote what they were given (a URL with its password, a header).
 */
export function writeCommandError(io: CliIO, command: string, problem: unknown, usage?: string): void {
  const reason = printable(problem instanceof Error ? problem.message : String(problem));
  io.stderr.write(`governor ${command}: ${reason}${usage === undefined ? '' : `\n\n${usage}`}\n`);
}
