import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { peerVersionProblem } from './peer-versions.ts';

/** A project whose node_modules holds these packages at these versions (undefined: a package that does not export its package.json). */
async function projectWith(t: { after(fn: () => Promise<void>): void }, packages: Record<string, string | undefined>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'governor-peers-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  for (const [name, version] of Object.entries(packages)) {
    const at = path.join(dir, 'node_modules', name);
    await fs.mkdir(at, { recursive: true });
    const exported = version === undefined ? { '.': './index.js' } : { './package.json': './package.json' };
    await fs.writeFile(path.join(at, 'package.json'), JSON.stringify({ name, version: version ?? '7.0.0', exports: exported }));
  }
  return dir;
}

test('an ai of another major is named, with the install that fixes it', async (t) => {
  assert.equal(
    peerVersionProblem(await projectWith(t, { ai: '6.0.326', zod: '4.1.8' })),
    'agent-governor needs the package "ai" 7, and 6.0.326 is installed. Run: npm install ai@^7',
  );
  assert.equal(
    peerVersionProblem(await projectWith(t, { ai: '7.1.0', zod: '3.25.0' })),
    'agent-governor needs the package "zod" 4, and 3.25.0 is installed. Run: npm install zod@^4',
  );
});

test('a peer that is not installed is named, with the install that fixes it', async (t) => {
  assert.equal(
    peerVersionProblem(await projectWith(t, { zod: '4.1.8' })),
    'agent-governor needs the package "ai", which is not installed. Run: npm install ai@^7',
  );
  assert.equal(
    peerVersionProblem(await projectWith(t, { ai: '7.1.0' })),
    'agent-governor needs the package "zod", which is not installed. Run: npm install zod@^4',
  );
});

test('the installed majors, or a version that cannot be read, are no problem', async (t) => {
  assert.equal(peerVersionProblem(), undefined, "this repository's own");
  assert.equal(peerVersionProblem(await projectWith(t, { ai: '7.1.0', zod: '4.1.8' })), undefined);
  assert.equal(peerVersionProblem(await projectWith(t, { ai: undefined, zod: '4.1.8' })), undefined, 'its package.json not exported: left to linking');
});
