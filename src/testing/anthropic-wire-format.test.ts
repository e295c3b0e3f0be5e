import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { ScriptedModelServer } from './index.ts';

for (const mode of ['generate', 'stream'] as const) {
  test(`the stand-in speaks the Anthropic Messages API to @ai-sdk/anthropic (${mode}Text)`, async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { text: 'Checking the weather.', toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }], usage: { promptTokens: 30, completionTokens: 8 } },
        { text: 'It is 3°C in Oslo.', usage: { promptTokens: 50, completionTokens: 6 } },
      ],
    }).start();
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const cities: string[] = [];
    const options = {
      model: anthropic('claude-test'),
      maxOutputTokens: 256,
      prompt: 'Weather in Oslo?',
      tools: {
        weather: tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            cities.push(city);
            return '3°C';
          },
        }),
      },
      stopWhen: isStepCount(3),
    };
    const result = mode === 'generate' ? await generateText(options) : streamText(options);
    assert.equal(await result.text, 'It is 3°C in Oslo.');
    assert.deepEqual(cities, ['Oslo']);
    const usage = await result.totalUsage;
    assert.equal(usage.inputTokens, 80);
    assert.equal(usage.outputTokens, 14);
    assert.equal(server.requests[1]!.path, '/v1/messages');
    const toolResult = JSON.stringify(server.requests[1]!.body.messages.at(-1));
    assert.match(toolResult, /tool_result/);
    assert.match(toolResult, /3°C/);
  });
}

for (const mode of ['generate', 'stream'] as const) {
  test(`scripted reasoning is a signed thinking block first in the answer, which @ai-sdk/anthropic reads and sends back (${mode}Text)`, async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { reasoning: { text: 'Think first, then call.', signature: 'sig-1' }, toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
        { text: 'Done.' },
      ],
    }).start();
    const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
    const options = {
      model: anthropic('claude-test'),
      maxOutputTokens: 256,
      prompt: 'Weather in Oslo?',
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => '3°C' }) },
      stopWhen: isStepCount(3),
    };
    const result = mode === 'generate' ? await generateText(options) : streamText(options);
    const [first] = await result.steps;
    assert.deepEqual(
      first?.reasoning.map((part) => [part.type === 'reasoning' ? part.text : '', part.providerOptions]),
      [['Think first, then call.', { anthropic: { signature: 'sig-1' } }]],
    );
    const assistant = server.requests[1]!.body.messages.find((message) => message.role === 'assistant');
    assert.deepEqual((assistant?.content as unknown[] | undefined)?.[0], { type: 'thinking', thinking: 'Think first, then call.', signature: 'sig-1' });
  });
}

test('a scripted reasoning without text, or with an empty signature, is refused naming the field', () => {
  assert.throws(() => new ScriptedModelServer({ script: [{ reasoning: { signature: 's' } as never }] }), /script\[0\]\.reasoning\.text/);
  assert.throws(() => new ScriptedModelServer({ script: [{ reasoning: { text: 't', signature: '' } }] }), /script\[0\]\.reasoning\.signature/);
});

test('the stand-in answers a scripted error in the Anthropic error format', async () => {
  await using server = await new ScriptedModelServer({ script: [{ error: { status: 529, message: 'busy' } }] }).start();
  const response = await fetch(`${server.baseURL}/messages`, {
    method: 'POST',
    body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(response.status, 529);
  assert.deepEqual(await response.json(), { type: 'error', error: { type: 'overloaded_error', message: 'busy' } });
});

test('estimated prompt tokens grow with the tool calls and tool results of an Anthropic conversation', async () => {
  await using server = await new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'read', arguments: { page: 1, note: 'n'.repeat(400) } }] },
      { toolCalls: [{ name: 'read', arguments: { page: 2, note: 'n'.repeat(400) } }] },
      { text: 'Done.' },
      { text: 'Noted.' },
    ],
  }).start();
  const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
  const perRound: number[] = [];
  const result = await generateText({
    model: anthropic('claude-test'),
    maxOutputTokens: 256,
    prompt: 'Read the pages.',
    tools: { read: tool({ inputSchema: z.object({ page: z.number(), note: z.string() }), execute: async () => 'x'.repeat(4000) }) },
    stopWhen: isStepCount(4),
    onStepFinish: (step) => void perRound.push(step.usage.inputTokens ?? 0),
  });
  assert.equal(result.text, 'Done.');
  // Each round adds a tool call (~400 characters of input, ~100 tokens) and its result (4,000 characters, 1,000 tokens).
  assert.equal(perRound.length, 3);
  assert.ok(perRound[1]! - perRound[0]! >= 1100, perRound.join(' → '));
  assert.ok(perRound[2]! - perRound[1]! >= 1100, perRound.join(' → '));
  // Anthropic's system prompt is a field of its own, not a message: it is counted too.
  const withSystem = await generateText({ model: anthropic('claude-test'), system: 's'.repeat(4000), prompt: 'Read the pages.', maxOutputTokens: 16 });
  assert.ok((withSystem.usage.inputTokens ?? 0) >= 1000, String(withSystem.usage.inputTokens));
});
