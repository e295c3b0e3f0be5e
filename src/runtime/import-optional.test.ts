import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { MissingDependencyError } from '../errors/missing-dependency-error.ts';
import { importOptional } from './import-optional.ts';

/** The URL of the entry of package `name`, installed in a folder of its own, whose code re-exports `dependency`. */
async function packageReexporting(t: { after(fn: () => Promise<void>): void }, name: string, dependency: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'governor-optional-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, 'node_modules', name);
  await fs.mkdir(pkg, { recursive: true });
  await fs.writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name, type: 'module', exports: './index.js' }));
  await fs.writeFile(path.join(pkg, 'index.js'), `export * from '${dependency}';\n`);
  return pathToFileURL(path.join(pkg, 'index.js')).href;
}

test('importOptional names the package to install when it is missing', async () => {
  await assert.rejects(
    importOptional('no-such-package-xyz', 'The thing', () => import('no-such-package-xyz' as string)),
    (error: unknown) =>
      MissingDependencyError.isInstance(error) && error.packageName === 'no-such-package-xyz' && /npm install no-such-package-xyz/.test(error.message),
  );
  assert.equal(await importOptional('node:path', 'Paths', async () => 42), 42);
});

test('importOptional lets through a package that is there but misses a dependency of its own', async (t) => {
  const entry = await packageReexporting(t, 'present-pkg', 'absent-inner-dep');
  await assert.rejects(
    importOptional('present-pkg', 'The thing', () => import(entry)),
    (error: unknown) => !MissingDependencyError.isInstance(error) && /absent-inner-dep/.test(String((error as Error).message)),
  );
  // Named by a subpath, the package itself is the missing one.
  await assert.rejects(
    importOptional('@no-such-scope/pkg', 'The thing', () => import('@no-such-scope/pkg/sub' as string)),
    (error: unknown) => MissingDependencyError.isInstance(error) && error.packageName === '@no-such-scope/pkg',
  );
});

test("importOptional names a peer of the package that is missing, when it is one of the package's peers", async (t) => {
  const entry = await packageReexporting(t, 'framework', '@framework/core');
  await assert.rejects(
    importOptional('framework', 'The thing', () => import(entry), { peers: ['@framework/core'] }),
    (error: unknown) =>
      MissingDependencyError.isInstance(error) && error.packageName === '@framework/core' && /npm install @framework\/core/.test(error.message),
  );
});
