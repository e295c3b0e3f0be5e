import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asSchema } from '@ai-sdk/provider-utils';
import { submitTool } from './submit-tool.ts';

test('submitTool is return-direct and returns the summary', async () => {
  const submit = submitTool();
  assert.equal(submit.returnDirect, true);
  assert.match(String(submit.description), /task is done/);
  const result = await submit.execute?.({ summary: 'Fixed the bug; tests pass.' }, { toolCallId: 't', messages: [], context: undefined });
  assert.equal(result, 'Fixed the bug; tests pass.');
});

test('submitTool asks the model for a summary string', async () => {
  const schema = await asSchema(submitTool().inputSchema).jsonSchema;
  assert.deepEqual((schema as { required?: string[] }).required, ['summary']);
});
