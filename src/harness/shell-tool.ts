import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { CommandOutcome } from './run-command.ts';
import { withoutSecrets } from './safe-env.ts';
import type { SandboxMode } from './sandbox.ts';
import { assertBubblewrapOutside, chooseSandbox, runLaunched, sandboxEnvironment, type LaunchPlan } from './sandboxed-launch.ts';
import { checkCommandWrites } from './write-guard.ts';

/**
 * Name of the private directory, inside the working directory, that commands
 * get as HOME (and, without a sandbox, TMPDIR). Each command creates it, and a
 * `.gitignore` in it, itself when missing: the host process never writes in
 * the working directory, where a command could have planted a link.
 */
export const SHELL_TEMP_DIRECTORY = '.governor-tmp';

/** Options of {@link shellTool}. */
export interface ShellToolOptions {
  /** Directory every command starts in; must exist. Writes are confined to it (see {@link shellTool}). */
  workingDirectory: string;
  /**
   * Wall-clock limit per command; the command's whole process group is killed
   * when it passes (under the sandbox, everything the command started). A
   * command that exited is reported with its exit code, even when a detached
   * process still holds its output after the limit.
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
   * How commands are confined. `'bubblewrap'`: each command runs in a
   * bubblewrap sandbox, started with a cleared environment (only PATH, HOME,
   * TMPDIR, LANG, LC_ALL, TERM and `env` are passed, so no process inside can
   * read another variable, not even through `/proc`), in its own PID namespace
   * and `/proc`, with the host file system read-only, the working directory
   * and `writableRoots` read-write, a private `/tmp`, no network and no
   * host Unix socket unless `network` (see `bubblewrapArgs`), and everything
   * inside killed when the command ends or times out. `'none'`: plain child
   * processes, with `passEnv` filtering and the write guard (which stops
   * accidents, not intent); only the command's process group is killed, so a
   * process that detaches itself (`setsid`, daemons) can outlive the command.
   * `'auto'`: bubblewrap when `bwrap` works on this host, else `'none'` with a
   * warning (once per process).
   * @default 'auto'
   * @throws SandboxUnavailableError at construction for `'bubblewrap'` when bwrap cannot run here
   */
  sandbox?: SandboxMode;
  /**
   * Under the bubblewrap sandbox, give commands the host's network: its
   * interfaces, and with them its abstract Unix sockets and every Unix socket
   * file (Docker's, a database's), which are hidden otherwise.
   * @default false
   */
  network?: boolean;
  /**
   * Without a sandbox (`sandbox: 'none'`), which of this process's environment
   * variables commands inherit: `'safe'`
   * drops every variable that looks like a credential (API keys, tokens,
   * passwords, cloud and registry credentials, URLs with passwords); `'all'`
   * passes everything.
   * @default 'safe'
   */
  passEnv?: 'safe' | 'all';
  /**
   * Variables set for commands after filtering, overriding anything else
   * (HOME and TMPDIR included); `undefined` removes a variable. Under the
   * sandbox these are the only variables passed besides the allow-list.
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

const SHELL_TOOL_RULES: OptionRules<ShellToolOptions> = {
  workingDirectory: is.string({ nonEmpty: true }),
  commandTimeoutMs: is.timeMs(),
  maxOutputBytes: is.integer(2),
  sandbox: is.oneOf('bubblewrap', 'none', 'auto'),
  network: is.boolean(),
  passEnv: is.oneOf('safe', 'all'),
  env: is.recordOf(is.either('a string or undefined', is.string(), is.oneOf(undefined))),
  writableRoots: is.arrayOf(is.string({ nonEmpty: true })),
  killGraceMs: is.timeMs(0),
};

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

/**
 * Prepares the private temporary directory (`$1`), then runs the rest of its
 * arguments (the command's shell). It runs as part of the command, inside the
 * sandbox when there is one, never in the host process: the working directory
 * is the command's to change, so a link planted there (`.governor-tmp`, or its
 * `.gitignore`, pointing at a host file) can only lead this script where the
 * command itself could write. Even so it creates nothing through a link and
 * overwrites nothing (`set -C` creates the file with O_EXCL).
 */
const PREPARE_TEMP_DIRECTORY = [
  'd=$1; shift',
  '[ -e "$d" ] || [ -L "$d" ] || mkdir -- "$d" 2>/dev/null',
  'if [ -d "$d" ] && [ ! -L "$d" ]; then',
  // Keeps the agent's scratch files out of `git status` in the working directory.
  `  [ -e "$d/.gitignore" ] || [ -L "$d/.gitignore" ] || (set -C; printf '*\\n' > "$d/.gitignore") 2>/dev/null`,
  'elif [ ! -d "$d" ]; then',
  // On stdout, the pipe the command's output shares, so the note always comes first.
  '  echo "note: $d (HOME) is not a directory"',
  'fi',
  'exec "$@"',
].join('\n');

/**
 * What was killed when we ended a command. Only the sandbox's PID namespace
 * takes everything along; without it, the kill reaches the command's process
 * group, which a process that called `setsid` has left.
 */
function whatWasKilled(sandbox: 'bubblewrap' | 'none'): string {
  return sandbox === 'bubblewrap'
    ? 'the command and every process it started were killed'
    : "the command's process group was killed; without a sandbox, a process that detached itself (setsid) may still be running";
}

function describeEnd(outcome: CommandOutcome, timeoutMs: number, sandbox: 'bubblewrap' | 'none'): string {
  switch (outcome.end) {
    case 'exited':
      return `exit code: ${outcome.exitCode ?? 'unknown'}`;
    case 'signaled':
      return `killed by signal ${outcome.signal ?? 'unknown'}`;
    case 'timed_out':
      return `timed out after ${timeoutMs} ms: ${whatWasKilled(sandbox)}`;
    case 'aborted':
      return `aborted: ${whatWasKilled(sandbox)}`;
  }
}

/**
 * A shell tool for agents: each call runs `command` with `/bin/sh -c` in a fresh
 * process in `workingDirectory`, with empty stdin, and returns what the model
 * should see: the exit code (or the signal, or the timeout), then stdout and
 * stderr interleaved and capped. Each command leads its own process group; a
 * timeout, an abort of the tool call, or the shell's exit ends that group
 * (SIGTERM, then SIGKILL after `killGraceMs`). Under the sandbox that is
 * everything the command started; without one, a process that detached itself
 * (`setsid`, daemons) can outlive the command, and when it holds the output
 * open the result says so after the command's exit code.
 *
 * Confinement: with the bubblewrap sandbox (the default where `bwrap` works,
 * see {@link ShellToolOptions.sandbox}) the kernel enforces it. Without one,
 * commands get HOME and TMPDIR in a private directory
 * ({@link SHELL_TEMP_DIRECTORY}) inside the working directory,
 * credential-like environment variables are withheld, and commands that
 * visibly write outside the working directory, or `cd` out of it, are refused
 * (see {@link checkCommandWrites}). That stops accidents, not intent: a shell
 * can always reach outside through a program or a script, and read the host
 * process's environment through `/proc`.
 *
 * @throws InvalidOptionError at construction when `workingDirectory` does not
 *   exist or an option is out of range, or when the `bwrap` executable lies
 *   inside the working directory or a writable root (a command could replace it).
 * @throws SandboxUnavailableError at construction for `sandbox: 'bubblewrap'` on a host where bwrap cannot run.
 */
export function shellTool(options: ShellToolOptions): Tool<{ command: string }, string> {
  validateOptions('shellTool', options, SHELL_TOOL_RULES, { required: ['workingDirectory'] });
  const workingDirectory = existingDirectory('workingDirectory', options.workingDirectory);
  const timeoutMs = positiveInteger('commandTimeoutMs', options.commandTimeoutMs, 30_000);
  const maxOutputBytes = positiveInteger('maxOutputBytes', options.maxOutputBytes, 10_000, 2);
  const killGraceMs = positiveInteger('killGraceMs', options.killGraceMs, 2_000, 0);
  const passEnv = options.passEnv ?? 'safe';
  const writableRoots = (options.writableRoots ?? []).map((root, i) => existingDirectory(`writableRoots[${i}]`, root));
  const tempDirectory = path.join(workingDirectory, SHELL_TEMP_DIRECTORY);
  const sandbox = chooseSandbox(options.sandbox);
  const network = options.network === true;
  if (sandbox === 'bubblewrap') assertBubblewrapOutside([workingDirectory, ...writableRoots], 'workingDirectory');

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

  const plan: LaunchPlan = {
    sandbox,
    workingDirectory,
    writableRoots,
    network,
    hostEnvironment: environment,
    // Under the sandbox the environment is built from nothing: bwrap and everything it starts hold only these.
    sandboxEnvironment: () => sandboxEnvironment({ home: tempDirectory, workingDirectory, env: options.env }),
    prelude: ['/bin/sh', '-c', PREPARE_TEMP_DIRECTORY, 'sh', tempDirectory],
  };

  return tool({
    description:
      `Run a shell command (POSIX sh) in the working directory ${workingDirectory}. Each call starts a ` +
      `fresh shell: cd and variables do not carry over to the next call. stdin is empty, so do not ` +
      `start interactive programs. A command is killed after ${timeoutMs / 1000} s; output over ` +
      `${maxOutputBytes} bytes keeps its beginning and end. ` +
      (sandbox === 'bubblewrap'
        ? `Commands run in a sandbox: only the working directory is writable, /tmp is private and starts empty on each call` +
          `${network ? '' : ', there is no network'}.`
        : `Commands that write outside the working directory are refused.`),
    inputSchema: z.object({ command: z.string().describe('The shell command to run.') }),
    execute: async ({ command }, { abortSignal }) => {
      if (command.trim() === '') return 'error: the command is empty; nothing was run';
      if (sandbox === 'none') {
        const check = checkCommandWrites(command, { workingDirectory, homeDirectory: tempDirectory, writableRoots });
        if (!check.allowed) return check.reason;
      }
      const outcome = await runLaunched(command, plan, { timeoutMs, maxOutputBytes, killGraceMs, ...(abortSignal ? { signal: abortSignal } : {}) });
      if (outcome.end === 'aborted') throw abortSignal?.reason ?? new Error('The command was aborted.');
      let notes = outcome.terminatedLeftovers ? '\n(background processes the command left running in its process group were terminated)' : '';
      if (outcome.abandonedOutput) notes += '\n(a detached process still holds the output open; the rest of its output is not shown)';
      return `${describeEnd(outcome, timeoutMs, sandbox)}${notes}\n${outcome.output === '' ? '(no output)' : outcome.output}`;
    },
  });
}
