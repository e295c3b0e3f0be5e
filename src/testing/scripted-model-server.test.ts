import assert from 'node:assert/strict';
import { createServer as createNetServer } from 'node:net';
import { describe, test } from 'node:test';

import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';

import { InvalidOptionError } from '../errors/governor-error.ts';
import { REDACTED, ScriptedModelServer, ScriptedModelServerError, scriptedModel, type ChatCompletionMessage } from './index.ts';

function weatherTool(calls: Array<{ city: string }>) {
  return tool({
    description: 'Current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push({ city });
      return { city, temperatureC: city === 'Oslo' ? 4 : 21 };
    },
  });
}

function toolMessages(messages: readonly ChatCompletionMessage[]): ChatCompletionMessage[] {
  return messages.filter((message) => message.role === 'tool');
}

async function postChat(server: ScriptedModelServer, body: string): Promise<Response> {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
}

describe('ScriptedModelServer through @ai-sdk/openai-compatible', () => {
  test('answers with scripted text and reports its stand-in model id', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'Hello from the script.' }] }).start();

    const result = await generateText({ model: scriptedModel(server), prompt: 'Say hello' });

    assert.equal(result.text, 'Hello from the script.');
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.response.modelId, 'scripted-stand-in');
    assert.equal(server.turnsPlayed, 1);
    assert.equal(server.requests[0]?.path, '/v1/chat/completions');
    assert.deepEqual(server.requests[0]?.body.messages, [{ role: 'user', content: 'Say hello' }]);
  });

  test('plays a tool call round, sends the tool result back, then a final answer', async () => {
    const calls: Array<{ city: string }> = [];
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' }, id: 'call_oslo' }] }, { text: 'It is 4 °C in Oslo.' }],
    }).start();

    const result = await generateText({
      model: scriptedModel(server),
      prompt: 'Weather in Oslo?',
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(5),
    });

    assert.deepEqual(calls, [{ city: 'Oslo' }]);
    assert.equal(result.text, 'It is 4 °C in Oslo.');
    assert.equal(result.steps.length, 2);
    assert.equal(result.steps[0]?.finishReason, 'tool-calls');
    const [toolResult] = toolMessages(server.requests[1]?.body.messages ?? []);
    assert.equal(toolResult?.tool_call_id, 'call_oslo');
    assert.match(String(toolResult?.content), /"temperatureC":4/);
  });

  test('plays two parallel tool calls in one turn', async () => {
    const calls: Array<{ city: string }> = [];
    await using server = await new ScriptedModelServer({
      script: [
        {
          toolCalls: [
            { name: 'weather', arguments: { city: 'Oslo' } },
            { name: 'weather', arguments: { city: 'Rome' } },
          ],
        },
        { text: 'Oslo is colder.' },
      ],
    }).start();

    const result = await generateText({
      model: scriptedModel(server),
      prompt: 'Compare Oslo and Rome',
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(5),
    });

    assert.deepEqual(calls.map((call) => call.city).sort(), ['Oslo', 'Rome']);
    assert.equal(result.steps[0]?.toolCalls.length, 2);
    const results = toolMessages(server.requests[1]?.body.messages ?? []);
    assert.deepEqual(
      results.map((message) => message.tool_call_id),
      ['call_1_1', 'call_1_2'],
    );
    assert.equal(result.text, 'Oslo is colder.');
  });

  test('streams text in several deltas', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    await using server = await new ScriptedModelServer({ script: [{ text }] }).start();

    const result = streamText({ model: scriptedModel(server), prompt: 'Tell me something' });
    const pieces: string[] = [];
    for await (const piece of result.textStream) pieces.push(piece);

    assert.ok(pieces.length > 1, `expected several deltas, got ${pieces.length}`);
    assert.equal(pieces.join(''), text);
    assert.equal(await result.finishReason, 'stop');
    assert.equal(server.requests[0]?.body.stream, true);
  });

  test('streams tool calls whose arguments arrive in pieces', async () => {
    const calls: Array<{ city: string }> = [];
    await using server = await new ScriptedModelServer({
      script: [
        {
          text: 'Checking both.',
          toolCalls: [
            { name: 'weather', arguments: { city: 'Reykjavík' } },
            { name: 'weather', arguments: { city: 'Rome' } },
          ],
        },
        { text: 'Done.' },
      ],
    }).start();

    const result = streamText({
      model: scriptedModel(server),
      prompt: 'Weather?',
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(5),
    });
    const inputDeltas = new Map<string, number>();
    for await (const part of result.fullStream) {
      if (part.type === 'tool-input-delta') inputDeltas.set(part.id, (inputDeltas.get(part.id) ?? 0) + 1);
    }

    assert.deepEqual(calls, [{ city: 'Reykjavík' }, { city: 'Rome' }]);
    assert.equal(inputDeltas.size, 2);
    for (const count of inputDeltas.values()) assert.ok(count > 1, `expected argument pieces, got ${count}`);
    assert.equal(await result.text, 'Done.');
    assert.equal(toolMessages(server.requests[1]?.body.messages ?? []).length, 2);
  });

  test('reports scripted usage, cached tokens included', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'ok', usage: { promptTokens: 1200, completionTokens: 7, cachedTokens: 1000 } }],
    }).start();

    const result = await generateText({ model: scriptedModel(server), prompt: 'hi' });

    assert.equal(result.usage.inputTokens, 1200);
    assert.equal(result.usage.outputTokens, 7);
    assert.equal(result.usage.inputTokenDetails.cacheReadTokens, 1000);
    assert.equal(result.usage.inputTokenDetails.noCacheTokens, 200);
  });

  test('estimates usage from characters when the script gives none, also when streaming', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'abcdefgh' }, { text: 'abcdefghi' }],
    }).start();
    const prompt = 'x'.repeat(400);

    const generated = await generateText({ model: scriptedModel(server), prompt });
    const streamed = streamText({ model: scriptedModel(server), prompt: prompt + 'y' });

    assert.equal(generated.usage.inputTokens, 100);
    assert.equal(generated.usage.outputTokens, 2);
    assert.equal((await streamed.usage).inputTokens, 101);
    assert.equal((await streamed.usage).outputTokens, 3);
  });

  test('estimated prompt tokens grow as the conversation grows', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
        { toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }] },
        { text: 'done' },
      ],
    }).start();

    const result = await generateText({
      model: scriptedModel(server),
      prompt: 'Weather, twice',
      tools: { weather: weatherTool([]) },
      stopWhen: isStepCount(5),
    });

    const inputs = result.steps.map((step) => step.usage.inputTokens ?? 0);
    assert.equal(inputs.length, 3);
    assert.ok(inputs[0]! < inputs[1]! && inputs[1]! < inputs[2]!, `not growing: ${inputs.join(', ')}`);
  });

  test('an error turn surfaces as an APICallError with its status', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ error: { status: 503, message: 'Overloaded, try later' } }],
    }).start();

    await assert.rejects(generateText({ model: scriptedModel(server), prompt: 'hi', maxRetries: 0 }), (error: unknown) => {
      assert.ok(APICallError.isInstance(error));
      assert.equal(error.statusCode, 503);
      assert.match(error.message, /Overloaded, try later/);
      return true;
    });
    assert.equal(server.turnsPlayed, 1);
  });

  test('a 429 turn is retried by the SDK and the next turn answers', async () => {
    await using server = await new ScriptedModelServer({
      // retryAfterMs: 0 makes the SDK retry at once instead of after its default backoff.
      script: [{ error: { status: 429, retryAfterMs: 0 } }, { text: 'after retry' }],
    }).start();

    const result = await generateText({ model: scriptedModel(server), prompt: 'hi', maxRetries: 1 });

    assert.equal(result.text, 'after retry');
    assert.equal(server.requests.length, 2);
    assert.equal(server.turnsPlayed, 2);
  });

  test('says the script ran out, after how many turns', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'only one' }] }).start();
    await generateText({ model: scriptedModel(server), prompt: 'first' });

    // With the SDK's default retries: the answer is not one it retries.
    await assert.rejects(generateText({ model: scriptedModel(server), prompt: 'second' }), (error: unknown) => {
      assert.ok(APICallError.isInstance(error));
      assert.equal(error.statusCode, 400);
      assert.equal(error.isRetryable, false);
      assert.match(error.message, /script ran out after 1 turns/);
      return true;
    });
    assert.equal(server.turnsPlayed, 1);
    assert.equal(server.requests.length, 2, 'the request that found the script out was not retried');
  });

  test("repeats the last turn with onExhausted: 'repeat-last'", async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'first' }, { text: 'again' }],
      onExhausted: 'repeat-last',
    }).start();

    const texts: string[] = [];
    for (let i = 0; i < 3; i++) texts.push((await generateText({ model: scriptedModel(server), prompt: 'hi' })).text);

    assert.deepEqual(texts, ['first', 'again', 'again']);
    assert.equal(server.turnsPlayed, 3);
  });

  test('a script function sees each request and its index', async () => {
    await using server = await new ScriptedModelServer({
      script: (request, index) => ({ text: `#${index}: ${String(request.body.messages.at(-1)?.content)}` }),
    }).start();

    const first = await generateText({ model: scriptedModel(server), prompt: 'alpha' });
    const second = await generateText({ model: scriptedModel(server), prompt: 'beta' });

    assert.equal(first.text, '#0: alpha');
    assert.equal(second.text, '#1: beta');
  });

  test('redacts the Authorization header in recorded requests', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'ok' }] }).start();

    await generateText({
      model: scriptedModel(server, { apiKey: 'sk-very-secret', headers: { 'x-trace': 'abc' } }),
      prompt: 'hi',
    });

    const headers = server.requests[0]?.headers;
    assert.equal(headers?.['authorization'], REDACTED);
    assert.equal(headers?.['x-trace'], 'abc');
    assert.doesNotMatch(JSON.stringify(server.requests), /sk-very-secret/);
  });

  test('await using closes the port', async () => {
    let port: number;
    {
      await using server = await new ScriptedModelServer({ script: [] }).start();
      port = Number(new URL(server.url).port);
      const models = await fetch(`${server.url}/v1/models`);
      assert.equal(models.status, 200);
    }

    await assert.rejects(fetch(`http://127.0.0.1:${port}/v1/models`));
    const probe = createNetServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  test('a client abort during delayMs fails the call and leaves the server serving', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'too late', delayMs: 60_000 }, { text: 'next turn' }],
    }).start();
    const controller = new AbortController();

    const pending = generateText({
      model: scriptedModel(server),
      prompt: 'hi',
      maxRetries: 0,
      abortSignal: controller.signal,
    });
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();

    await assert.rejects(pending, (error: unknown) => error instanceof Error && error.name === 'AbortError');
    const next = await generateText({ model: scriptedModel(server), prompt: 'again' });
    assert.equal(next.text, 'next turn');
  });

  test('close() cancels a delayed answer instead of waiting for it', async () => {
    const server = await new ScriptedModelServer({ script: [{ text: 'too late', delayMs: 60_000 }] }).start();

    const pending = generateText({ model: scriptedModel(server), prompt: 'hi', maxRetries: 0 });
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await server.close();

    await assert.rejects(pending);
    assert.throws(() => server.url, ScriptedModelServerError);
  });
});

describe('ScriptedModelServer through @ai-sdk/openai chat models', () => {
  test('works with createOpenAI(...).chat(...), plain and streamed', async () => {
    const calls: Array<{ city: string }> = [];
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'weather', arguments: { city: 'Rome' } }], usage: { promptTokens: 50, completionTokens: 5 } },
        { text: 'Warm in Rome.' },
        { text: 'Streamed through the OpenAI provider.' },
      ],
    }).start();
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: 'test' }).chat('x');

    const generated = await generateText({
      model,
      prompt: 'Rome?',
      tools: { weather: weatherTool(calls) },
      stopWhen: isStepCount(5),
    });
    const streamed = streamText({ model, prompt: 'stream please' });

    assert.deepEqual(calls, [{ city: 'Rome' }]);
    assert.equal(generated.text, 'Warm in Rome.');
    assert.equal(generated.steps[0]?.usage.inputTokens, 50);
    assert.equal(await streamed.text, 'Streamed through the OpenAI provider.');
    assert.ok((await streamed.usage).outputTokens! > 0);
    assert.equal(server.requests[0]?.headers['authorization'], REDACTED);
  });
});

describe('ScriptedModelServer over raw HTTP', () => {
  test('answers malformed JSON with HTTP 400 and a clear message', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'unused' }] }).start();

    const response = await postChat(server, '{"messages": [');
    const body = (await response.json()) as { error: { message: string } };

    assert.equal(response.status, 400);
    assert.match(body.error.message, /not valid JSON/);
    assert.equal(server.requests.length, 0);
    assert.equal(server.turnsPlayed, 0);
  });

  test('rejects a body without messages with HTTP 400', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'unused' }] }).start();

    const response = await postChat(server, '{"model": "x"}');
    const body = (await response.json()) as { error: { message: string } };

    assert.equal(response.status, 400);
    assert.match(body.error.message, /"messages" array/);
  });

  test('sends string tool arguments exactly as scripted, even when not JSON', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'weather', arguments: '{"city": "Os', id: 'bad' }] }],
    }).start();

    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await response.json()) as {
      choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ function: { arguments: string } }> } }>;
    };

    assert.equal(response.status, 200);
    assert.equal(body.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(body.choices[0]?.message.tool_calls[0]?.function.arguments, '{"city": "Os');
  });

  test('a code run is a code interpreter call (its logs only when the request includes them) or a bash code execution with its exit code', async () => {
    const run = { code: 'cat data.csv', output: 'cat: data.csv: No such file or directory', exitCode: 1 };
    await using server = await new ScriptedModelServer({ script: [{ codeRuns: [run], text: 'No data.' }], onExhausted: 'repeat-last' }).start();
    const post = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify({ model: 'any', ...body }) });
      assert.equal(response.status, 200);
      return (await response.json()) as { output?: Record<string, unknown>[]; content?: Record<string, unknown>[] };
    };
    const item = { type: 'code_interpreter_call', id: 'ci_1_1', status: 'completed', code: 'cat data.csv', container_id: 'cntr_scripted' };
    assert.deepEqual((await post('/responses', { input: 'hi' })).output?.[0], { ...item, outputs: null });
    assert.deepEqual((await post('/responses', { input: 'hi', include: ['code_interpreter_call.outputs'] })).output?.[0], {
      ...item,
      id: 'ci_2_1',
      outputs: [{ type: 'logs', logs: run.output }],
    });
    const message = await post('/messages', { max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(message.content?.slice(0, 2), [
      { type: 'server_tool_use', id: 'srvtoolu_code_3_1', name: 'bash_code_execution', input: { command: 'cat data.csv' } },
      {
        type: 'bash_code_execution_tool_result',
        tool_use_id: 'srvtoolu_code_3_1',
        content: { type: 'bash_code_execution_result', stdout: '', stderr: run.output, return_code: 1, content: [] },
      },
    ]);
  });

  test('a hosted shell run is a shell_call in the container and its shell_call_output, in a Responses answer only', async () => {
    const run = {
      commands: ['npm test', 'npm run e2e'],
      results: [
        { stderr: 'FAIL cart', exitCode: 1 },
        { stdout: 'running', timedOut: true },
      ],
    };
    await using server = await new ScriptedModelServer({ script: [{ shellRuns: [run], text: 'Failing.' }], onExhausted: 'repeat-last' }).start();
    const response = await fetch(`${server.url}/responses`, { method: 'POST', body: JSON.stringify({ model: 'any', input: 'hi' }) });
    const body = (await response.json()) as { output: Record<string, unknown>[] };
    assert.deepEqual(body.output.slice(0, 2), [
      {
        type: 'shell_call',
        id: 'sh_1_1',
        call_id: 'call_sh_1_1',
        status: 'completed',
        action: { commands: ['npm test', 'npm run e2e'], timeout_ms: null, max_output_length: null },
        environment: { type: 'container_reference', container_id: 'cntr_scripted' },
      },
      {
        type: 'shell_call_output',
        id: 'sh_1_1_output',
        call_id: 'call_sh_1_1',
        status: 'completed',
        max_output_length: null,
        output: [
          { stdout: '', stderr: 'FAIL cart', outcome: { type: 'exit', exit_code: 1 } },
          { stdout: 'running', stderr: '', outcome: { type: 'timeout' } },
        ],
      },
    ]);
    const chat = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content, 'Failing.');
  });

  test('an MCP call is an mcp_call item, or an mcp_tool_use with its mcp_tool_result; a failed one carries its error', async () => {
    const call = { server: 'tracker', name: 'get_issue', arguments: { id: 'ENG-9' }, error: 'Issue not found' };
    await using server = await new ScriptedModelServer({ script: [{ mcpCalls: [call], text: 'Gone.' }], onExhausted: 'repeat-last' }).start();
    const post = async (path: string, body: Record<string, unknown>) => {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify({ model: 'any', ...body }) });
      assert.equal(response.status, 200);
      return (await response.json()) as { output?: Record<string, unknown>[]; content?: Record<string, unknown>[] };
    };
    assert.deepEqual((await post('/responses', { input: 'hi' })).output?.[0], {
      type: 'mcp_call',
      id: 'mcp_1_1',
      status: 'failed',
      server_label: 'tracker',
      name: 'get_issue',
      arguments: '{"id":"ENG-9"}',
      output: null,
      error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'Issue not found' }] },
    });
    assert.deepEqual((await post('/messages', { max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })).content?.slice(0, 2), [
      { type: 'mcp_tool_use', id: 'mcptoolu_2_1', name: 'get_issue', server_name: 'tracker', input: { id: 'ENG-9' } },
      { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_2_1', is_error: true, content: [{ type: 'text', text: 'Issue not found' }] },
    ]);
  });

  test('a tool call named after a built-in tool the Responses request declares is that tool’s call item; its output is read back as a tool message', async () => {
    const script = [
      { toolCalls: [{ name: 'shell', arguments: { commands: ['npm test'], timeout_ms: 60000 }, id: 'call_sh' }] },
      { toolCalls: [{ name: 'apply_patch', arguments: { type: 'delete_file', path: 'old.ts' }, id: 'call_ap' }] },
    ];
    await using server = await new ScriptedModelServer({ script, onExhausted: 'repeat-last' }).start();
    const post = async (body: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/responses`, { method: 'POST', body: JSON.stringify({ model: 'any', ...body }) });
      assert.equal(response.status, 200);
      return ((await response.json()) as { output: Record<string, unknown>[] }).output;
    };
    const tools = [{ type: 'shell', environment: { type: 'local' } }, { type: 'apply_patch' }];
    assert.deepEqual(await post({ input: 'hi', tools }), [
      {
        type: 'shell_call',
        action: { commands: ['npm test'], timeout_ms: 60000 },
        environment: { type: 'local' },
        id: 'fc_call_sh',
        call_id: 'call_sh',
        status: 'completed',
      },
    ]);
    const input = [
      { role: 'user', content: 'hi' },
      { type: 'shell_call', call_id: 'call_sh', action: { commands: ['npm test'] }, status: 'completed' },
      { type: 'shell_call_output', call_id: 'call_sh', output: [{ stdout: '1 failing', stderr: 'cart.test.ts:3', outcome: { type: 'exit', exit_code: 1 } }] },
    ];
    assert.deepEqual(await post({ input, tools }), [
      { type: 'apply_patch_call', operation: { type: 'delete_file', path: 'old.ts' }, id: 'fc_call_ap', call_id: 'call_ap', status: 'completed' },
    ]);
    assert.deepEqual(server.requests[1]!.body.messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_sh', type: 'function', function: { name: 'shell', arguments: '{"commands":["npm test"]}' } }],
      },
      { role: 'tool', tool_call_id: 'call_sh', content: '1 failing\ncart.test.ts:3' },
    ]);
    // Not declared: a function call of that name, as before.
    assert.equal((await post({ input: 'hi' }))[0]!['type'], 'function_call');
  });

  test('an error turn sends an OpenAI-style body and retry headers', async () => {
    await using server = await new ScriptedModelServer({ script: [{ error: { status: 429, retryAfterMs: 1500 } }] }).start();

    const response = await postChat(server, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    const body = (await response.json()) as { error: { message: string; type: string } };

    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after-ms'), '1500');
    assert.equal(response.headers.get('retry-after'), '2');
    assert.deepEqual(body.error, { message: 'Scripted stand-in error (HTTP 429)', type: 'rate_limit_error', param: null, code: null });
  });

  test('lists its model on GET /v1/models', async () => {
    await using server = await new ScriptedModelServer({ script: [], modelId: 'my-stand-in' }).start();

    const response = await fetch(`${server.baseURL}/models`);
    const body = (await response.json()) as { data: Array<{ id: string }> };

    assert.deepEqual(
      body.data.map((model) => model.id),
      ['my-stand-in'],
    );
  });

  test('ends a stream with a usage chunk only when asked to', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'a b' }], onExhausted: 'repeat-last' }).start();
    const request = (includeUsage: boolean): string =>
      JSON.stringify({
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      });

    const withUsage = await (await postChat(server, request(true))).text();
    const withoutUsage = await (await postChat(server, request(false))).text();

    assert.match(withUsage, /"usage":\{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2\}/);
    assert.doesNotMatch(withoutUsage, /"usage"/);
    assert.ok(withUsage.endsWith('data: [DONE]\n\n'));
  });
});

describe('ScriptedModelServer options', () => {
  test('rejects bad options at construction, naming the option', () => {
    const bad: Array<[unknown, string]> = [
      [{ script: 'hello' }, 'script'],
      [{ script: [{ text: 42 }] }, 'script[0].text'],
      [{ script: [{ toolCalls: [{ arguments: {} }] }] }, 'script[0].toolCalls[0].name'],
      [{ script: [{ webSearches: { query: 'x' } }] }, 'script[0].webSearches'],
      [{ script: [{ webSearches: [{ sources: [] }] }] }, 'script[0].webSearches[0].query'],
      [{ script: [{ webSearches: [{ query: 'x', sources: 'https://a.example' }] }] }, 'script[0].webSearches[0].sources'],
      [{ script: [{ webSearches: [{ openPage: '' }] }] }, 'script[0].webSearches[0].openPage'],
      [{ script: [{ webSearches: [{ openPage: 'https://a.example', query: 'x' }] }] }, 'script[0].webSearches[0]'],
      [{ script: [{ webSearches: [{ query: 'x', pageText: 'Fares.' }] }] }, 'script[0].webSearches[0].pageText'],
      [{ script: [{ codeRuns: { code: 'print(1)' } }] }, 'script[0].codeRuns'],
      [{ script: [{ codeRuns: [{ output: '1' }] }] }, 'script[0].codeRuns[0].code'],
      [{ script: [{ codeRuns: [{ code: 'print(1)', output: 1 }] }] }, 'script[0].codeRuns[0].output'],
      [{ script: [{ codeRuns: [{ code: 'exit(1)', exitCode: -1 }] }] }, 'script[0].codeRuns[0].exitCode'],
      [{ script: [{ mcpCalls: [{ server: 'tracker', arguments: {} }] }] }, 'script[0].mcpCalls[0].name'],
      [{ script: [{ mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: '{}' }] }] }, 'script[0].mcpCalls[0].arguments'],
      [{ script: [{ mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: {}, output: 'x', error: 'y' }] }] }, 'script[0].mcpCalls[0]'],
      [{ script: [{ shellRuns: [{ commands: [] }] }] }, 'script[0].shellRuns[0].commands'],
      [{ script: [{ shellRuns: [{ commands: ['ls'], results: [] }] }] }, 'script[0].shellRuns[0].results'],
      [{ script: [{ shellRuns: [{ commands: ['ls'], results: [{ exitCode: 256 }] }] }] }, 'script[0].shellRuns[0].results[0].exitCode'],
      [{ script: [{ shellRuns: [{ commands: ['ls'], results: [{ exitCode: 1, timedOut: true }] }] }] }, 'script[0].shellRuns[0].results[0]'],
      [{ script: [{ shellRuns: [{ commands: ['ls'], results: [{ output: 'a' }] }] }] }, 'script[0].shellRuns[0].results[0].output'],
      [{ script: [{ error: { status: 200 } }] }, 'script[0].error.status'],
      [{ script: [], onExhausted: 'repeat-last' }, 'script'],
      [{ script: [], onExhausted: 'loop' }, 'onExhausted'],
      [{ script: [], port: 70000 }, 'port'],
      [{ script: [{ error: { status: 429, retryAfterMs: 3e9 } }] }, 'script[0].error.retryAfterMs'],
      [undefined, 'options'],
      [{}, 'script'],
      [{ script: [], modelId: '' }, 'modelId'],
      [{ script: [], host: 7 }, 'host'],
      // Unknown keys are refused, not ignored: a typo fails naming it by path.
      [{ script: [{ text: 'hi' }], onExhaust: 'repeat-last' }, 'onExhaust'],
      [{ script: [{ txt: 'hello' }] }, 'script[0].txt'],
      [{ script: [{ text: 'hi' }, { text: 'hi', usage: { inputTokens: 5 } }] }, 'script[1].usage.inputTokens'],
      [{ script: [{ toolCalls: [{ name: 'get_weather', args: {} }] }] }, 'script[0].toolCalls[0].args'],
      [{ script: [{ webSearches: [{ query: 'x', source: [] }] }] }, 'script[0].webSearches[0].source'],
      [{ script: [{ codeRuns: [{ code: 'print(1)', stdout: '1' }] }] }, 'script[0].codeRuns[0].stdout'],
      [{ script: [{ mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: {}, result: 'x' }] }] }, 'script[0].mcpCalls[0].result'],
      [{ script: [{ error: { status: 429, retryAfter: 10 } }] }, 'script[0].error.retryAfter'],
    ];
    for (const [options, option] of bad) {
      assert.throws(
        () => new ScriptedModelServer(options as never),
        (error: unknown) => error instanceof InvalidOptionError && error.option === option,
        `expected InvalidOptionError for ${option}`,
      );
    }
  });

  test('a port already in use fails start() with a typed error', async () => {
    await using taken = await new ScriptedModelServer({ script: [] }).start();
    const port = Number(new URL(taken.url).port);

    await assert.rejects(
      new ScriptedModelServer({ script: [], port }).start(),
      (error: unknown) => error instanceof ScriptedModelServerError && error.code === 'GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED',
    );
  });

  test('a script function returning a malformed turn gets HTTP 500 naming the field', async () => {
    await using server = await new ScriptedModelServer({ script: () => ({ text: 7 }) as never }).start();

    const response = await postChat(server, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    const body = (await response.json()) as { error: { message: string } };

    assert.equal(response.status, 500);
    assert.match(body.error.message, /script\(request #1\)\.text/);
    assert.equal(server.turnsPlayed, 0);
  });

  test('an unknown key in a turn is named by the error, with the fields a turn has', () => {
    assert.throws(
      () => new ScriptedModelServer({ script: [{ text: 'hi', usage: { inputTokens: 5 } }] as never }),
      (error: unknown) =>
        error instanceof InvalidOptionError &&
        error.option === 'script[0].usage.inputTokens' &&
        /promptTokens, completionTokens, cachedTokens/.test(error.message),
    );
    assert.throws(
      () => new ScriptedModelServer({ script: [{ text: 'hi' }], onExhaust: 'repeat-last' } as never),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'onExhaust' && /onExhausted/.test(error.message),
    );
  });

  test('a script function returning a turn with an unknown key gets HTTP 500 naming the key', async () => {
    const turns = [{ txt: 'hello' }, { text: 'hi', usage: { inputTokens: 5 } }];
    await using server = await new ScriptedModelServer({ script: (_request, index) => turns[index] as never }).start();

    for (const [i, field] of [/script\(request #1\)\.txt/, /script\(request #2\)\.usage\.inputTokens/].entries()) {
      const response = await postChat(server, JSON.stringify({ messages: [{ role: 'user', content: `hi ${i}` }] }));
      const body = (await response.json()) as { error: { message: string } };
      assert.equal(response.status, 500);
      assert.match(body.error.message, field);
    }
    assert.equal(server.turnsPlayed, 0);
  });

  test('reading the URL before start() throws a typed error', () => {
    const server = new ScriptedModelServer({ script: [] });

    assert.throws(
      () => server.baseURL,
      (error: unknown) => error instanceof ScriptedModelServerError && error.code === 'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED',
    );
  });
});
