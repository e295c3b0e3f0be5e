import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * A base directory outside /tmp where possible: the sandbox gives commands a
 * private /tmp, so a target under /tmp would not even be visible to them.
 */
export function outsideTmpDirectory(): string {
  for (const candidate of ['/var/tmp', tmpdir()]) {
    try {
      accessSync(candidate, constants.W_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return tmpdir();
}

/** Host processes whose command line contains `marker`. */
export function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(Number(pid));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}
