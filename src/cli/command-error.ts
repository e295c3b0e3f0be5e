import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { MissingDependencyError } from '../errors/missing-dependency-error.ts';
import { printable } from '../redaction/terminal-text.ts';
import { EXIT_CODES } from './cli-command.ts';
import type { CliIO } from './progress.ts';

/** A command line the user must fix; the message says how. */
export class CliUsageError extends GovernorError {
  declare readonly code: 'GOVERNOR_CLI_USAGE';
  constructor(message: string) {
    super('GOVERNOR_CLI_USAGE', message);
  }
}

/**
 * Writes `governor <command>: <reason>` to stderr, followed by the command's
 * usage when the command line itself is what to fix. The reason is redacted:
 * errors quote what they were given (a URL with its password, a header).
 */
export function writeCommandError(io: CliIO, command: string, problem: unknown, usage?: string): void {
  const reason = printable(problem instanceof Error ? problem.message : String(problem));
  io.stderr.write(`governor ${command}: ${reason}${usage === undefined ? '' : `\n\n${usage}`}\n`);
}

/**
 * The exit code of a command that could not start: 2 (usage) when the user
 * must change something before running the same command again (a flag, an
 * option, an optional package to install) and nothing was done; 1 for the
 * rest (a port in use, a server that cannot be reached).
 */
export function startExitCode(error: unknown): number {
  return CliUsageError.isInstance(error) || InvalidOptionError.isInstance(error) || MissingDependencyError.isInstance(error)
    ? EXIT_CODES.usage
    : EXIT_CODES.failure;
}
