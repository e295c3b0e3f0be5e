import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { InvalidConversationIdError, MessageTooLargeError } from './chat-memory-errors.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { TokenWindowChatMemory } from './token-window-chat-memory.ts';
import { CharsPerTokenEstimator, type Tokenizer } from './tokenizer.ts';
import { toolExchange, userText } from './test-support/sample-messages.ts';

const system = (text: string): ModelMessage => ({ role: 'system', content: text });
/** One token per character: makes the arithmetic of the tests visible. */
const perCharacter: Tokenizer = { count: (text) => text.length };

describe('TokenWindowChatMemory', () => {
  test('keeps the newest messages that fit, with the system message counted and kept first', async () => {
    // Default estimator: 4 characters per token. System = 2 tokens, each question = 10 tokens.
    const memory = new TokenWindowChatMemory({ maxTokens: 35 });
    const questions = Array.from({ length: 5 }, (_, i) => userText(`${i}`.repeat(40)));
    await memory.add('c', [system('abcdefgh'), ...questions]);

    assert.deepStrictEqual(await memory.get('c'), [system('abcdefgh'), ...questions.slice(2)]);
  });

  test('never separates a tool call from its result', async () => {
    // Costs with one token per character: call = "lookup" + '{"id":"call-1"}' = 21, result = "lookup" + "ok" = 8.
    const [call, result] = toolExchange('call-1');
    const history = [userText('hello'), call, result, userText('bye')];

    const tight = new TokenWindowChatMemory({ maxTokens: 20, tokenizer: perCharacter });
    await tight.add('c', history);
    assert.deepStrictEqual(await tight.get('c'), [userText('bye')], 'the result alone would fit, but not without its call');

    const roomy = new TokenWindowChatMemory({ maxTokens: 32, tokenizer: perCharacter, repository: tight.repository });
    assert.deepStrictEqual(await roomy.get('c'), [call, result, userText('bye')]);
  });

  test('counts tool arguments and results, not only text', async () => {
    const bigResult: ModelMessage = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 't',
          output: { type: 'json', value: { rows: 'r'.repeat(500) } },
        },
      ],
    };
    const call: ModelMessage = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: {} }],
    };
    const memory = new TokenWindowChatMemory({ maxTokens: 100, tokenizer: perCharacter });
    await memory.add('c', [userText('q'), call, bigResult, userText('next')]);

    assert.deepStrictEqual(await memory.get('c'), [userText('next')]);
  });

  test('an empty conversation id or an oversized message is a typed error and nothing is written', async () => {
    const repository = new InMemoryChatMemoryRepository();
    const memory = new TokenWindowChatMemory({ maxTokens: 100, repository, maxMessageBytes: 64 });

    await assert.rejects(memory.add('', [userText('x')]), InvalidConversationIdError);
    await assert.rejects(memory.add('c', [userText('ok'), userText('y'.repeat(100))]), MessageTooLargeError);
    assert.deepStrictEqual(await repository.findConversationIds(), []);
  });

  test('the default tokenizer is an estimate of four characters per token', () => {
    const estimator = new CharsPerTokenEstimator();
    assert.equal(estimator.count(''), 0);
    assert.equal(estimator.count('abc'), 1);
    assert.equal(estimator.count('abcdefghi'), 3);
    assert.equal(new CharsPerTokenEstimator({ charsPerToken: 2 }).count('abcd'), 2);
  });

  test('bad options are rejected at construction, naming the option', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => new TokenWindowChatMemory({} as { maxTokens: number }), 'maxTokens'],
      [() => new TokenWindowChatMemory({ maxTokens: 0 }), 'maxTokens'],
      [() => new TokenWindowChatMemory({ maxTokens: 10, tokenizer: {} as Tokenizer }), 'tokenizer'],
      [() => new TokenWindowChatMemory({ maxTokens: 10, maxMessageBytes: -1 }), 'maxMessageBytes'],
      [() => new CharsPerTokenEstimator({ charsPerToken: 0 }), 'charsPerToken'],
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option);
    }
  });
});
