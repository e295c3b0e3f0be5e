import { spawnSync } from 'node:child_process';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';

/**
 * How shell commands are confined: `'bubblewrap'` runs each in a bubblewrap
 * sandbox (see {@link bubblewrapArgs}); `'none'` runs them as plain child
 * processes; `'auto'` picks bubblewrap when it works on this host.
 */
export type SandboxMode = 'bubblewrap' | 'none' | 'auto';

/** Whether bubblewrap works here, and if not, why. */
export type BubblewrapProbe = { readonly usable: true } | { readonly usable: false; readonly reason: string };

/** Thrown at construction when `sandbox: 'bubblewrap'` is asked for on a host where it cannot run. */
export class SandboxUnavailableError extends GovernorError {
  constructor(reason: string) {
    super(
      'GOVERNOR_SANDBOX_UNAVAILABLE',
      `The bubblewrap sandbox cannot run on this host: ${reason}. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), enable unprivileged user namespaces, or pass sandbox: 'none'.`,
    );
  }
}

let probed: BubblewrapProbe | undefined;

/**
 * Checks once per process whether `bwrap` is installed and can create the
 * namespaces the sandbox needs (user namespaces may be disabled, or a
 * container may forbid them), by running `true` in the same kind of sandbox.
 */
export function probeBubblewrap(): BubblewrapProbe {
  if (probed !== undefined) return probed;
  const result = spawnSync(
    'bwrap',
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent', '--', '/bin/true'],
    {
      env: { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    },
  );
  const error = result.error as NodeJS.ErrnoException | undefined;
  if (error?.code === 'ENOENT') probed = { usable: false, reason: 'bwrap is not installed (not found on PATH)' };
  else if (error !== undefined) probed = { usable: false, reason: `bwrap could not be run: ${error.message}` };
  else if (result.status !== 0) {
    const said = result.stderr.toString().trim().split('\n')[0] ?? '';
    probed = {
      usable: false,
      reason: `bwrap failed to create its namespaces (${said || `exit ${String(result.status ?? result.signal)}`}); user namespaces may be disabled`,
    };
  } else probed = { usable: true };
  return probed;
}

/** The sandbox chosen for a mode, with the one-line warning to show when `'auto'` had to fall back. */
export interface ResolvedSandbox {
  readonly kind: 'bubblewrap' | 'none';
  readonly warning: string | undefined;
}

/**
 * Resolves a {@link SandboxMode} on this host.
 * @throws InvalidOptionError for an unknown mode
 * @throws SandboxUnavailableError for `'bubblewrap'` when bwrap cannot run here
 */
export function resolveSandbox(mode: SandboxMode | undefined, option = 'sandbox'): ResolvedSandbox {
  const chosen = mode ?? 'auto';
  if (chosen === 'none') return { kind: 'none', warning: undefined };
  if (chosen !== 'bubblewrap' && chosen !== 'auto') {
    throw new InvalidOptionError(option, `must be 'bubblewrap', 'none' or 'auto', got ${String(mode)}`);
  }
  const probe = probeBubblewrap();
  if (probe.usable) return { kind: 'bubblewrap', warning: undefined };
  if (chosen === 'bubblewrap') throw new SandboxUnavailableError(probe.reason);
  return { kind: 'none', warning: `commands run without a sandbox: ${probe.reason}` };
}

/** What one sandboxed command may reach. */
export interface BubblewrapLayout {
  /** Mounted read-write; the command starts here. */
  readonly workingDirectory: string;
  /** Further directories mounted read-write. */
  readonly writableRoots: readonly string[];
  /** Keep the host's network; otherwise the sandbox has only its own loopback. */
  readonly network: boolean;
}

/**
 * The `bwrap` arguments (program first) that put a command in the sandbox:
 * the host file system read-only, a private `/tmp`, `/dev` and `/proc` of its
 * own, the working directory and `writableRoots` read-write, every namespace
 * unshared (PID: it sees only its own processes; network unless `network`),
 * no capabilities even when the host process is root, a new session (no
 * terminal injection), and `--die-with-parent`. The environment is not set
 * here: the caller starts bwrap with only the variables the command may see,
 * so neither bwrap nor anything inside holds another one.
 */
export function bubblewrapArgs(layout: BubblewrapLayout): string[] {
  const args = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // After the /tmp tmpfs, so that directories under /tmp are mounted over it.
  for (const directory of [layout.workingDirectory, ...layout.writableRoots]) args.push('--bind', directory, directory);
  args.push('--chdir', layout.workingDirectory, '--unshare-all');
  if (layout.network) args.push('--share-net');
  args.push('--cap-drop', 'ALL', '--new-session', '--die-with-parent', '--');
  return args;
}
