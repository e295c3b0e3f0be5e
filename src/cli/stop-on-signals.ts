import { EXIT_CODES } from './cli-command.ts';
import type { CliIO } from './progress.ts';

const SIGNAL_EXIT_CODES = { SIGINT: EXIT_CODES.interrupted, SIGTERM: EXIT_CODES.terminated } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

/** The first SIGINT or SIGTERM that stopped a run, as {@link stopOnSignals} saw it. */
export interface StopSignals {
  /** The exit code for the signal that stopped the run (130, 143), or `undefined` when none came. */
  readonly exitCode: number | undefined;
  /** The run is over: a signal from now on quits at once. */
  runEnded(): void;
}

/**
 * For a CLI command that runs agents: the first SIGINT or SIGTERM (Ctrl-C, a
 * supervisor, `timeout`, `docker stop`) aborts `interrupt` (the shell tool
 * then kills the running command's process group) and says so on stderr, so
 * that the caller can report the run so far. A second signal, or any signal
 * once the run has ended, quits at once: `beforeQuit` runs, then the process
 * exits, and on the way out the harness SIGKILLs every command group still
 * alive.
 *
 * The listeners stay until the process exits. An aborted run returns at once,
 * while the command's group may still be dying (it is given 2 s between
 * SIGTERM and SIGKILL); with no listener left, a second Ctrl-C there would
 * kill the process by default, with no 'exit' event, and a command that
 * ignored SIGTERM would outlive it.
 */
export function stopOnSignals(interrupt: AbortController, io: CliIO, beforeQuit: () => void = () => {}): StopSignals {
  let stoppedBy: StopSignal | undefined;
  let ended = false;
  const onSignal = (signal: StopSignal): void => {
    if (ended || interrupt.signal.aborted) {
      beforeQuit();
      process.exit(SIGNAL_EXIT_CODES[signal]);
    }
    stoppedBy = signal;
    if (signal === 'SIGINT') {
      io.stderr.write('\nInterrupted: stopping the agent and its running command (Ctrl-C again to quit at once).\n');
      interrupt.abort(new Error('interrupted by the user (Ctrl-C)'));
    } else {
      io.stderr.write('\nTerminated (SIGTERM): stopping the agent and its running command (a second signal quits at once).\n');
      interrupt.abort(new Error('terminated (SIGTERM)'));
    }
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  return {
    get exitCode() {
      return stoppedBy === undefined ? undefined : SIGNAL_EXIT_CODES[stoppedBy];
    },
    runEnded() {
      ended = true;
    },
  };
}
