import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import { MockLanguageModelV4 } from 'ai/test';
import {
  AdvisorOrder,
  AdvisorPlacementError,
  beforeAfterAdvisor,
  ChatClient,
  CONVERSATION_ID,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  InvalidOptionError,
  StructuredOutputValidationAdvisor,
  StructuredOutputValidationError,
  ToolCallAdvisor,
  type ChatResponse,
} from '../index.ts';
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

describe('StructuredOutputValidationAdvisor and the schema of .entity(schema)', () => {
  const Title = z.object({ title: z.string() });

  test("the request's .entity(schema) wins over the advisor's schema: it is what the model is told and what is checked", async () => {
    const model = mockModel([{ text: '{"title": "Big"}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films }))
      .build();
    assert.deepEqual(await client.prompt('A film').call().entity(Title), { title: 'Big' });
    assert.equal(model.doGenerateCalls.length, 1, "no re-ask against the advisor's schema");
    const told = model.doGenerateCalls[0]!;
    assert.deepEqual(Object.keys((told.responseFormat as { schema: { properties: object } }).schema.properties), ['title']);
  });

  test("without .entity(), the advisor's schema is told and checked", async () => {
    const model = mockModel([{ text: '{"title": "Big"}' }, { text: '{"actor": "Tom Hanks", "movies": ["Big"]}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films }))
      .build();
    assert.deepEqual(JSON.parse(await client.prompt('films').call().content()), { actor: 'Tom Hanks', movies: ['Big'] });
    assert.equal(model.doGenerateCalls.length, 2);
    const told = model.doGenerateCalls[0]!;
    assert.deepEqual(Object.keys((told.responseFormat as { schema: { properties: object } }).schema.properties), ['actor', 'movies']);
  });

  test('a schema JSON Schema cannot express is refused when the advisor is made', () => {
    assert.throws(
      () => new StructuredOutputValidationAdvisor({ schema: z.object({ at: z.date() }) }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'schema' && /z\.iso\.datetime\(\)/.test(e.message),
    );
  });
});

describe('StructuredOutputValidationAdvisor: re-asks across tool rounds', () => {
  test('maxRepeatAttempts counts the invalid answers of the whole call, whatever tool rounds come between them', async () => {
    const lookup = tool({ inputSchema: z.object({ name: z.string() }), execute: async () => 'Big (1988)' });
    // A model that answers wrongly, then asks for a tool, then answers wrongly again, for ever.
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        calls += 1;
        const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
        if (calls % 2 === 0) {
          const input = JSON.stringify({ name: 'Tom Hanks' });
          return {
            content: [{ type: 'tool-call', toolCallId: `c${calls}`, toolName: 'lookup', input }],
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage,
            warnings: [],
          };
        }
        return { content: [{ type: 'text', text: '{"actor": 1}' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
      },
    });
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films, maxRepeatAttempts: 1 }))
      .defaultTools({ lookup })
      .build();
    await assert.rejects(client.prompt('films').call().content(), (e: unknown) => {
      assert.ok(StructuredOutputValidationError.isInstance(e), String(e));
      assert.equal(e.attempts, 2);
      assert.equal(e.rounds, 3);
      return true;
    });
    assert.equal(calls, 3, 'invalid, tool call, invalid: the second invalid answer is the last');
  });
});

describe('StructuredOutputValidationAdvisor: a re-ask answered with a tool call', () => {
  const lookup = tool({ inputSchema: z.object({ name: z.string() }), execute: async () => 'Big (1988)' });
  const script = [
    { text: '{"actor": "Tom Hanks"}' },
    { toolCalls: [{ name: 'lookup', input: { name: 'Tom Hanks' } }] },
    { text: '{"actor": "Tom Hanks", "movies": ["Big"]}' },
  ];

  for (const mode of ['call', 'stream'] as const) {
    test(`${mode}: later rounds of the call show the model the failed answer and the re-ask before the call that answered them`, async () => {
      const model = mockModel(script);
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films }))
        .defaultTools({ lookup })
        .build();
      let response: ChatResponse;
      if (mode === 'call') response = await client.prompt('films').call().chatResponse();
      else {
        let finish: ChatResponse | undefined;
        for await (const event of client.prompt('films').stream().chatResponse()) if (event.type === 'finish') finish = event.response.response;
        response = finish!;
      }
      const prompts = mode === 'call' ? model.doGenerateCalls : model.doStreamCalls;
      assert.equal(prompts.length, 3);
      const last = prompts[2]!.prompt;
      assert.deepEqual(
        last.map((m) => m.role),
        ['system', 'user', 'assistant', 'user', 'assistant', 'tool'],
      );
      assert.equal(textOf(last[2]!.content), '{"actor": "Tom Hanks"}');
      assert.match(textOf(last[3]!.content), /movies/);
      // What the call adds to the conversation (what a memory stores, what a UI shows) holds no re-ask: they never saw one.
      assert.deepEqual(
        response.messages.map((m) => m.role),
        ['assistant', 'tool', 'assistant'],
      );
      assert.deepEqual(JSON.parse(response.text), { actor: 'Tom Hanks', movies: ['Big'] });
    });
  }

  test('with a chat memory, the next turn sent whole (as useChat does) reaches the model once, without the re-ask', async () => {
    const model = mockModel([...script, { text: '{"actor": "Meg Ryan", "movies": []}' }]);
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(model)
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films }))
      .defaultTools({ lookup })
      .build();
    const inConversation = (spec: ReturnType<typeof client.prompt>) => spec.advisors((a) => a.param(CONVERSATION_ID, 'films'));
    const first = await inConversation(client.prompt('films')).call().chatResponse();
    await inConversation(client.prompt().messages({ role: 'user', content: 'films' }, ...first.messages, { role: 'user', content: 'And Meg Ryan?' }))
      .call()
      .content();
    assert.deepEqual(
      model.doGenerateCalls[3]!.prompt.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
  });
});

describe('StructuredOutputValidationAdvisor: the answer it validated', () => {
  test('entity() returns the value the advisor validated: refinements and transforms run once per answer', async () => {
    let checks = 0;
    let made = 0;
    const Order = z
      .object({ id: z.string() })
      .refine(async ({ id }) => {
        checks += 1;
        return id.startsWith('ord_');
      }, 'unknown order id')
      .transform((o) => ({ ...o, serial: ++made }));
    const model = mockModel([{ text: '{"id": "x"}' }, { text: '{"id": "ord_1"}' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new StructuredOutputValidationAdvisor()).build();
    assert.deepEqual(await client.prompt('order').call().entity(Order), { id: 'ord_1', serial: 1 });
    assert.equal(checks, 2, 'once per answer: the invalid one and the valid one');
    assert.equal(made, 1);
  });

  test('an advisor that changes the answer after validation: entity() parses the text it gets', async () => {
    const model = mockModel([{ text: '{"actor": "Tom Hanks", "movies": []}' }]);
    const rewrite = beforeAfterAdvisor({
      name: 'Rewrite',
      order: AdvisorOrder.VALIDATION - 1,
      after: (r) => ({ ...r, response: { ...r.response, text: '{"actor": "Meg Ryan", "movies": []}' } }),
    });
    const client = ChatClient.builder(model).defaultAdvisors(rewrite, new StructuredOutputValidationAdvisor()).build();
    assert.deepEqual(await client.prompt('films').call().entity(Films), { actor: 'Meg Ryan', movies: [] });
  });
});

describe('StructuredOutputValidationAdvisor in stream(): a tool round', () => {
  test("its text streams before its tool call, as the model sent them (and as streamText's UI message has them)", async () => {
    const ping = tool({ inputSchema: z.object({}), execute: async () => 'pong' });
    const model = mockModel([{ text: 'Let me check.', toolCalls: [{ name: 'ping', input: {} }] }, { text: '{"actor": "A", "movies": []}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), new StructuredOutputValidationAdvisor({ schema: Films }))
      .defaultTools({ ping })
      .build();
    // Consecutive text deltas as one text.
    const order: string[] = [];
    for await (const event of client.prompt('go').stream().chatResponse()) {
      if (event.type === 'text-delta' && order.at(-1)?.startsWith('text:')) order.push(`${order.pop()}${event.text}`);
      else if (event.type === 'text-delta') order.push(`text:${event.text}`);
      else if (event.type !== 'finish') order.push(event.type);
    }
    assert.deepEqual(order, ['text:Let me check.', 'tool-call', 'tool-result', 'text:{"actor": "A", "movies": []}']);
  });
});

describe('StructuredOutputValidationAdvisor: its place in the chain', () => {
  test('ordered outside the tool loop, it is refused when the client is built: each re-ask would run the tools again', () => {
    const outside = new StructuredOutputValidationAdvisor({ schema: Films, order: AdvisorOrder.TOOL_LOOP - 1 });
    assert.throws(
      () => ChatClient.builder(mockModel([])).defaultAdvisors(new ToolCallAdvisor(), outside).build(),
      (e: unknown) =>
        AdvisorPlacementError.isInstance(e) &&
        e.advisor === 'StructuredOutputValidationAdvisor' &&
        e.toolLoop === 'ToolCallingAdvisor' &&
        /runs outside ToolCallingAdvisor/.test(e.message) &&
        /AdvisorOrder\.VALIDATION/.test(e.message),
    );
  });

  test('without a tool loop, any order is fine', async () => {
    const model = mockModel([{ text: '{"actor": "A", "movies": []}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films, order: AdvisorOrder.MEMORY }))
      .build();
    assert.deepEqual(JSON.parse(await client.prompt('films').call().content()), { actor: 'A', movies: [] });
  });
});

describe('StructuredOutputValidationAdvisor: what the error and the re-ask say', () => {
  test("the error does not quote the answer; the re-ask to the model keeps the parser's detail", async () => {
    const model = mockModel([{ text: '{"actor": "Ann", "password": hunter2!}' }, { text: '{"actor": "Ann", "password": hunter2!}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ schema: Films, maxRepeatAttempts: 1 }))
      .build();
    await assert.rejects(client.prompt('x').call().content(), (e: unknown) => {
      assert.ok(StructuredOutputValidationError.isInstance(e));
      assert.doesNotMatch(e.message, /hunter2|assword/);
      assert.doesNotMatch(e.errors.join('\n'), /hunter2|assword/);
      assert.match(e.message, /line 1, column 30/);
      return true;
    });
    const feedback = textOf(model.doGenerateCalls[1]!.prompt.at(-1)!.content);
    assert.match(feedback, /line 1, column 30/);
    assert.match(feedback, /Unexpected token/);
  });

  test('a 20,000-item invalid array: the error and the re-ask list 20 issues and how many more', async () => {
    const answer = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: String(i) })));
    const model = mockModel([{ text: answer }, { text: answer }]);
    const schema = z.array(z.object({ id: z.number(), name: z.string() }));
    const client = ChatClient.builder(model)
      .defaultAdvisors(new StructuredOutputValidationAdvisor({ maxRepeatAttempts: 1 }))
      .build();
    await assert.rejects(client.prompt('x').call().entity(schema), (e: unknown) => {
      assert.ok(StructuredOutputValidationError.isInstance(e));
      assert.equal(e.errors.length, 21);
      assert.equal(e.errors.at(-1), 'and 39980 more issues');
      assert.ok(e.message.length < 4_000, `message of ${e.message.length} characters`);
      return true;
    });
    const feedback = textOf(model.doGenerateCalls[1]!.prompt.at(-1)!.content);
    assert.ok(feedback.length < 4_000, `re-ask of ${feedback.length} characters`);
    assert.match(feedback, /and 39980 more issues/);
  });

  test('an answer whose JSON string holds a code fence passes at once', async () => {
    const answer = { actor: 'Tom Hanks', movies: ['```\nBig\n```'] };
    await using server = await new ScriptedModelServer({ script: [{ text: JSON.stringify(answer) }] }).start();
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new StructuredOutputValidationAdvisor()).build();
    assert.deepEqual(await client.prompt('Tom Hanks films').call().entity(Films), answer);
    assert.equal(server.requests.length, 1);
  });
});
