import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asSchema } from '@ai-sdk/provider-utils';
import { tool } from 'ai';
import { z } from 'zod';
import { ChatClient, ToolCallingAdvisor } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
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

test('submitTool ends the tool loop even when the model calls another tool in the same answer', async () => {
  let cleaned = false;
  const cleanup = tool({
    inputSchema: z.object({}),
    execute: async () => {
      cleaned = true;
      return 'cleaned';
    },
  });
  const model = mockModel([
    {
      toolCalls: [
        { name: 'submit', input: { summary: 'Fixed the bug.' } },
        { name: 'cleanup', input: {} },
      ],
    },
    { text: 'Anything else?' },
  ]);
  const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit: submitTool(), cleanup }).build();
  assert.equal(await client.prompt('fix it').call().content(), 'Fixed the bug.');
  assert.equal(model.doGenerateCalls.length, 1);
  assert.equal(cleaned, true);
});
