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
  assert.equal(unsupportedNodeMessage('20.1.0'), 'agent-governor needs Node.js 22.13.0 or later; this is Node.js 20.1.0.');
});

test('loading node:sqlite through the repository prints no ExperimentalWarning, other warnings still pass', async () => {
  const module = new URL('../sqlite/index.ts', import.meta.url).href;
  const { stderr } = await promisify(execFile)(process.execPath, [
    '--input-type=module',
    '-e',
    `await import(${JSON.stringify(module)}); process.emitWarning('kept', 'ExperimentalWarning');`,
  ]);
  assert.doesNotMatch(stderr, /SQLite/);
  assert.match(stderr, /ExperimentalWarning: kept/);
});
