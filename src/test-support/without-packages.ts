/**
 * A copy of the project whose node_modules lacks some packages, for checking
 * what a user without an optional peer dependency gets. The source tree and
 * package.json are copied; every other installed package is linked.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ProjectCopy extends AsyncDisposable {
  readonly dir: string;
  /** Runs an ES module snippet in the copy with this Node; resolves with its stdout. */
  run(source: string): Promise<string>;
}

export async function projectWithout(excluded: readonly string[]): Promise<ProjectCopy> {
  const dir = await mkdtemp(path.join(tmpdir(), 'governor-without-'));
  await cp(path.join(ROOT, 'src'), path.join(dir, 'src'), { recursive: true });
  await cp(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  const modules = path.join(ROOT, 'node_modules');
  await mkdir(path.join(dir, 'node_modules'));
  for (const entry of await readdir(modules)) {
    if (entry.startsWith('.') || excluded.includes(entry)) continue;
    if (!entry.startsWith('@')) {
      await symlink(path.join(modules, entry), path.join(dir, 'node_modules', entry));
      continue;
    }
    await mkdir(path.join(dir, 'node_modules', entry));
    for (const scoped of await readdir(path.join(modules, entry))) {
      if (excluded.includes(`${entry}/${scoped}`) || excluded.includes(entry)) continue;
      await symlink(path.join(modules, entry, scoped), path.join(dir, 'node_modules', entry, scoped));
    }
  }
  return {
    dir,
    run: async (source) => {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', source], { cwd: dir });
      return stdout;
    },
    [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }),
  };
}
