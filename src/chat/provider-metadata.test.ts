/**
 * What a provider attaches to the parts of an assistant turn (Anthropic's
 * thinking signatures, Gemini's thought signatures, OpenAI's item ids), the
 * files it generates and the tools it runs itself must reach the model again
 * exactly as the AI SDK's generateText keeps them: in the tool loop's next
 * round and, through memory, in the next turn. Providers refuse a turn sent
 * back without them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import type { LanguageModelV4Content, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { tool, type ModelMessage } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { ChatClient, CONVERSATION_ID, MessageChatMemoryAdvisor, MessageWindowChatMemory, ToolCallAdvisor, type ChatClientRequestSpec } from '../index.ts';
import { ScriptedModelServer } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/**
 * The same content as a provider streams it: each text and reasoning block
 * as start, deltas and end, with the metadata where providers send it (a
 * thinking signature on a last empty delta, as @ai-sdk/anthropic does; a
 * text block's on its end); whole parts as they are.
 */
function streamed(content: readonly LanguageModelV4Content[]): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  content.forEach((part, index) => {
    const id = String(index);
    if (part.type === 'reasoning') {
      parts.push({ type: 'reasoning-start', id });
      const half = Math.ceil(part.text.length / 2);
      parts.push({ type: 'reasoning-delta', id, delta: part.text.slice(0, half) }, { type: 'reasoning-delta', id, delta: part.text.slice(half) });
      if (part.providerMetadata) parts.push({ type: 'reasoning-delta', id, delta: '', providerMetadata: part.providerMetadata });
      parts.push({ type: 'reasoning-end', id });
    } else if (part.type === 'text') {
      parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text });
      parts.push({ type: 'text-end', id, ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}) });
    } else {
      parts.push(part as LanguageModelV4StreamPart);
    }
  });
  const calls = content.some((part) => part.type === 'tool-call' && part.providerExecuted !== true);
  parts.push({ type: 'finish', usage: USAGE, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined } });
  return parts;
}

/** A model that answers each round with the next content, in doGenerate and doStream alike. */
function scriptedModel(rounds: readonly (readonly LanguageModelV4Content[])[]): MockLanguageModelV4 {
  let round = 0;
  const next = (): readonly LanguageModelV4Content[] => {
    const content = rounds[round++];
    if (content === undefined) throw new Error(`script exhausted after ${rounds.length} rounds`);
    return content;
  };
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const content = next();
      const calls = content.some((part) => part.type === 'tool-call' && part.providerExecuted !== true);
      return { content: [...content], finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage: USAGE, warnings: [] };
    },
    doStream: async () => ({ stream: convertArrayToReadableStream(streamed(next())) }),
  });
}

/** The prompts the model was sent, in either mode. */
function prompts(model: MockLanguageModelV4): LanguageModelV4Prompt[] {
  return [...model.doGenerateCalls, ...model.doStreamCalls].map((call) => call.prompt);
}

/** Each assistant part of a prompt as type, its text or tool, and its provider options. */
function assistantParts(prompt: LanguageModelV4Prompt): Array<[string, string, unknown]> {
  return prompt.flatMap((message) =>
    message.role === 'assistant'
      ? message.content.map((part): [string, string, unknown] => [
          part.type,
          'text' in part ? part.text : 'toolName' in part ? part.toolName : '',
          part.providerOptions,
        ])
      : [],
  );
}

const inConversation = (spec: ChatClientRequestSpec, id: string): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, id));

const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `15°C in ${city}` });

describe('provider metadata of assistant parts', () => {
  for (const mode of MODES) {
    test(`${mode}: reasoning signatures and thought signatures go back in the tool loop's next round and, from memory, in the next turn`, async () => {
      const model = scriptedModel([
        [
          { type: 'reasoning', text: 'I should check the weather.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}', providerMetadata: { google: { thoughtSignature: 'ts-1' } } },
        ],
        [
          { type: 'reasoning', text: 'The tool said 15°C.', providerMetadata: { anthropic: { signature: 'sig-2' } } },
          { type: 'text', text: 'It is 15°C in Paris.', providerMetadata: { openai: { itemId: 'msg_1' } } },
        ],
        [{ type: 'text', text: 'You are welcome.' }],
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultTools({ weather })
        .defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();

      assert.equal((await runMode(inConversation(client.prompt('Weather in Paris?'), 'c'), mode)).text, 'It is 15°C in Paris.');
      assert.equal((await runMode(inConversation(client.prompt('Thanks!'), 'c'), mode)).text, 'You are welcome.');

      const [, loopRound, nextTurn] = prompts(model);
      const firstRound: Array<[string, string, unknown]> = [
        ['reasoning', 'I should check the weather.', { anthropic: { signature: 'sig-1' } }],
        ['tool-call', 'weather', { google: { thoughtSignature: 'ts-1' } }],
      ];
      assert.deepEqual(assistantParts(loopRound!), firstRound);
      assert.deepEqual(assistantParts(nextTurn!), [
        ...firstRound,
        ['reasoning', 'The tool said 15°C.', { anthropic: { signature: 'sig-2' } }],
        ['text', 'It is 15°C in Paris.', { openai: { itemId: 'msg_1' } }],
      ]);
    });

    test(`${mode}: generated files and the calls and results of tools the provider ran stay in the turn, as generateText keeps them`, async () => {
      const model = scriptedModel([
        [
          { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: '{"query":"Paris"}', providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', result: [{ url: 'https://paris.example' }] },
          {
            type: 'file',
            mediaType: 'image/png',
            data: { type: 'data', data: new Uint8Array([1, 2, 3]) },
            providerMetadata: { google: { thoughtSignature: 'ts-f' } },
          },
          { type: 'text', text: 'Here is Paris.' },
          { type: 'source', sourceType: 'url', id: 's1', url: 'https://paris.example' },
        ],
        [{ type: 'text', text: 'Glad to help.' }],
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory })).build();

      const { response } = await runMode(inConversation(client.prompt('Show me Paris'), 'f'), mode);
      const expected: ModelMessage = {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: { query: 'Paris' }, providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', output: { type: 'json', value: [{ url: 'https://paris.example' }] } },
          { type: 'file', data: 'AQID', mediaType: 'image/png', providerOptions: { google: { thoughtSignature: 'ts-f' } } },
          { type: 'text', text: 'Here is Paris.' },
        ],
      };
      assert.deepStrictEqual(response.messages, [expected]);
      assert.deepStrictEqual((await memory.get('f'))[1], expected);

      await runMode(inConversation(client.prompt('Thanks'), 'f'), mode);
      const sentBack = prompts(model)[1]!.find((message) => message.role === 'assistant');
      assert.deepEqual(
        sentBack?.content.map((part) => part.type),
        ['tool-call', 'tool-result', 'file', 'text'],
      );
    });
  }

  test('a streamed turn is stored as the same turn called: blocks in stream order, one reasoning part per block, each with its signature', async () => {
    const turn: LanguageModelV4Content[] = [
      { type: 'reasoning', text: 'First, the question.', providerMetadata: { anthropic: { signature: 'sig-a' } } },
      { type: 'reasoning', text: 'Then, the answer.', providerMetadata: { anthropic: { signature: 'sig-b' } } },
      { type: 'text', text: 'The answer is 42.' },
    ];
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(scriptedModel([turn, turn]))
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }))
      .build();

    await runMode(inConversation(client.prompt('Question?'), 'called'), 'call');
    await runMode(inConversation(client.prompt('Question?'), 'streamed'), 'stream');

    const expected: ModelMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'First, the question.', providerOptions: { anthropic: { signature: 'sig-a' } } },
        { type: 'reasoning', text: 'Then, the answer.', providerOptions: { anthropic: { signature: 'sig-b' } } },
        { type: 'text', text: 'The answer is 42.' },
      ],
    };
    assert.deepStrictEqual((await memory.get('streamed'))[1], expected);
    assert.deepStrictEqual((await memory.get('called'))[1], expected);
  });

  test('stream: a redacted reasoning block (metadata, no text) and a thought signature on a text delta are kept', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
          { type: 'stream-start', warnings: [] },
          { type: 'reasoning-start', id: 'r', providerMetadata: { anthropic: { redactedData: 'opaque' } } },
          { type: 'reasoning-end', id: 'r' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Done', providerMetadata: { google: { thoughtSignature: 'ts-t' } } },
          { type: 'text-delta', id: 't', delta: '.' },
          { type: 'text-end', id: 't' },
          { type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: undefined } },
        ]),
      }),
    });
    const { response } = await runMode(ChatClient.builder(model).build().prompt('Go'), 'stream');
    assert.deepStrictEqual(response.messages, [
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
          { type: 'text', text: 'Done.', providerOptions: { google: { thoughtSignature: 'ts-t' } } },
        ],
      },
    ]);
  });

  for (const mode of MODES) {
    test(`${mode}: through @ai-sdk/anthropic over HTTP, the signed thinking block goes back with its signature, in the loop and from memory`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          {
            reasoning: { text: 'The user wants the weather. I will call the tool.', signature: 'sig-abc' },
            toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }],
          },
          { text: 'It is 15°C in Oslo.' },
          { text: 'Bye.' },
        ],
      }).start();
      const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'sk-ant-test' });
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(anthropic('claude-test'))
        .defaultOptions({ maxOutputTokens: 256 })
        .defaultTools({ weather })
        .defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();

      assert.equal((await runMode(inConversation(client.prompt('Weather in Oslo?'), 'a'), mode)).text, 'It is 15°C in Oslo.');
      assert.equal((await runMode(inConversation(client.prompt('Thanks'), 'a'), mode)).text, 'Bye.');

      const thinking = { type: 'thinking', thinking: 'The user wants the weather. I will call the tool.', signature: 'sig-abc' };
      for (const request of [server.requests[1]!, server.requests[2]!]) {
        const messages = request.body.messages as unknown as Array<{ role: string; content: unknown }>;
        const assistant = messages.find((message) => message.role === 'assistant');
        assert.ok(Array.isArray(assistant?.content), JSON.stringify(messages));
        const [first, second] = assistant.content as Array<Record<string, unknown>>;
        assert.deepEqual(first, thinking);
        assert.equal(second?.['type'], 'tool_use');
      }
    });
  }
});
