import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import { ChatClient, StructuredOutputValidationAdvisor, StructuredOutputValidationError, ToolCallAdvisor } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';

const Films = z.object({ actor: z.string(), movies: z.array(z.string()) });

function textOf(content: unknown): string {
  return Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : String(content);
}

describe('StructuredOutputValidationAdvisor', () => {
  test('retries with the validation errors of the first attempt and returns the valid entity', async () => {
    const model = mockModel([{ text: '{"actor": "Tom Hanks", "movies": "Big"}' }, { text: '{"actor": "Tom Hanks", "movies": ["Big"]}' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new StructuredOutputValidationAdvisor()).build();
    const films = await client.prompt('Tom Hanks films').call().entity(Films);
    assert.deepEqual(films, { actor: 'Tom Hanks', movies: ['Big'] });
    assert.equal(model.doGenerateCalls.length, 2);
    const retry = model.doGenerateCalls[1]!.prompt;
    const feedback = textOf(retry.at(-1)!.content);
    assert.match(feedback, /movies/);
    assert.match(feedback, /expected array/i);
    assert.equal(retry.at(-2)!.role, 'assistant');
  });

  test('throws a typed error carrying the last errors when attempts run out', async () => {
    const model = mockModel([{ text: 'nope' }, { text: '{"actor": 1}' }, { text: '{"actor": 2}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films, maxRepeatAttempts: 2 }))
      .build();
    await assert.rejects(client.prompt('x').call().content(), (e: unknown) => {
      assert.ok(e instanceof StructuredOutputValidationError);
      assert.equal(e.attempts, 3);
      assert.ok(e.errors.some((m) => m.startsWith('actor')));
      return true;
    });
    assert.equal(model.doGenerateCalls.length, 3);
  });

  test('inside a tool loop, tool-call rounds pass through untouched', async () => {
    const lookup = tool({ inputSchema: z.object({ name: z.string() }), execute: async () => 'Big (1988), Cast Away (2000)' });
    const model = mockModel([
      { toolCalls: [{ name: 'lookup', input: { name: 'Tom Hanks' } }] },
      { text: '{"actor": "Tom Hanks"}' },
      { text: '{"actor": "Tom Hanks", "movies": ["Big", "Cast Away"]}' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films }))
      .defaultTools({ lookup })
      .build();
    const response = await client.prompt('films').call().chatResponse();
    assert.deepEqual(JSON.parse(response.text), { actor: 'Tom Hanks', movies: ['Big', 'Cast Away'] });
    assert.equal(model.doGenerateCalls.length, 3);
    // The retry still carries the tool call and its result.
    const roles = model.doGenerateCalls[2]!.prompt.map((m) => m.role);
    assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    assert.equal(response.rounds, 3);
  });

  test('the error carries the usage and rounds of the whole call, the tool rounds before it included', async () => {
    const lookup = tool({ inputSchema: z.object({ name: z.string() }), execute: async () => 'Big (1988)' });
    const model = mockModel([
      { toolCalls: [{ name: 'lookup', input: { name: 'Tom Hanks' } }], inputTokens: 100, outputTokens: 10 },
      { text: '{"actor": 1}', inputTokens: 200, outputTokens: 20 },
      { text: 'still no JSON', inputTokens: 300, outputTokens: 30 },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films, maxRepeatAttempts: 1 }))
      .defaultTools({ lookup })
      .build();
    await assert.rejects(client.prompt('films').call().content(), (e: unknown) => {
      assert.ok(StructuredOutputValidationError.isInstance(e));
      assert.equal(e.attempts, 2);
      assert.equal(e.rounds, 3);
      assert.deepEqual(e.usage, { inputTokens: 600, outputTokens: 60, cachedInputTokens: 0 });
      return true;
    });
  });
});

describe('StructuredOutputValidationAdvisor in stream(), over the scripted model', () => {
  test('an invalid answer is re-asked with its errors; only the valid answer is streamed', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: '{"actor": "Tom Hanks", "movies": "Big"}' }, { text: '{"actor": "Tom Hanks", "movies": ["Big"]}' }],
    }).start();
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films }))
      .build();
    let streamed = '';
    for await (const delta of client.prompt('Tom Hanks films').stream().content()) streamed += delta;
    assert.deepEqual(JSON.parse(streamed), { actor: 'Tom Hanks', movies: ['Big'] });
    assert.equal(server.requests.length, 2);
    const feedback = String(server.requests[1]!.body.messages.at(-1)!.content);
    assert.match(feedback, /movies/);
  });

  test('still invalid after the last attempt: StructuredOutputValidationError from the stream', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'not json' }], onExhausted: 'repeat-last' }).start();
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films, maxRepeatAttempts: 1 }))
      .build();
    await assert.rejects(async () => {
      for await (const _ of client.prompt('Tom Hanks films').stream().content()) {
        // driven only
      }
    }, StructuredOutputValidationError);
    assert.equal(server.requests.length, 2);
  });
});
