import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { ToolCallAdvisor } from '../advisors/tool-call-advisor.ts';
import { CONVERSATION_ID } from '../chat/advisor-context.ts';
import { ChatClient } from '../chat/chat-client.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { InvalidConversationIdError } from './chat-memory-errors.ts';
import { MessageChatMemoryAdvisor } from './message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from './message-window-chat-memory.ts';
import { PromptChatMemoryAdvisor } from './prompt-chat-memory-advisor.ts';
import { promptLines } from './test-support/prompt-lines.ts';
import { RecordingChatMemory } from './test-support/recording-memory.ts';

const weather = tool({
  description: 'weather',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `15°C in ${city}`,
});

const toolLoopModel = () =>
  mockModel([
    { toolCalls: [{ name: 'weather', input: { city: 'Paris' } }] },
    { toolCalls: [{ name: 'weather', input: { city: 'Rome' } }] },
    { text: 'Paris 15, Rome 15' },
  ]);

function roles(messages: readonly ModelMessage[]): string[] {
  return messages.map((message) => message.role);
}

describe('MessageChatMemoryAdvisor', () => {
  test('remembers a conversation across calls, as messages before the new user message', async () => {
    const memory = new RecordingChatMemory();
    const model = mockModel([{ text: 'Hi Ana' }, { text: 'You are Ana' }]);
    const client = ChatClient.builder(model).defaultSystem('Be brief.').defaultAdvisors(new MessageChatMemoryAdvisor({ memory })).build();

    await client
      .prompt('My name is Ana')
      .advisors((a) => a.param(CONVERSATION_ID, 'c1'))
      .call()
      .content();
    await client
      .prompt('Who am I?')
      .advisors((a) => a.param(CONVERSATION_ID, 'c1'))
      .call()
      .content();

    assert.deepStrictEqual(promptLines(model.doGenerateCalls[1]!.prompt), [
      'system: Be brief.',
      'user: My name is Ana',
      'assistant: Hi Ana',
      'user: Who am I?',
    ]);
    assert.deepStrictEqual(await memory.get('c1'), [
      { role: 'user', content: 'My name is Ana' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hi Ana' }] },
      { role: 'user', content: 'Who am I?' },
      { role: 'assistant', content: [{ type: 'text', text: 'You are Ana' }] },
    ]);
  });

  test("a remembered system message is added after the request's own instructions, and stands in when there are none", async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c1', [
      { role: 'system', content: 'The user prefers metric units.' },
      { role: 'user', content: 'Hi' },
    ]);
    const model = mockModel([{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }]);
    const ask = (client: ChatClient, conversationId: string) =>
      client
        .prompt('Weather?')
        .advisors((a) => a.param(CONVERSATION_ID, conversationId))
        .call()
        .content();
    const advisor = new MessageChatMemoryAdvisor({ memory });
    await ask(ChatClient.builder(model).defaultSystem('Be brief.').defaultAdvisors(advisor).build(), 'c1');
    await ask(ChatClient.builder(model).defaultAdvisors(advisor).build(), 'c2');
    await memory.add('c2', [{ role: 'system', content: 'Be brief.' }]);
    await ask(ChatClient.builder(model).defaultSystem('Be brief.').defaultAdvisors(advisor).build(), 'c2');

    assert.deepStrictEqual(promptLines(model.doGenerateCalls[0]!.prompt), [
      'system: Be brief.\n\nThe user prefers metric units.',
      'user: Hi',
      'user: Weather?',
    ]);
    assert.deepStrictEqual(promptLines(model.doGenerateCalls[1]!.prompt), ['user: Weather?'], 'nothing remembered yet');
    assert.equal(promptLines(model.doGenerateCalls[2]!.prompt)[0], 'system: Be brief.', 'the same instructions are not repeated');
  });

  test('sits outside the tool loop: reads once, writes once, after the whole loop, every round included', async () => {
    const memory = new RecordingChatMemory();
    await memory.add('c1', [
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
    ]);
    memory.adds = 0;
    const advisor = new MessageChatMemoryAdvisor({ memory });
    const loop = new ToolCallAdvisor();
    assert.ok(advisor.order < loop.order, 'the default order is outside the ToolCallAdvisor');

    const model = toolLoopModel();
    const client = ChatClient.builder(model).defaultAdvisors(loop, advisor).defaultTools({ weather }).build();
    const answer = await client
      .prompt('Weather?')
      .advisors((a) => a.param(CONVERSATION_ID, 'c1'))
      .call()
      .content();

    assert.equal(answer, 'Paris 15, Rome 15');
    assert.equal(memory.gets, 1);
    assert.equal(memory.adds, 1);
    for (const call of model.doGenerateCalls) {
      assert.deepStrictEqual(promptLines(call.prompt).slice(0, 3), ['user: earlier question', 'assistant: earlier answer', 'user: Weather?']);
    }
    const stored = await memory.get('c1');
    assert.deepStrictEqual(roles(stored), ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    const results = stored.filter((message) => message.role === 'tool').flatMap((message) => message.content);
    assert.deepStrictEqual(
      results.map((part) => (part.type === 'tool-result' ? part.output : undefined)),
      [
        { type: 'text', value: '15°C in Paris' },
        { type: 'text', value: '15°C in Rome' },
      ],
    );
  });

  test('a call that fails before any tool ran writes nothing: no half turn', async () => {
    const memory = new RecordingChatMemory();
    // The model fails on the first round: nothing ran.
    const model = mockModel([]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory })).defaultTools({ weather }).build();

    await assert.rejects(client.prompt('Weather?').call().content(), /script exhausted/);
    assert.equal(memory.adds, 0);
    assert.deepStrictEqual(await memory.get('default'), []);
  });

  test('stream(): writes the turn once, when the stream finishes; an abandoned stream writes nothing', async () => {
    const memory = new RecordingChatMemory();
    const client = ChatClient.builder(toolLoopModel())
      .defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .defaultTools({ weather })
      .build();
    let text = '';
    for await (const delta of client
      .prompt('Weather?')
      .advisors((a) => a.param(CONVERSATION_ID, 's1'))
      .stream()
      .content()) {
      text += delta;
    }
    assert.equal(text, 'Paris 15, Rome 15');
    assert.equal(memory.adds, 1);
    assert.deepStrictEqual(roles(await memory.get('s1')), ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);

    const abandoned = ChatClient.builder(mockModel([{ text: 'a long answer' }]))
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }))
      .build();
    for await (const delta of abandoned
      .prompt('Hi')
      .advisors((a) => a.param(CONVERSATION_ID, 's2'))
      .stream()
      .content()) {
      assert.ok(delta.length > 0);
      break;
    }
    assert.deepStrictEqual(await memory.get('s2'), []);
  });

  test('the conversation id comes from the advisor param, else the configured default', async () => {
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(mockModel([{ text: 'one' }, { text: 'two' }]))
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory, conversationId: 'fallback' }))
      .build();

    await client.prompt('first').call().content();
    await client
      .prompt('second')
      .advisors((a) => a.param(CONVERSATION_ID, 'named'))
      .call()
      .content();

    assert.deepStrictEqual(roles(await memory.get('fallback')), ['user', 'assistant']);
    assert.deepStrictEqual(roles(await memory.get('named')), ['user', 'assistant']);
    assert.deepStrictEqual(await memory.get('default'), []);
  });

  test('a blank conversation id param is a typed error before the model is called', async () => {
    const model = mockModel([{ text: 'never' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory() }))
      .build();

    await assert.rejects(
      client
        .prompt('hi')
        .advisors((a) => a.param(CONVERSATION_ID, '  '))
        .call()
        .content(),
      InvalidConversationIdError,
    );
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test("the memory's window decides how much history the model sees", async () => {
    const memory = new MessageWindowChatMemory({ maxMessages: 2 });
    const model = mockModel([{ text: 'a1' }, { text: 'a2' }, { text: 'a3' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new MessageChatMemoryAdvisor({ memory })).build();
    for (const question of ['q1', 'q2', 'q3']) await client.prompt(question).call().content();

    assert.deepStrictEqual(promptLines(model.doGenerateCalls[2]!.prompt), ['user: q2', 'assistant: a2', 'user: q3']);
  });

  test('only the trailing user messages of a request are stored, not repeated default messages', async () => {
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(mockModel([{ text: 'a1' }, { text: 'a2' }]))
      .defaultMessages({ role: 'user', content: 'example question' }, { role: 'assistant', content: 'example answer' })
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }))
      .build();
    await client.prompt('q1').call().content();
    await client.prompt('q2').call().content();

    const stored = (await memory.get('default')).map((message) =>
      typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
    );
    assert.deepStrictEqual(stored, ['q1', 'a1', 'q2', 'a2']);
  });

  test('bad options are rejected at construction, naming the option', () => {
    assert.throws(
      () => new MessageChatMemoryAdvisor({} as { memory: MessageWindowChatMemory }),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'memory',
    );
    assert.throws(
      () => new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory(), conversationId: '' }),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'conversationId',
    );
    // Ids every repository refuses are refused here, for both memory advisors, saying why.
    for (const [conversationId, why] of [
      ['tenant\u0000a', /NUL character/],
      ['x'.repeat(2_000), /2000 bytes long in UTF-8, the limit is 1024/],
      ['\ud800', /lone surrogate/],
    ] as const) {
      for (const make of [
        () => new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory(), conversationId }),
        () => new PromptChatMemoryAdvisor({ memory: new MessageWindowChatMemory(), conversationId }),
      ]) {
        assert.throws(make, (error: unknown) => InvalidOptionError.isInstance(error) && error.option === 'conversationId' && why.test(error.message));
      }
    }
  });
});
