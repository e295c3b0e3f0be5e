import { mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { runCommand, type CommandOutcome } from './run-command.ts';
import { withoutSecrets } from './safe-env.ts';
import { checkCommandWrites } from './write-guard.ts';

/** Name of the private directory, inside the working directory, that commands get as HOME and TMPDIR. */
export const SHELL_TEMP_DIRECTORY = '.governor-tmp';

/** Options of {@link shellTool}. */
export interface ShellToolOptions {
  /** Directory every command starts in; must exist. Writes are confined to it (see {@link shellTool}). */
  workingDirectory: string;
  /**
   * Wall-clock limit per command; the command's whole process group is killed when it passes.
   * @default 30_000
   */
  commandTimeoutMs?: number;
  /**
   * Most output bytes (stdout and stderr together) the model sees per command;
   * the first and last halves are kept and the cut is noted.
   * @default 10_000
   */
  maxOutputBytes?: number;
  /**
   * Which of this process's environment variables commands inherit: `'safe'`
   * drops every variable that looks like a credential (API keys, tokens,
   * passwords, cloud and registry credentials, URLs with passwords); `'all'`
   * passes everything.
   * @default 'safe'
   */
  passEnv?: 'safe' | 'all';
  /**
   * Variables set for commands after filtering, overriding anything else
   * (HOME and TMPDIR included); `undefined` removes a variable.
   * @default {}
   */
  env?: Record<string, string | undefined>;
  /**
   * Directories outside the working directory that commands may also write to.
   * @default []
   */
  writableRoots?: readonly string[];
  /**
   * Time between SIGTERM and SIGKILL when a command's process group is killed.
   * @default 2_000
   */
  killGraceMs?: number;
}

function positiveInteger(option: string, value: number | undefined, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) {
    throw new InvalidOptionError(option, `must be an integer >= ${minimum}, got ${String(value)}`);
  }
  return value;
}

function existingDirectory(option: string, directory: unknown): string {
  if (typeof directory !== 'string' || directory.trim() === '') {
    throw new InvalidOptionError(option, 'must be the path of an existing directory');
  }
  try {
    if (!statSync(directory).isDirectory()) throw new InvalidOptionError(option, `is not a directory: ${directory}`);
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError(option, `does not exist or cannot be read: ${directory}`);
  }
  // The real path, so that the write guard compares like with like.
  return realpathSync(directory);
}

function describeEnd(outcome: CommandOutcome, timeoutMs: number): string {
  switch (outcome.end) {
    case 'exited':
      return `exit code: ${outcome.exitCode ?? 'unknown'}`;
    case 'signaled':
      return `killed by signal ${outcome.signal ?? 'unknown'}`;
    case 'timed_out':
      return `timed out after ${timeoutMs} ms: the command and every process it started were killed`;
    case 'aborted':
      return 'aborted: the command and every process it started were killed';
  }
}

/**
 * A shell tool for agents: each call runs `command` with `/bin/sh -c` in a fresh
 * process in `workingDirectory`, with empty stdin, and returns what the model
 * should see: the exit code (or the signal, or the timeout), then stdout and
 * stderr interleaved and capped. Each command leads its own process group; a
 * timeout, an abort of the tool call, or the shell's exit ends everything the
 * command started (SIGTERM, then SIGKILL after `killGraceMs`).
 *
 * Confinement, honestly: commands get HOME and TMPDIR in a private directory
 * ({@link SHELL_TEMP_DIRECTORY}) inside the working directory, credential-like
 * environment variables are withheld, and commands that visibly write outside
 * the working directory, or `cd` out of it, are refused with an explanation
 * (see {@link checkCommandWrites}). That stops accidents, not intent: a shell
 * can always reach outside through a program or a script. Run untrusted agents
 * in a container or VM.
 *
 * @throws InvalidOptionError at construction when `workingDirectory` does not
 *   exist or an option is out of range.
 */
export function shellTool(options: ShellToolOptions): Tool<{ command: string }, string> {
  const workingDirectory = existingDirectory('workingDirectory', options.workingDirectory);
  const timeoutMs = positiveInteger('commandTimeoutMs', options.commandTimeoutMs, 30_000);
  const maxOutputBytes = positiveInteger('maxOutputBytes', options.maxOutputBytes, 10_000, 2);
  const killGraceMs = positiveInteger('killGraceMs', options.killGraceMs, 2_000, 0);
  const passEnv = options.passEnv ?? 'safe';
  if (passEnv !== 'safe' && passEnv !== 'all') {
    throw new InvalidOptionError('passEnv', `must be 'safe' or 'all', got ${String(passEnv)}`);
  }
  const writableRoots = (options.writableRoots ?? []).map((root, i) => existingDirectory(`writableRoots[${i}]`, root));
  const tempDirectory = path.join(workingDirectory, SHELL_TEMP_DIRECTORY);

  const environment = (): Record<string, string> => {
    const env: Record<string, string | undefined> = {
      ...(passEnv === 'all' ? process.env : withoutSecrets(process.env)),
      HOME: tempDirectory,
      TMPDIR: tempDirectory,
      TMP: tempDirectory,
      TEMP: tempDirectory,
      PWD: workingDirectory,
      OLDPWD: undefined,
      ...options.env,
    };
    env['PATH'] ??= '/usr/local/bin:/usr/bin:/bin';
    return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  };

  const prepareTempDirectory = (): void => {
    mkdirSync(tempDirectory, { recursive: true });
    // Keeps the agent's scratch files out of `git status` in the working directory.
    writeFileSync(path.join(tempDirectory, '.gitignore'), '*\n');
  };

  return tool({
    description:
      `Run a shell command (POSIX sh) in the working directory ${workingDirectory}. Each call starts a ` +
      `fresh shell: cd and variables do not carry over to the next call. stdin is empty, so do not ` +
      `start interactive programs. A command is killed after ${timeoutMs / 1000} s; output over ` +
      `${maxOutputBytes} bytes keeps its beginning and end. Commands that write outside the working ` +
      `directory are refused.`,
    inputSchema: z.object({ command: z.string().describe('The shell command to run.') }),
    execute: async ({ command }, { abortSignal }) => {
      if (command.trim() === '') return 'error: the command is empty; nothing was run';
      const check = checkCommandWrites(command, { workingDirectory, homeDirectory: tempDirectory, writableRoots });
      if (!check.allowed) return check.reason;
      prepareTempDirectory();
      const outcome = await runCommand(command, {
        cwd: workingDirectory,
        env: environment(),
        timeoutMs,
        maxOutputBytes,
        killGraceMs,
        ...(abortSignal ? { signal: abortSignal } : {}),
      });
      if (outcome.end === 'aborted') throw abortSignal?.reason ?? new Error('The command was aborted.');
      let notes = outcome.terminatedLeftovers ? '\n(background processes the command left running were terminated)' : '';
      if (outcome.abandonedOutput) notes += '\n(a detached process still holds the output open; the rest of its output is not shown)';
      return `${describeEnd(outcome, timeoutMs)}${notes}\n${outcome.output === '' ? '(no output)' : outcome.output}`;
    },
  });
}
