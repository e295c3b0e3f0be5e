import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { isSupportedNode, MINIMUM_NODE_VERSION, unsupportedNodeMessage } from './node-version.ts';

test('isSupportedNode compares versions numerically against the minimum', () => {
  assert.equal(MINIMUM_NODE_VERSION, '22.13.0');
  assert.equal(isSupportedNode('22.13.0'), true);
  assert.equal(isSupportedNode('22.23.3'), true);
  assert.equal(isSupportedNode('24.0.0'), true);
  assert.equal(isSupportedNode('22.12.9'), false);
  assert.equal(isSupportedNode('22.9.0'), false);
  assert.equal(isSupportedNode('20.20.2'), false);
  assert.equal(isSupportedNode(process.versions.node), true);
  // Node 23 had node:sqlite without a flag only from 23.4.
  assert.equal(isSupportedNode('23.3.0'), false);
  assert.equal(isSupportedNode('23.0.0'), false);
  assert.equal(isSupportedNode('23.4.0'), true);
  assert.equal(isSupportedNode('23.11.1'), true);
  assert.equal(unsupportedNodeMessage('20.1.0'), 'agent-governor needs Node.js 22.13.0 or later (on the 23 line, 23.4.0 or later); this is Node.js 20.1.0.');
});

/** What a fresh process prints to stderr when it imports `module`, then emits an ExperimentalWarning of its own. */
async function stderrOfImport(module: string): Promise<string> {
  const { stderr } = await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    `await import(${JSON.stringify(module)}); process.emitWarning('kept', 'ExperimentalWarning');`,
  ]);
  return stderr;
}

const repositoryModule = new URL('../sqlite/index.ts', import.meta.url).href;

test('loading node:sqlite through the repository prints no ExperimentalWarning for it', async (t) => {
  const bare = await stderrOfImport('node:sqlite');
  // Only a Node that warns about node:sqlite itself (22.x) has a warning to suppress.
  if (!/SQLite/.test(bare)) {
    t.skip(`Node.js ${process.versions.node} prints no SQLite ExperimentalWarning`);
    return;
  }
  assert.doesNotMatch(await stderrOfImport(repositoryModule), /SQLite/);
});

test('after loading the repository, other warnings still pass', async () => {
  assert.match(await stderrOfImport(repositoryModule), /ExperimentalWarning: kept/);
});
