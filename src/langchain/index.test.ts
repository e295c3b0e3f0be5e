import assert from 'node:assert/strict';
import { test } from 'node:test';
import { projectWithout } from '../test-support/without-packages.ts';

/** Imports the subpath in the copy and prints what it threw. */
const IMPORT_AND_REPORT = `
try {
  await import('./src/langchain/index.ts');
  console.log(JSON.stringify({ loaded: true }));
} catch (e) {
  console.log(JSON.stringify({ name: e.name, code: e.code, packageName: e.packageName, message: e.message }));
}`;

test('importing agent-governor/langchain without langchain installed is a MissingDependencyError naming it', async () => {
  await using project = await projectWithout(['langchain']);
  const outcome = JSON.parse(await project.run(IMPORT_AND_REPORT));
  assert.equal(outcome.name, 'MissingDependencyError');
  assert.equal(outcome.code, 'GOVERNOR_MISSING_DEPENDENCY');
  assert.equal(outcome.packageName, 'langchain');
  assert.match(outcome.message, /npm install langchain/);
});

test('the core package loads without any framework package', async () => {
  await using project = await projectWithout(['langchain', '@langchain', '@openai']);
  const out = await project.run(`const m = await import('./src/index.ts'); console.log(typeof m.AgentBreaker);`);
  assert.equal(out.trim(), 'function');
});
