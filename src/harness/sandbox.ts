import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';

/**
 * How shell commands are confined: `'bubblewrap'` runs each in a bubblewrap
 * sandbox (see {@link bubblewrapArgs}); `'none'` runs them as plain child
 * processes; `'auto'` picks bubblewrap when it works on this host.
 */
export type SandboxMode = 'bubblewrap' | 'none' | 'auto';

/** Whether bubblewrap works here (and the absolute path of the `bwrap` that does), and if not, why. */
export type BubblewrapProbe = { readonly usable: true; readonly path: string } | { readonly usable: false; readonly reason: string };

/** Thrown at construction when `sandbox: 'bubblewrap'` is asked for on a host where it cannot run. */
export class SandboxUnavailableError extends GovernorError {
  declare readonly code: 'GOVERNOR_SANDBOX_UNAVAILABLE';
  constructor(reason: string) {
    super(
      'GOVERNOR_SANDBOX_UNAVAILABLE',
      `The bubblewrap sandbox cannot run on this host: ${reason}. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), enable unprivileged user namespaces, or pass sandbox: 'none'.`,
    );
  }
}

let probed: BubblewrapProbe | undefined;

/**
 * The real path of the first executable `bwrap` in an absolute directory of
 * this process's PATH. Relative and empty entries are skipped: they name the
 * current directory, which for a shell tool is the working directory that
 * commands write to, and a `bwrap` planted there would run on the host.
 */
function findBubblewrap(): string | undefined {
  for (const directory of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(directory)) continue;
    const candidate = path.join(directory, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return realpathSync(candidate);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * Checks once per process whether `bwrap` is installed and can create the
 * namespaces the sandbox needs (user namespaces may be disabled, or a
 * container may forbid them), by running `true` in the same kind of sandbox.
 * The `bwrap` found then, by its absolute path, is the one every sandboxed
 * command is started with: a later change of PATH, or a `bwrap` a command
 * writes into a directory on PATH, is never run.
 */
export function probeBubblewrap(): BubblewrapProbe {
  if (probed !== undefined) return probed;
  const executable = findBubblewrap();
  if (executable === undefined) {
    probed = { usable: false, reason: 'bwrap is not installed (not found on PATH)' };
    return probed;
  }
  const result = spawnSync(
    executable,
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
  } else probed = { usable: true, path: executable };
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
  // What the warning must say: without one, a command reads this process's environment (its keys) through /proc.
  return { kind: 'none', warning: `commands run without a sandbox, and can read the environment of this process: ${probe.reason}` };
}

/** What one sandboxed command may reach. */
export interface BubblewrapLayout {
  /** Mounted read-write; the command starts here. */
  readonly workingDirectory: string;
  /** Further directories mounted read-write. */
  readonly writableRoots: readonly string[];
  /**
   * Keep the host's network; otherwise the sandbox has only its own loopback,
   * and the host's Unix sockets are hidden (see {@link bubblewrapArgs}).
   */
  readonly network: boolean;
}

/** Whether `child` is `parent` or lies inside it (both absolute and normalised). */
function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

/** The real path of `candidate` when it is a directory, else `undefined`. */
function realDirectory(candidate: string | undefined): string | undefined {
  if (candidate === undefined || !path.isAbsolute(candidate)) return undefined;
  try {
    const real = realpathSync(candidate);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where host services put their Unix sockets (`/run` and `/var/run`: Docker,
 * containerd, Podman, PostgreSQL, MySQL, D-Bus, systemd, snapd; the user's
 * `XDG_RUNTIME_DIR`: the session bus, gpg-agent, PipeWire, rootless Docker;
 * `/var/tmp`), each hidden under an empty tmpfs when the network is off.
 * `/tmp` is always private and `/dev` (with `/dev/shm`) is bubblewrap's own.
 */
export function socketDirectories(): string[] {
  const found = new Set<string>();
  for (const candidate of ['/run', '/var/run', '/var/tmp', process.env['XDG_RUNTIME_DIR']]) {
    const real = realDirectory(candidate);
    if (real !== undefined && real !== '/') found.add(real);
  }
  const all = [...found];
  // A directory inside another one is hidden with it.
  return all.filter((dir) => !all.some((other) => other !== dir && isWithin(dir, other)) && !isWithin(dir, '/tmp')).sort();
}

/**
 * The real paths of the Unix sockets listening on this host right now (in
 * this process's network namespace), from `/proc/net/unix`; empty where it
 * cannot be read. Abstract sockets are left out: the sandbox's own network
 * namespace already keeps them out of reach.
 */
function hostUnixSockets(): string[] {
  let table: string;
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return [];
  }
  const found = new Set<string>();
  // Num: RefCount Protocol Flags Type St Inode Path
  for (const line of table.split('\n')) {
    const socketPath = /^\s*[0-9a-f]+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\d+ (\/.*)$/i.exec(line)?.[1];
    if (socketPath === undefined) continue;
    try {
      if (!lstatSync(socketPath).isSocket()) continue;
      found.add(path.join(realpathSync(path.dirname(socketPath)), path.basename(socketPath)));
    } catch {
      // Gone, or in a directory this process cannot search (so nothing it starts can reach it either).
    }
  }
  return [...found].sort();
}

/**
 * The `bwrap` arguments (program first, by the absolute path
 * {@link probeBubblewrap} found) that put a command in the sandbox: the host
 * file system read-only, a private `/tmp`, `/dev` and `/proc` of its own, the
 * working directory and `writableRoots` read-write, every namespace unshared
 * (PID: it sees only its own processes; network unless `network`), no
 * capabilities even when the host process is root, a new session (no terminal
 * injection), and `--die-with-parent`. The environment is not set here: the
 * caller starts bwrap with only the variables the command may see, so neither
 * bwrap nor anything inside holds another one.
 *
 * Without `network`, the host's Unix sockets are out of reach too (a read-only
 * mount does not stop `connect()` on a socket file): the directories where
 * services keep them ({@link socketDirectories}) are covered with empty tmpfs
 * mounts, and every other socket listening on the host when the arguments are
 * built ({@link hostUnixSockets}), in the home directory, the working
 * directory or anywhere else, is covered by a read-only `/dev/null`, so that
 * connecting to it is refused. Build the arguments right before each command:
 * a socket created later is not covered.
 */
export function bubblewrapArgs(layout: BubblewrapLayout): string[] {
  const bwrap = probed?.usable ? probed.path : (findBubblewrap() ?? 'bwrap');
  const args = [bwrap, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  const masked = layout.network ? [] : socketDirectories();
  for (const directory of masked) args.push('--tmpfs', directory);
  // After the tmpfs mounts, so that directories under /tmp (or a masked directory) are mounted over them.
  const writable = [layout.workingDirectory, ...layout.writableRoots];
  for (const directory of writable) args.push('--bind', directory, directory);
  if (!layout.network) {
    // Last, so that they also cover sockets inside the writable directories.
    const hidden = ['/tmp', '/dev', ...masked];
    for (const socket of hostUnixSockets()) {
      const visible = writable.some((dir) => isWithin(socket, dir)) || !hidden.some((dir) => isWithin(socket, dir));
      if (visible) args.push('--ro-bind', '/dev/null', socket);
    }
  }
  args.push('--chdir', layout.workingDirectory, '--unshare-all');
  if (layout.network) args.push('--share-net');
  args.push('--cap-drop', 'ALL', '--new-session', '--die-with-parent', '--');
  return args;
}
