import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { peerVersionProblem } from './peer-versions.ts';

async function projectWithAi(t: { after(fn: () => Promise<void>): void }, version: string | undefined): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'governor-peers-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  if (version !== undefined) {
    const ai = path.join(dir, 'node_modules', 'ai');
    await fs.mkdir(ai, { recursive: true });
    await fs.writeFile(path.join(ai, 'package.json'), JSON.stringify({ name: 'ai', version, exports: { './package.json': './package.json' } }));
  }
  return dir;
}

test('an ai of another major is named, with the install that fixes it', async (t) => {
  assert.equal(
    peerVersionProblem(await projectWithAi(t, '6.0.326')),
    'agent-governor needs the package "ai" 7, and 6.0.326 is installed. Run: npm install ai@^7',
  );
});

test('the installed ai 7, or none that can be read, is no problem', async (t) => {
  assert.equal(peerVersionProblem(), undefined, "this repository's own");
  assert.equal(peerVersionProblem(await projectWithAi(t, '7.1.0')), undefined);
  assert.equal(peerVersionProblem(await projectWithAi(t, undefined)), undefined, 'not installed: the missing package is named where it is imported');
});
