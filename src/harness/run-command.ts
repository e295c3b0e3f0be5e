import { spawn } from 'node:child_process';
import { GovernorError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { CappedOutput } from './capped-output.ts';

/** Thrown when a command's shell could not be started at all (not when the command fails). */
export class CommandStartError extends GovernorError {
  declare readonly code: 'GOVERNOR_COMMAND_START_FAILED';
  constructor(cwd: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    // Node reports a missing cwd as the shell being missing (ENOENT), hence the hint.
    super('GOVERNOR_COMMAND_START_FAILED', `Could not start /bin/sh in ${cwd} (does the directory exist?): ${detail}`, { cause });
  }
}

/** How to run one shell command. */
export interface RunCommandOptions {
  /** Directory the command starts in. */
  cwd: string;
  /** The command's complete environment. */
  env: Record<string, string>;
  /**
   * Wall-clock limit on the shell; when it passes before the shell exits, the
   * command's whole process group is killed. It stops when the shell exits.
   */
  timeoutMs: number;
  /** Most output bytes kept (head and tail); the rest is counted and cut. */
  maxOutputBytes: number;
  /**
   * Time between SIGTERM and SIGKILL when killing the process group.
   * @default 2000
   */
  killGraceMs?: number;
  /** Aborting kills the process group like a timeout does. */
  signal?: AbortSignal;
  /**
   * A program and its arguments that run `/bin/sh -c command` for us, such as
   * a sandbox (`bubblewrapArgs`); it leads the process group instead of the shell.
   * @default none: the shell is started directly
   */
  launcher?: readonly string[];
}

const RUN_COMMAND_RULES: OptionRules<RunCommandOptions> = {
  cwd: is.string({ nonEmpty: true }),
  env: is.recordOf(is.string()),
  timeoutMs: is.timeMs(),
  maxOutputBytes: is.integer(2),
  killGraceMs: is.timeMs(0),
  signal: is.having('an AbortSignal', 'aborted', 'addEventListener'),
  launcher: is.arrayOf(is.string({ nonEmpty: true })),
};

/** What happened to a command. */
export interface CommandOutcome {
  /**
   * `exited` with a code, `signaled` by someone else, or ended by us
   * (`timed_out`: the shell was still running at `timeoutMs`; `aborted`).
   */
  end: 'exited' | 'signaled' | 'timed_out' | 'aborted';
  /** Exit code of the shell, when it exited. */
  exitCode: number | null;
  /** Signal that ended the shell, when one did. */
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved, capped (see {@link CappedOutput}). */
  output: string;
  /** Output bytes dropped by the cap. */
  cutBytes: number;
  /** Processes the command left running in its process group were terminated when it ended. */
  terminatedLeftovers: boolean;
  /**
   * A process outside the command's group (started with `setsid`, say) still held
   * the output open after the shell ended; we stopped reading rather than wait.
   */
  abandonedOutput: boolean;
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone; nothing else can fail for our own group.
  }
}

/**
 * Process groups of commands that may still be alive. They are SIGKILLed if
 * this process exits first (a second Ctrl-C, `process.exit`): the SIGKILL
 * timer of a group that ignored SIGTERM dies with us, and the group would
 * live on, reparented to init.
 */
const liveGroups = new Set<number>();
let killingLiveGroupsOnExit = false;

function trackGroup(pgid: number): void {
  if (!killingLiveGroupsOnExit) {
    killingLiveGroupsOnExit = true;
    // 'exit' listeners may only do synchronous work: process.kill is.
    process.on('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
  liveGroups.add(pgid);
}

/**
 * Runs `command` with `/bin/sh -c` as the leader of a new process group, so that a
 * timeout or an abort can end the shell and what it started in its group
 * (SIGTERM to the group, then SIGKILL after a grace period). When the shell exits, whatever it left behind in
 * its group is terminated too. A process that moves itself to another group or
 * session (`setsid`, daemons) escapes all of this and may outlive the command;
 * only a launcher such as a sandbox with its own PID namespace can end it. If
 * it keeps the output open, reading stops `killGraceMs` + 250 ms after the
 * shell exits (`abandonedOutput`), so it cannot hang the caller; the outcome
 * is still the shell's exit, whatever `timeoutMs`. If this process exits while
 * the group may be alive, the group is SIGKILLed first.
 *
 * stdin is empty, so a command waiting for input ends instead of hanging.
 *
 * @throws CommandStartError when the shell cannot be spawned (for example a
 *   missing `cwd`). A command that fails still resolves, with its exit code.
 */
export function runCommand(command: string, options: RunCommandOptions): Promise<CommandOutcome> {
  try {
    validateOptions('runCommand', options, RUN_COMMAND_RULES, { required: ['cwd', 'env', 'timeoutMs', 'maxOutputBytes'] });
  } catch (error) {
    return Promise.reject(error);
  }
  const { cwd, env, timeoutMs, maxOutputBytes, killGraceMs = 2000, signal, launcher = [] } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      resolve({ end: 'aborted', exitCode: null, signal: null, output: '', cutBytes: 0, terminatedLeftovers: false, abandonedOutput: false });
      return;
    }
    // One pipe for both streams keeps their order; the shell's own parse errors
    // (written before the redirection runs) still arrive through stderr.
    const argv = [...launcher, '/bin/sh', '-c', `exec 2>&1\n${command}`];
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    if (pgid !== undefined) trackGroup(pgid);
    const output = new CappedOutput(maxOutputBytes);
    child.stdout.on('data', (chunk: Buffer) => output.append(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.append(chunk));

    let endedBy: 'timed_out' | 'aborted' | undefined;
    let terminatedLeftovers = false;
    let abandonedOutput = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      const pid = child.pid;
      if (pid === undefined || !signalGroup(pid, 'SIGTERM') || killTimer !== undefined) return;
      // Unref'd: a leftover that ignores SIGTERM must not keep the host process alive.
      killTimer = setTimeout(() => {
        signalGroup(pid, 'SIGKILL');
        liveGroups.delete(pid);
      }, killGraceMs).unref();
    };
    const timer = setTimeout(() => {
      endedBy ??= 'timed_out';
      killGroup();
    }, timeoutMs);
    const onAbort = (): void => {
      endedBy ??= 'aborted';
      killGroup();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanUp = (): void => {
      clearTimeout(timer);
      clearTimeout(drainTimer);
      signal?.removeEventListener('abort', onAbort);
    };

    child.on('exit', () => {
      // The shell's end is the command's: waiting on a held pipe is not running out of time.
      clearTimeout(timer);
      if (endedBy === undefined && child.pid !== undefined && signalGroup(child.pid, 0)) {
        terminatedLeftovers = true;
        killGroup();
      }
      // Everything in the group is dead by the end of the grace period; whoever
      // still holds the pipes escaped the group and must not keep us waiting.
      drainTimer = setTimeout(() => {
        abandonedOutput = true;
        child.stdout.destroy();
        child.stderr.destroy();
      }, killGraceMs + 250);
    });
    child.on('close', (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      cleanUp();
      // Keep the SIGKILL pending only while someone in the group may still be alive.
      if (pgid !== undefined && !signalGroup(pgid, 0)) {
        clearTimeout(killTimer);
        liveGroups.delete(pgid);
      }
      const end: CommandOutcome['end'] = endedBy ?? (exitSignal === null ? 'exited' : 'signaled');
      resolve({
        end,
        exitCode,
        signal: exitSignal,
        output: output.toString(),
        cutBytes: output.cutBytes,
        terminatedLeftovers,
        abandonedOutput,
      });
    });
    child.on('error', (error) => {
      cleanUp();
      if (pgid !== undefined) liveGroups.delete(pgid);
      reject(new CommandStartError(cwd, error));
    });
  });
}
