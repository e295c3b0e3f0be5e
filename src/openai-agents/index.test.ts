import assert from 'node:assert/strict';
import { test } from 'node:test';
import { projectWithout } from '../test-support/without-packages.ts';

test('importing agent-governor/openai-agents without @openai/agents installed is a MissingDependencyError naming it', async () => {
  await using project = await projectWithout(['@openai/agents']);
  const outcome = JSON.parse(
    await project.run(`
try {
  await import('./src/openai-agents/index.ts');
  console.log(JSON.stringify({ loaded: true }));
} catch (e) {
  console.log(JSON.stringify({ name: e.name, code: e.code, packageName: e.packageName, message: e.message }));
}`),
  );
  assert.equal(outcome.name, 'MissingDependencyError');
  assert.equal(outcome.code, 'GOVERNOR_MISSING_DEPENDENCY');
  assert.equal(outcome.packageName, '@openai/agents');
  assert.match(outcome.message, /npm install @openai\/agents/);
});
