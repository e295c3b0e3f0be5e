import type { CliIO } from './progress.ts';

/** One `governor` subcommand; see `commands.ts` for how to add one. */
export interface CliCommand {
  /** What the user types: `governor <name>`. Lowercase, no spaces. */
  readonly name: string;
  /** One line for the command list in `governor --help`. */
  readonly summary: string;
  /** The full help: `governor help <name>` and `governor <name> --help` print it. */
  readonly usage: string;
  /**
   * Runs the command with the arguments after its name and resolves to the
   * exit code (see `EXIT_CODES`). Results go to `io.stdout`; progress and
   * errors to `io.stderr`. Usage errors print a short reason and return 2.
   */
  run(argv: readonly string[], io: CliIO): Promise<number>;
}

/** Exit codes every command keeps to; listed in `governor --help`. */
export const EXIT_CODES = {
  /** The command did what was asked (a run completed, a file was replayed). */
  ok: 0,
  /** It ran but did not succeed (the agent stopped short, a failure while working). */
  failure: 1,
  /** The command line or its input is wrong, or an optional package it needs is not installed; nothing was done. */
  usage: 2,
  /** Interrupted with Ctrl-C (128 + SIGINT). */
  interrupted: 130,
  /** Stopped with SIGTERM (128 + SIGTERM): `governor run` stops as on Ctrl-C. */
  terminated: 143,
} as const;
