import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  InvalidConversationIdError,
  InvalidOptionError,
  MessageChatMemoryAdvisor,
  MessageTooLargeError,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  TokenWindowChatMemory,
  ToolCallingAdvisor,
  ToolResultConflictError,
  type ChatClientRequestSpec,
  type ChatMemoryRepository,
} from '../index.ts';
import { SqliteChatMemoryRepository } from '../sqlite/index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { promptLines } from './test-support/prompt-lines.ts';

const inConversation = (spec: ChatClientRequestSpec, id = 'c1'): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, id));

function shape(messages: readonly ModelMessage[]): Array<[string, string | string[]]> {
  return messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((p) => p.type)]);
}

function toolResults(messages: readonly ModelMessage[]): unknown[] {
  return messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
}

const NOT_ANSWERED = { type: 'execution-denied', reason: 'not answered: the conversation went on before this tool call got a result' };

describe('chat memory keeps every conversation usable', () => {
  for (const mode of MODES) {
    test(`${mode}: a user who writes instead of answering a pending approval is not locked out; the call gets a closing result`, async () => {
      let refunds = 0;
      const refund = tool({
        description: 'refund',
        inputSchema: z.object({ amount: z.number() }),
        needsApproval: true,
        execute: async () => {
          refunds++;
          return 'refunded';
        },
      });
      const memory = new MessageWindowChatMemory();
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 500 }, id: 'call-1' }] }, { text: 'ok, no refund' }, { text: 'hello' }]);
      const client = ChatClient.builder(model)
        .defaultTools({ refund })
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
        .build();

      const first = await runMode(inConversation(client.prompt('Refund my order')), mode);
      assert.equal(first.response.pendingApprovals?.length, 1);
      assert.equal((await runMode(inConversation(client.prompt('Actually, never mind.')), mode)).text, 'ok, no refund');
      assert.equal((await runMode(inConversation(client.prompt('Hello?')), mode)).text, 'hello');

      const calls = mode === 'call' ? model.doGenerateCalls : model.doStreamCalls;
      const closing = `tool refund: ${JSON.stringify(NOT_ANSWERED)}`;
      assert.deepStrictEqual(promptLines(calls[1]!.prompt), ['user: Refund my order', 'assistant: -> refund', closing, 'user: Actually, never mind.']);
      assert.ok(promptLines(calls[2]!.prompt).includes(closing));
      assert.equal(refunds, 0, 'the abandoned call never ran');
      assert.deepStrictEqual(toolResults(await memory.get('c1')), [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'refund', output: NOT_ANSWERED }]);
    });
  }

  test('a tool result the caller sends back for a client-side tool is stored with the turn, once', async () => {
    const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }) });
    const memory = new MessageWindowChatMemory();
    const model = mockModel([
      { toolCalls: [{ name: 'weather', input: { city: 'Paris' }, id: 'call-1' }] },
      { text: 'It is 15C in Paris' },
      { text: 'You are welcome' },
    ]);
    const client = ChatClient.builder(model).defaultTools({ weather }).defaultAdvisors(new MessageChatMemoryAdvisor({ memory })).build();
    const result = (toolCallId: string): ModelMessage => ({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId, toolName: 'weather', output: { type: 'text', value: '15C' } }],
    });

    await inConversation(client.prompt('Weather in Paris?')).call().content();
    assert.equal(
      await inConversation(client.prompt().messages(result('call-1')))
        .call()
        .content(),
      'It is 15C in Paris',
    );
    assert.equal(
      await inConversation(client.prompt().messages(result('call-1'), result('not-in-history')).user('Thanks!'))
        .call()
        .content(),
      'You are welcome',
    );

    assert.deepStrictEqual(shape(await memory.get('c1')), [
      ['user', 'Weather in Paris?'],
      ['assistant', ['tool-call']],
      ['tool', ['tool-result']],
      ['assistant', ['text']],
      ['user', 'Thanks!'],
      ['assistant', ['text']],
    ]);
    assert.deepStrictEqual(promptLines(model.doGenerateCalls[2]!.prompt).slice(0, 4), [
      'user: Weather in Paris?',
      'assistant: -> weather',
      'tool weather: 15C',
      'assistant: It is 15C in Paris',
    ]);
  });

  test('two requests that race to send back the same tool result: one gets the answer, the other ToolResultConflictError; one result in every later prompt', async () => {
    const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }) });
    const memory = new MessageWindowChatMemory();
    const model = mockModel([
      { toolCalls: [{ name: 'weather', input: { city: 'Paris' }, id: 'call-1' }] },
      { text: 'It is 15C in Paris' },
      { text: 'Sunny tomorrow' },
    ]);
    const client = ChatClient.builder(model).defaultTools({ weather }).defaultAdvisors(new MessageChatMemoryAdvisor({ memory })).build();
    const result: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call-1', toolName: 'weather', output: { type: 'text', value: '15C' } }],
    };

    await inConversation(client.prompt('Weather in Paris?')).call().content();
    // A double submit: both requests read the history before either stored its turn.
    const outcomes = await Promise.allSettled([
      inConversation(client.prompt().messages(result)).call().content(),
      inConversation(client.prompt().messages(result)).call().content(),
    ]);
    assert.deepEqual(
      outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])),
      ['It is 15C in Paris'],
    );
    assert.ok(outcomes.some((o) => o.status === 'rejected' && ToolResultConflictError.isInstance(o.reason)));
    assert.equal(model.doGenerateCalls.length, 2, 'the model answered the result once');
    assert.equal(await inConversation(client.prompt('And tomorrow?')).call().content(), 'Sunny tomorrow');
    const sent = model.doGenerateCalls.at(-1)!.prompt;
    assert.equal(toolResults(sent as ModelMessage[]).length, 1, promptLines(sent).join('\n'));
    assert.equal(toolResults(await memory.get('c1')).length, 1);
  });

  test('a tool result memory cannot store as it is (a class instance, a Map) is kept as the model received it, and the answer is returned', async () => {
    class Quote {
      readonly price: number;
      constructor(price: number) {
        this.price = price;
      }
    }
    for (const value of [new Quote(3), new Map([['price', 3]]), { quote: new Quote(3) }]) {
      const lookup = tool({ description: 'lookup', inputSchema: z.object({}), execute: async (): Promise<unknown> => value });
      const memory = new MessageWindowChatMemory();
      const model = mockModel([{ toolCalls: [{ name: 'lookup', input: {}, id: 'q1' }] }, { text: 'The price is 3' }]);
      const client = ChatClient.builder(model)
        .defaultTools({ lookup })
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
        .build();
      assert.equal(await inConversation(client.prompt('Price?')).call().content(), 'The price is 3');
      const [stored] = toolResults(await memory.get('c1')) as Array<{ output: { type: string; value: unknown } }>;
      assert.deepEqual(stored?.output, { type: 'json', value: JSON.parse(JSON.stringify(value)) });
    }
  });

  test('an unanswered call is closed on read, identically on every repository, and the store keeps what was written', async () => {
    const written: ModelMessage[] = [
      { role: 'user', content: 'Weather and news?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'w', toolName: 'weather', input: {} },
          { type: 'tool-call', toolCallId: 'n', toolName: 'news', input: {} },
          { type: 'tool-call', toolCallId: 's', toolName: 'web_search', input: {}, providerExecuted: true },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'w', toolName: 'weather', output: { type: 'text', value: 'sunny' } }] },
      { role: 'user', content: 'Never mind the news.' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'late', toolName: 'weather', input: {} }] },
    ];
    using sqlite = new SqliteChatMemoryRepository({ path: ':memory:' });
    const repositories: ChatMemoryRepository[] = [new InMemoryChatMemoryRepository(), sqlite];
    const seen: ModelMessage[][] = [];
    for (const repository of repositories) {
      await repository.append('c', written);
      seen.push(await new MessageWindowChatMemory({ repository }).get('c'));
      assert.deepStrictEqual(await repository.findByConversationId('c'), written);
    }

    assert.deepStrictEqual(seen[0], [
      ...written.slice(0, 3),
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'n', toolName: 'news', output: NOT_ANSWERED }] },
      ...written.slice(3),
    ]);
    assert.deepStrictEqual(seen[1], seen[0]);
  });

  for (const mode of MODES) {
    test(`${mode}: a user turn over maxMessageBytes is refused before the model is called, and nothing is stored`, async () => {
      const memory = new MessageWindowChatMemory({ maxMessageBytes: 1000 });
      const model = mockModel([{ text: 'A cat.' }]);
      const client = ChatClient.builder(model).defaultAdvisors(new MessageChatMemoryAdvisor({ memory })).build();
      const photo = inConversation(
        client.prompt().user([
          { type: 'text', text: 'What is this?' },
          { type: 'image', image: new Uint8Array(2000), mediaType: 'image/png' },
        ]),
      );

      await assert.rejects(runMode(photo, mode), (error: unknown) => {
        assert.ok(MessageTooLargeError.isInstance(error));
        assert.equal(error.index, 0);
        assert.equal(error.maxBytes, 1000);
        return true;
      });
      assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 0, 'no model call was paid for');
      assert.deepStrictEqual(await memory.get('c1'), []);
    });
  }

  test('a tool result over maxMessageBytes does not cost the answer: it is stored with the result left out, and its size said', async () => {
    let fetches = 0;
    const fetchPage = tool({
      description: 'fetch',
      inputSchema: z.object({ url: z.string() }),
      execute: async () => {
        fetches++;
        return 'x'.repeat(5000);
      },
    });
    const memory = new MessageWindowChatMemory({ maxMessageBytes: 2000 });
    const model = mockModel([
      { toolCalls: [{ name: 'fetchPage', input: { url: 'https://example.com' }, id: 'call-1' }] },
      { text: 'Lots of x.' },
      { text: 'Yes.' },
    ]);
    const client = ChatClient.builder(model)
      .defaultTools({ fetchPage })
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
      .build();

    assert.equal(await inConversation(client.prompt('Summarise example.com')).call().content(), 'Lots of x.');
    assert.equal(await inConversation(client.prompt('Sure?')).call().content(), 'Yes.');

    assert.equal(fetches, 1);
    const stored = await memory.get('c1');
    assert.deepStrictEqual(shape(stored), [
      ['user', 'Summarise example.com'],
      ['assistant', ['tool-call']],
      ['tool', ['tool-result']],
      ['assistant', ['text']],
      ['user', 'Sure?'],
      ['assistant', ['text']],
    ]);
    const [result] = toolResults(stored) as Array<{ toolCallId: string; output: { type: string; value: string } }>;
    assert.equal(result?.toolCallId, 'call-1');
    assert.equal(result?.output.type, 'text');
    const said = /^\[result of tool fetchPage left out of memory: (\d+) bytes, over the 2000-byte limit per stored message\]$/.exec(result?.output.value ?? '');
    assert.ok(said !== null && Number(said[1]) > 5000, `the placeholder says what was left out and its size: ${result?.output.value}`);
    assert.ok(promptLines(model.doGenerateCalls[2]!.prompt).some((line) => line.startsWith('tool fetchPage: [result of tool fetchPage left out')));
  });

  test('a tool result with a BigInt or a cycle is stored as the model read it, and the next turn sends it again', async () => {
    const row: Record<string, unknown> = { id: 9007199254740993n, status: 'shipped' };
    row['self'] = row;
    const getOrder = tool({ description: 'load an order', inputSchema: z.object({}), execute: async () => row });
    const model = mockModel([{ toolCalls: [{ name: 'getOrder', input: {}, id: 'call-1' }] }, { text: 'Shipped.' }, { text: 'Order 9007199254740993.' }]);
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(model)
      .defaultTools({ getOrder })
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
      .build();
    await inConversation(client.prompt('Where is my order?')).call().content();
    await inConversation(client.prompt('Which order?')).call().content();
    const read = 'tool getOrder: {"type":"json","value":{"id":"9007199254740993","status":"shipped","self":"[Circular]"}}';
    assert.ok(promptLines(model.doGenerateCalls[1]!.prompt).includes(read), 'in the call');
    assert.ok(promptLines(model.doGenerateCalls[2]!.prompt).includes(read), 'the next turn, from memory');
  });

  test('a tool call over maxMessageBytes is stored with its input left out but its provider options kept (a thought signature)', async () => {
    const note = tool({ description: 'note', inputSchema: z.object({ text: z.string() }), execute: async () => 'noted' });
    let round = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content:
          round++ === 0
            ? [
                {
                  type: 'tool-call' as const,
                  toolCallId: 'call-1',
                  toolName: 'note',
                  input: JSON.stringify({ text: 'z'.repeat(5000) }),
                  providerMetadata: { google: { thoughtSignature: 'ts-1' } },
                },
              ]
            : [{ type: 'text' as const, text: 'Noted.' }],
        finishReason: { unified: round === 1 ? ('tool-calls' as const) : ('stop' as const), raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    const memory = new MessageWindowChatMemory({ maxMessageBytes: 2000 });
    const client = ChatClient.builder(model).defaultTools({ note }).defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor()).build();

    assert.equal(await inConversation(client.prompt('Take a long note')).call().content(), 'Noted.');
    const call = (await memory.get('c1'))[1]?.content;
    assert.ok(Array.isArray(call) && call[0]?.type === 'tool-call', JSON.stringify(call));
    assert.match(JSON.stringify(call[0].input), /left out of memory/);
    assert.deepStrictEqual(call[0].providerOptions, { google: { thoughtSignature: 'ts-1' } });
  });

  test('stream: an answer over maxMessageBytes reaches the caller whole and is stored with the text left out', async () => {
    const memory = new MessageWindowChatMemory({ maxMessageBytes: 1000 });
    const answer = 'y'.repeat(3000);
    const client = ChatClient.builder(mockModel([{ text: answer }]))
      .defaultAdvisors(new PromptChatMemoryAdvisor({ memory }))
      .build();

    assert.equal((await runMode(inConversation(client.prompt('Write a lot')), 'stream')).text, answer);
    const stored = await memory.get('c1');
    assert.deepStrictEqual(stored[0], { role: 'user', content: 'Write a lot' });
    const content = stored[1]?.content;
    assert.ok(Array.isArray(content) && content.length === 1 && content[0]?.type === 'text');
    assert.match(content[0].text, /^\[text left out of memory: 30\d\d bytes, over the 1000-byte limit per stored message\]$/);
  });

  test('a conversation id a store could not keep apart is refused before the model is called', async () => {
    const model = mockModel([{ text: 'never' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory() }))
      .build();
    for (const id of ['user-\uD800', 'user\u0000', 'u'.repeat(1025)]) {
      await assert.rejects(inConversation(client.prompt('hi'), id).call().content(), InvalidConversationIdError);
    }
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test('a repository without the methods the memory calls is refused at construction, naming the method', () => {
    const partial = (missing: string): ChatMemoryRepository => {
      const methods: Record<string, unknown> = {
        findByConversationId: async () => [],
        saveAll: async () => {},
        append: async () => {},
        deleteByConversationId: async () => {},
      };
      methods[missing] = missing === 'append' ? undefined : 'not a function';
      return methods as unknown as ChatMemoryRepository;
    };
    for (const missing of ['findByConversationId', 'append', 'deleteByConversationId']) {
      for (const construct of [
        () => new MessageWindowChatMemory({ repository: partial(missing) }),
        () => new TokenWindowChatMemory({ maxTokens: 100, repository: partial(missing) }),
      ]) {
        assert.throws(construct, (error: unknown) => {
          assert.ok(InvalidOptionError.isInstance(error));
          assert.equal(error.option, 'repository');
          assert.match(error.message, new RegExp(`its ${missing} is not a function`));
          return true;
        });
      }
    }
  });
});
