import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { MissingDependencyError } from '../errors/missing-dependency-error.ts';
import { OPTIONAL_PEERS, optionalPeerMismatch, peerVersionProblem } from './peer-versions.ts';

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

test('an optional peer outside its range is named with the range to install; one in range, or absent, is no mismatch', async (t) => {
  const dir = await projectWith(t, {
    redis: '4.7.1',
    '@modelcontextprotocol/sdk': '1.29.0',
    '@openai/agents': '0.19.3',
    pg: '8.16.3',
    // A package.json not exported (langchain 0.3 exports no main): read from the folder all the same.
    langchain: undefined,
  });
  assert.deepEqual(optionalPeerMismatch('redis', dir), { installed: '4.7.1', needs: '^6.0.0' });
  assert.deepEqual(optionalPeerMismatch('@modelcontextprotocol/sdk', dir), { installed: '1.29.0', needs: '^1.32.0' });
  assert.deepEqual(optionalPeerMismatch('@openai/agents', dir), { installed: '0.19.3', needs: '^0.20.0' }, 'a 0.x range holds its minor');
  assert.deepEqual(optionalPeerMismatch('langchain', dir), { installed: '7.0.0', needs: '^1.5.0' });
  assert.equal(optionalPeerMismatch('pg', dir), undefined);
  assert.equal(optionalPeerMismatch('@langchain/core', dir), undefined, 'not installed: loading it says so');
  assert.equal(optionalPeerMismatch('left-pad', dir), undefined, 'not an optional peer');
  assert.equal(optionalPeerMismatch('@openai/agents', await projectWith(t, { '@openai/agents': '0.20.7' })), undefined);
  assert.equal(optionalPeerMismatch('redis', await projectWith(t, { redis: '6.2.0-beta.1' })), undefined);
  const error = new MissingDependencyError('redis', 'agent-governor/redis', { installed: '4.7.1', needs: '^6.0.0' });
  assert.equal(error.message, 'agent-governor/redis needs the package "redis" ^6.0.0, and 4.7.1 is installed. Run: npm install redis@^6.0.0');
  assert.equal(error.installedVersion, '4.7.1');
});

test('the optional peers and their ranges are the ones package.json declares', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  const declared = Object.entries(manifest.peerDependencies)
    .filter(([name]) => manifest.peerDependenciesMeta[name]?.optional === true && !name.startsWith('@types/'))
    .map(([name, range]) => [name, range.replace(/^\^/, '')]);
  assert.deepEqual(Object.fromEntries(declared), OPTIONAL_PEERS);
});
