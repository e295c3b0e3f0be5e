/**
 * Processes as tests of the MCP proxy's process handling see them: whether
 * one still runs, the pid a test server wrote, and ending what a test started.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * Whether process `pid` still runs. A zombie does not: it has exited, and is
 * only waiting to be reaped (which an init that does not reap never does).
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // The state follows the name in parentheses, which may itself hold spaces or parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: the signal check is all there is
  }
}

/** The pid written to `file`, once it has been (within 20 s). */
export async function pidIn(file: string): Promise<number> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+\s*$/.test(text)) return Number(text);
  }
  throw new Error(`no pid was written to ${file}`);
}

/** The pids written to those of `files` that have one: what a test must end, however far it got. */
export function pidsIn(files: readonly string[]): number[] {
  return files.flatMap((file) => {
    try {
      const text = readFileSync(file, 'utf8');
      return /^\d+\s*$/.test(text) ? [Number(text)] : [];
    } catch {
      return [];
    }
  });
}

/** The pids of `pids` that still run after `ms` (at once when none does). */
export async function stillRunning(pids: readonly number[], ms = 1_000): Promise<number[]> {
  for (const deadline = Date.now() + ms; pids.some(isRunning) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(isRunning);
}

/** How `child` exited, or `timeout` when it still runs after `ms`. */
export async function exitOf(child: ChildProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'timeout'> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
  let timer: NodeJS.Timeout | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const outcome = await Promise.race([exited, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]);
  clearTimeout(timer);
  return outcome;
}

/** Ends each process of `pids` that still runs, whatever it is doing: the cleanup of a test, which must not leave any behind. */
export function killAll(pids: readonly (number | undefined)[]): void {
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
