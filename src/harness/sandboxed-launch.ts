import path from 'node:path';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { runCommand, type CommandOutcome, type RunCommandOptions } from './run-command.ts';
import { bubblewrapArgs, probeBubblewrap, resolveSandbox, type SandboxMode } from './sandbox.ts';

/**
 * How commands that run agent-written code are started, shared by
 * `shellTool` and `commandJudge`: the choice of sandbox (with its warning),
 * the environment under bubblewrap, the `bwrap` command line built anew for
 * each command, and the retry when a host socket vanished under it.
 */

/**
 * Variables that change how the dynamic loader (and glibc) behave in `bwrap`
 * itself, which runs on the host: one pointing into the working directory
 * would load a command's file there outside the sandbox. They are handed to
 * bwrap with `--setenv`, for the command only.
 */
const LOADER_VARIABLE = /^(?:LD_\w*|GCONV_PATH|LOCPATH)$/;

const warned = new Set<string>();

/** The no-sandbox warning, once per process and reason: a line on stderr through Node's warning channel. */
function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  process.emitWarning(message, { code: 'GOVERNOR_NO_SANDBOX' });
}

/**
 * Resolves `mode` on this host (see `resolveSandbox`); when `'auto'` falls
 * back to no sandbox, warns once per process.
 * @throws SandboxUnavailableError for `'bubblewrap'` when bwrap cannot run here
 */
export function chooseSandbox(mode: SandboxMode | undefined): 'bubblewrap' | 'none' {
  const sandbox = resolveSandbox(mode);
  if (sandbox.warning !== undefined) warnOnce(sandbox.warning);
  return sandbox.kind;
}

/** Whether `child` is `parent` or lies inside it. */
function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Refuses a layout where a command could replace the `bwrap` executable: the
 * next command would start the replacement on the host.
 * @throws InvalidOptionError naming `option`
 */
export function assertBubblewrapOutside(writable: readonly string[], option: string): void {
  const probe = probeBubblewrap();
  if (probe.usable && writable.some((directory) => isWithin(probe.path, directory))) {
    throw new InvalidOptionError(option, `must not contain the bwrap executable (${probe.path}), which commands could replace`);
  }
}

/** What a sandboxed command's environment is built from. */
export interface SandboxEnvironmentInput {
  /** HOME inside the sandbox. */
  readonly home: string;
  /** PWD: where the command starts. */
  readonly workingDirectory: string;
  /** Set over the allow-list; `undefined` removes a variable. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * The environment of a sandboxed command, built from nothing: bwrap and
 * everything it starts hold only PATH, HOME, TMPDIR (`/tmp`, private), LANG,
 * LC_ALL, TERM, PWD and `env`.
 */
export function sandboxEnvironment(input: SandboxEnvironmentInput): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: input.home,
    TMPDIR: '/tmp',
    LANG: process.env['LANG'] ?? 'C.UTF-8',
    LC_ALL: process.env['LC_ALL'],
    TERM: process.env['TERM'] ?? 'dumb',
    PWD: input.workingDirectory,
    ...input.env,
  };
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Where and how one kind of command is started. */
export interface LaunchPlan {
  readonly sandbox: 'bubblewrap' | 'none';
  /** The command starts here; read-write under the sandbox. */
  readonly workingDirectory: string;
  /** Further directories mounted read-write under the sandbox. */
  readonly writableRoots: readonly string[];
  /** Under the sandbox, keep the host's network (see `bubblewrapArgs`). */
  readonly network: boolean;
  /** The environment of a command without a sandbox, built for each command. */
  readonly hostEnvironment: () => Record<string, string>;
  /** The complete environment of a sandboxed command (see {@link sandboxEnvironment}), built for each command. */
  readonly sandboxEnvironment: () => Record<string, string>;
  /**
   * A program and its arguments that run, as part of the command (inside the
   * sandbox when there is one), before the command's shell, which they must
   * `exec` as their remaining arguments.
   * @default none
   */
  readonly prelude?: readonly string[];
}

/** How to start one command, and with which environment. */
function launch(plan: LaunchPlan): { launcher: string[]; env: Record<string, string> } {
  const prelude = plan.prelude ?? [];
  if (plan.sandbox === 'none') return { launcher: [...prelude], env: plan.hostEnvironment() };
  const env: Record<string, string> = {};
  // Built anew each time, so that they hide the host's Unix sockets listening right now.
  const args = bubblewrapArgs({ workingDirectory: plan.workingDirectory, writableRoots: plan.writableRoots, network: plan.network });
  const separator = args.pop(); // '--'
  for (const [name, value] of Object.entries(plan.sandboxEnvironment())) {
    if (LOADER_VARIABLE.test(name)) args.push('--setenv', name, value);
    else env[name] = value;
  }
  return { launcher: [...args, separator ?? '--', ...prelude], env };
}

/**
 * bwrap failed before starting the command because a host socket it was to
 * cover went away in between (it cannot create the mount point on the
 * read-only file system): the command never ran, and may be started again.
 */
function socketVanished(outcome: CommandOutcome, launcher: readonly string[]): boolean {
  if (outcome.end !== 'exited' || outcome.exitCode !== 1 || !outcome.output.startsWith('bwrap: ')) return false;
  for (let i = 0; i + 2 < launcher.length && launcher[i] !== '--'; i += 1) {
    if (launcher[i] === '--ro-bind' && launcher[i + 1] === '/dev/null' && outcome.output.startsWith(`bwrap: Can't create file at ${launcher[i + 2]}:`))
      return true;
  }
  return false;
}

/** The limits of one command (see `runCommand`). */
export type LaunchLimits = Pick<RunCommandOptions, 'timeoutMs' | 'maxOutputBytes' | 'killGraceMs' | 'signal'>;

/**
 * Runs `command` as `plan` says, with `runCommand`'s guarantees (its own
 * process group, ended with it; under the sandbox, whose PID namespace ends
 * with the command, everything it started, detached daemons included). Under the sandbox, a
 * start that failed only because a host socket vanished is tried again (twice
 * at most).
 * @throws CommandStartError when the command cannot be started at all
 */
export async function runLaunched(command: string, plan: LaunchPlan, limits: LaunchLimits): Promise<CommandOutcome> {
  let startedWith: string[] = [];
  const start = (): Promise<CommandOutcome> => {
    const { launcher, env } = launch(plan);
    startedWith = launcher;
    return runCommand(command, { ...limits, cwd: plan.workingDirectory, env, launcher });
  };
  let outcome = await start();
  for (let retry = 0; retry < 2 && plan.sandbox === 'bubblewrap' && socketVanished(outcome, startedWith); retry += 1) outcome = await start();
  return outcome;
}
