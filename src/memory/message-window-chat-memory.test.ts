import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { SqliteChatMemoryRepository } from '../sqlite/sqlite-chat-memory-repository.ts';
import { InvalidConversationIdError, MessageTooLargeError } from './chat-memory-errors.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { MessageWindowChatMemory } from './message-window-chat-memory.ts';
import { toolExchange, userText } from './test-support/sample-messages.ts';

const system = (text: string): ModelMessage => ({ role: 'system', content: text });
const assistantText = (text: string): ModelMessage => ({ role: 'assistant', content: text });

describe('MessageWindowChatMemory', () => {
  test('keeps the last 20 messages by default', async () => {
    const memory = new MessageWindowChatMemory();
    const messages = Array.from({ length: 25 }, (_, i) => userText(`m${i}`));
    await memory.add('c', messages);

    assert.deepStrictEqual(await memory.get('c'), messages.slice(5));
  });

  test('keeps the system message, first, however old it is; it counts towards the window', async () => {
    const memory = new MessageWindowChatMemory({ maxMessages: 4 });
    await memory.add('c', [system('be brief')]);
    for (let i = 0; i < 10; i++) await memory.add('c', [userText(`q${i}`), assistantText(`a${i}`)]);

    assert.deepStrictEqual(await memory.get('c'), [system('be brief'), assistantText('a8'), userText('q9'), assistantText('a9')]);
  });

  test('a newer system message replaces older ones', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [system('old rules'), userText('q1')]);
    await memory.add('c', [system('new rules'), userText('q2')]);

    assert.deepStrictEqual(await memory.get('c'), [system('new rules'), userText('q1'), userText('q2')]);
  });

  test('never separates a tool call from its result: the window drops whole groups', async () => {
    const [call, result] = toolExchange('call-1');
    const history = [userText('q1'), call, result, userText('q2')];

    // The last two messages would start with the orphan tool result; the group goes as a whole.
    const two = new MessageWindowChatMemory({ maxMessages: 2 });
    await two.add('c', history);
    assert.deepStrictEqual(await two.get('c'), [userText('q2')]);

    const three = new MessageWindowChatMemory({ maxMessages: 3 });
    await three.add('c', history);
    assert.deepStrictEqual(await three.get('c'), [call, result, userText('q2')]);
  });

  test('a call answered by several tool messages stays one group', async () => {
    const call: ModelMessage = {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'a', toolName: 'x', input: {} },
        { type: 'tool-call', toolCallId: 'b', toolName: 'y', input: {} },
      ],
    };
    const resultA: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'x', output: { type: 'text', value: '1' } }],
    };
    const resultB: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'b', toolName: 'y', output: { type: 'json', value: 2 } }],
    };
    const memory = new MessageWindowChatMemory({ maxMessages: 4 });
    await memory.add('c', [userText('q'), call, resultA, resultB, assistantText('done')]);

    assert.deepStrictEqual(await memory.get('c'), [call, resultA, resultB, assistantText('done')]);
    const smaller = new MessageWindowChatMemory({ maxMessages: 3, repository: memory.repository });
    assert.deepStrictEqual(await smaller.get('c'), [assistantText('done')]);
  });

  test('concurrent adds to one conversation all land, each batch in one piece', async () => {
    const memory = new MessageWindowChatMemory({ maxMessages: 1000 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => memory.add('c', [userText(`q${i}`), assistantText(`a${i}`)])));
    const texts = (await memory.get('c')).map((message) => String(message.content));
    assert.equal(texts.length, 40);
    for (let i = 0; i < 20; i++) assert.equal(texts[texts.indexOf(`q${i}`) + 1], `a${i}`);
  });

  test('conversations are kept apart and clear forgets one', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('a', [userText('for a')]);
    await memory.add('b', [userText('for b')]);
    await memory.clear('a');

    assert.deepStrictEqual(await memory.get('a'), []);
    assert.deepStrictEqual(await memory.get('b'), [userText('for b')]);
  });

  test('an empty or blank conversation id is a typed error and nothing is written', async () => {
    const repository = new InMemoryChatMemoryRepository();
    const memory = new MessageWindowChatMemory({ repository });
    for (const id of ['', ' \t']) {
      await assert.rejects(memory.add(id, [userText('x')]), InvalidConversationIdError);
      await assert.rejects(memory.get(id), InvalidConversationIdError);
      await assert.rejects(memory.clear(id), InvalidConversationIdError);
    }
    await assert.rejects(memory.add(undefined as unknown as string, [userText('x')]), /Invalid conversation id/);
    assert.deepStrictEqual(await repository.findConversationIds(), []);
  });

  test('a message over maxMessageBytes is a typed error naming the limit, and none of its batch is written', async () => {
    const memory = new MessageWindowChatMemory({ maxMessageBytes: 1000 });
    const big: ModelMessage = { role: 'user', content: [{ type: 'image', image: new Uint8Array(2000) }] };

    await assert.rejects(memory.add('c', [userText('fine'), big]), (error: unknown) => {
      assert.ok(error instanceof MessageTooLargeError);
      assert.equal(error.code, 'GOVERNOR_MESSAGE_TOO_LARGE');
      assert.equal(error.index, 1);
      assert.equal(error.maxBytes, 1000);
      assert.ok(error.bytes > 2000, 'binary data is measured as stored (base64)');
      assert.match(error.message, /maxMessageBytes/);
      return true;
    });
    assert.deepStrictEqual(await memory.get('c'), []);
  });

  test('the default limit is 1 MiB', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [{ role: 'user', content: 'x'.repeat(1024 * 1024 - 100) }]);
    await assert.rejects(memory.add('c', [{ role: 'user', content: 'x'.repeat(1024 * 1024) }]), MessageTooLargeError);
    assert.equal((await memory.get('c')).length, 1);
  });

  test('works the same on a persistent repository', async () => {
    using repository = new SqliteChatMemoryRepository({ path: ':memory:' });
    const memory = new MessageWindowChatMemory({ repository, maxMessages: 3 });
    const [call, result] = toolExchange('call-1');
    await memory.add('c', [system('rules'), userText('q1'), call, result, userText('q2')]);

    assert.deepStrictEqual(await memory.get('c'), [system('rules'), userText('q2')]);
  });

  test('bad options are rejected at construction, naming the option', () => {
    for (const maxMessages of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => new MessageWindowChatMemory({ maxMessages }),
        (error: unknown) => error instanceof InvalidOptionError && error.option === 'maxMessages',
      );
    }
    assert.throws(
      () => new MessageWindowChatMemory({ maxMessageBytes: 0 }),
      (error: unknown) => error instanceof InvalidOptionError && error.option === 'maxMessageBytes',
    );
  });
});
