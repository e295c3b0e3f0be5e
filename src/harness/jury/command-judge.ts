import { realpathSync } from 'node:fs';
import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../../errors/validate-options.ts';
import { redact } from '../../redaction/redact.ts';
import type { CommandOutcome } from '../run-command.ts';
import { withoutSecrets } from '../safe-env.ts';
import type { SandboxMode } from '../sandbox.ts';
import { assertBubblewrapOutside, chooseSandbox, runLaunched, sandboxEnvironment } from '../sandboxed-launch.ts';
import type { Judge, JudgeInput, Verdict } from './judge.ts';

/** Options of {@link commandJudge}. */
export interface CommandJudgeOptions {
  /**
   * Directory to run in; a relative path resolves against the input's
   * `workingDirectory`.
   * @default the input's `workingDirectory` (the judge abstains without one)
   */
  cwd?: string;
  /**
   * Time limit; a command still running when it passes fails. A command that
   * exited is judged by its exit code, even when a process it detached still
   * holds its output after the limit.
   * @default 120_000
   */
  timeoutMs?: number;
  /** @default `command: <the command>` */
  name?: string;
  /**
   * Most output bytes quoted in the reasoning (beginning and end).
   * @default 2_000
   */
  maxOutputBytes?: number;
  /**
   * How the command is confined. It runs code the agent wrote (a test script,
   * `package.json`, a `check.sh`), so by default it gets the confinement the
   * agent's own shell had. `'bubblewrap'`: the command runs in a bubblewrap
   * sandbox (see `shellTool`'s `sandbox`), started with a cleared environment
   * (only PATH, HOME and TMPDIR, both the private `/tmp`, LANG, LC_ALL, TERM,
   * PWD and `env`), in its own PID namespace, with the host file system
   * read-only, the input's `workingDirectory` (and `cwd`) read-write, a
   * private `/tmp`, no network and no host Unix socket unless `network`, and
   * everything inside killed when the command ends or times out, daemons
   * included. `'none'`: a plain child process on the host, with `passEnv`
   * filtering; only its process group is killed when it ends or times out, so
   * a process it moves to another session (`setsid`, a daemon) survives it.
   * `'auto'`: bubblewrap when `bwrap` works on this host, else `'none'` with a
   * warning (once per process, as `shellTool` warns).
   * @default 'auto'
   * @throws SandboxUnavailableError at construction for `'bubblewrap'` when bwrap cannot run here
   */
  sandbox?: SandboxMode;
  /**
   * Under the bubblewrap sandbox, give the command the host's network (and
   * with it the host's Unix sockets), as `npm install` or a test against a
   * local service needs.
   * @default false
   */
  network?: boolean;
  /**
   * Without a sandbox (`sandbox: 'none'`, or `'auto'` where bwrap cannot
   * run), which of this process's environment variables the command inherits:
   * `'safe'` drops credential-like ones (see `shellTool`'s `passEnv`), `'all'`
   * passes everything. Under the sandbox no host variable is passed.
   * @default 'safe'
   */
  passEnv?: 'safe' | 'all';
  /**
   * Variables set for the command, overriding inherited ones; under the
   * sandbox, the only ones passed besides the allow-list.
   * @default {}
   */
  env?: Record<string, string>;
}

const COMMAND_JUDGE_RULES: OptionRules<CommandJudgeOptions> = {
  cwd: is.string({ nonEmpty: true }),
  timeoutMs: is.timeMs(),
  name: is.string({ nonEmpty: true }),
  maxOutputBytes: is.integer(1),
  sandbox: is.oneOf('bubblewrap', 'none', 'auto'),
  network: is.boolean(),
  passEnv: is.oneOf('safe', 'all'),
  env: is.recordOf(is.string()),
};

// What sh reports when the command itself could not be run.
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

function withoutUndefined(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(option, `must be an integer >= 1, got ${String(value)}`);
  return value;
}

/** The real path of a directory; `undefined` when it cannot be resolved (the start then fails, as it would anyway). */
function realDirectory(directory: string): string | undefined {
  try {
    return realpathSync(directory);
  } catch {
    return undefined;
  }
}

/**
 * Passes when `command` (run with `/bin/sh -c`) exits with code 0, fails on any
 * other exit code, signal or timeout, and reports `error` when the command could
 * not be run at all (no shell, missing directory, exit code 126 or 127 —
 * "not executable" / "not found"). The output excerpt goes into the reasoning,
 * which is redacted, as is the default name (`command: …`): reports get logged.
 *
 * The command runs what the agent wrote, so it runs in the bubblewrap sandbox
 * where `bwrap` works (see {@link CommandJudgeOptions.sandbox}): it can write
 * only in the working directory, cannot reach the network or read this
 * process's environment, and leaves nothing running. Without the sandbox only
 * the command's process group is killed when it ends: a daemon it started
 * with `setsid` keeps running.
 *
 * @throws InvalidOptionError at construction for an empty command or a bad option
 * @throws SandboxUnavailableError at construction for `sandbox: 'bubblewrap'` on a host where bwrap cannot run
 */
export function commandJudge(command: string, options: CommandJudgeOptions = {}): Judge {
  if (typeof command !== 'string' || command.trim() === '') throw new InvalidOptionError('command', 'must be a non-empty string');
  validateOptions('commandJudge', options, COMMAND_JUDGE_RULES);
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, 120_000);
  const maxOutputBytes = options.maxOutputBytes ?? 2_000;
  const passEnv = options.passEnv ?? 'safe';
  const sandbox = chooseSandbox(options.sandbox);
  const network = options.network === true;
  // Redacted whole before it is cut: reports print the name, and a secret cut short no longer matches its rule.
  const shown = redact(command);
  const name = options.name ?? `command: ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;

  return {
    name,
    async judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict> {
      signal?.throwIfAborted();
      const base = input.workingDirectory;
      const cwd = options.cwd === undefined ? base : base === undefined ? options.cwd : path.resolve(base, options.cwd);
      if (cwd === undefined || (!path.isAbsolute(cwd) && base === undefined)) {
        return { judge: name, status: 'abstain', reasoning: 'No working directory to run the command in.' };
      }
      // Real paths: bwrap mounts them, and a link in the path would mount (or hide) the wrong directory.
      const directory = realDirectory(cwd);
      const writableRoots = base === undefined ? [] : [realDirectory(path.resolve(base))].filter((d): d is string => d !== undefined && d !== directory);
      let outcome: CommandOutcome;
      try {
        if (directory === undefined) throw new Error(`${cwd} does not exist or cannot be read`);
        if (sandbox === 'bubblewrap') assertBubblewrapOutside([directory, ...writableRoots], 'workingDirectory');
        outcome = await runLaunched(
          command,
          {
            sandbox,
            workingDirectory: directory,
            writableRoots,
            network,
            hostEnvironment: () => ({ ...(passEnv === 'all' ? withoutUndefined(process.env) : withoutSecrets(process.env)), ...options.env }),
            // HOME in the private /tmp: judging leaves nothing behind in the working directory.
            sandboxEnvironment: () => sandboxEnvironment({ home: '/tmp', workingDirectory: directory, env: options.env }),
          },
          { timeoutMs, maxOutputBytes, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        return { judge: name, status: 'error', reasoning: redact(`\`${command}\` could not be started: ${(error as Error).message}`) };
      }
      if (outcome.end === 'aborted') throw signal?.reason ?? new Error('aborted');
      const excerpt = outcome.output.trim() === '' ? '(no output)' : `Output:\n${outcome.output}`;
      if (outcome.end === 'exited' && outcome.exitCode === 0) {
        return { judge: name, status: 'pass', score: 1, reasoning: redact(`\`${command}\` exited with code 0. ${excerpt}`) };
      }
      if (outcome.end === 'exited' && (outcome.exitCode === NOT_FOUND || outcome.exitCode === NOT_EXECUTABLE)) {
        return { judge: name, status: 'error', reasoning: redact(`\`${command}\` could not be run (exit code ${outcome.exitCode}). ${excerpt}`) };
      }
      const how =
        outcome.end === 'timed_out'
          ? `did not finish within ${timeoutMs} ms`
          : outcome.end === 'signaled'
            ? `was killed by ${outcome.signal ?? 'a signal'}`
            : `exited with code ${outcome.exitCode ?? 'unknown'}`;
      return { judge: name, status: 'fail', score: 0, reasoning: redact(`\`${command}\` ${how}. ${excerpt}`) };
    },
  };
}
