import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { ToolCallAdvisor } from '../advisors/tool-call-advisor.ts';
import { ChatClient } from '../chat/chat-client.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MessageChatMemoryAdvisor } from './message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from './message-window-chat-memory.ts';
import { TokenBudgetAdvisor } from './token-budget-advisor.ts';
import { promptLines } from './test-support/prompt-lines.ts';
import { toolExchange, userText } from './test-support/sample-messages.ts';
import type { Tokenizer } from './tokenizer.ts';

/** One token per character: makes the arithmetic of the tests visible. */
const perCharacter: Tokenizer = { count: (text) => text.length };
const assistantText = (text: string): ModelMessage => ({ role: 'assistant', content: text });

// Costs, one token per character: "aaaa" 4; call = "lookup" + '{"id":"call-1"}' = 21; result = "lookup" + "ok" = 8; "bbbb" 4; "now" 3.
const [call, result] = toolExchange('call-1');
const history: ModelMessage[] = [userText('aaaa'), call, result, assistantText('bbbb')];

async function promptSent(maxTokens: number, messages: readonly ModelMessage[] = history): Promise<string[]> {
  const model = mockModel([{ text: 'done' }]);
  const client = ChatClient.builder(model)
    .defaultAdvisors(new TokenBudgetAdvisor({ maxTokens, tokenizer: perCharacter }))
    .build();
  await client
    .prompt()
    .messages(...messages)
    .user('now')
    .call()
    .content();
  return promptLines(model.doGenerateCalls[0]!.prompt);
}

describe('TokenBudgetAdvisor', () => {
  test('leaves a prompt under the ceiling alone', async () => {
    assert.deepStrictEqual(await promptSent(40), ['user: aaaa', 'assistant: -> lookup', 'tool lookup: ok', 'assistant: bbbb', 'user: now']);
  });

  test('drops the oldest history first, never a tool result without its call', async () => {
    // 15 tokens would fit "result + bbbb + now", but the result cannot go without its call.
    assert.deepStrictEqual(await promptSent(15), ['assistant: bbbb', 'user: now']);
    assert.deepStrictEqual(await promptSent(36), ['assistant: -> lookup', 'tool lookup: ok', 'assistant: bbbb', 'user: now']);
  });

  test('counts the system prompt and never cuts the current turn', async () => {
    const model = mockModel([{ text: 'done' }]);
    const client = ChatClient.builder(model)
      .defaultSystem('0123456789')
      .defaultAdvisors(new TokenBudgetAdvisor({ maxTokens: 12, tokenizer: perCharacter }))
      .build();
    await client
      .prompt()
      .messages(...history)
      .user('the current question')
      .call()
      .content();

    assert.deepStrictEqual(promptLines(model.doGenerateCalls[0]!.prompt), ['system: 0123456789', 'user: the current question']);
  });

  test('inside the tool loop, every round is held to the ceiling as tool results pile up', async () => {
    const weather = tool({
      description: 'weather',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => `15°C in ${city}`,
    });
    const model = mockModel([{ toolCalls: [{ name: 'weather', input: { city: 'Paris' } }] }, { text: 'Paris is at 15' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), new TokenBudgetAdvisor({ maxTokens: 60, tokenizer: perCharacter }))
      .defaultTools({ weather })
      .build();
    await client
      .prompt()
      .messages(...history)
      .user('Weather in Paris?')
      .call()
      .content();

    // Round 1: 37 history + 17 question = 54 fits. Round 2 adds the call (23) and result (20): history goes.
    assert.equal(model.doGenerateCalls[0]!.prompt.length, 5);
    assert.deepStrictEqual(promptLines(model.doGenerateCalls[1]!.prompt), ['user: Weather in Paris?', 'assistant: -> weather', 'tool weather: 15°C in Paris']);
  });

  test('trims what a memory advisor brought in without changing what the memory stores', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('default', history);
    const model = mockModel([{ text: 'done' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new TokenBudgetAdvisor({ maxTokens: 15, tokenizer: perCharacter }))
      .build();
    await client.prompt('now').call().content();

    assert.deepStrictEqual(promptLines(model.doGenerateCalls[0]!.prompt), ['assistant: bbbb', 'user: now']);
    assert.equal((await memory.get('default')).length, history.length + 2);
  });

  test('bad options are rejected at construction, naming the option', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => new TokenBudgetAdvisor({ maxTokens: 0 }), 'maxTokens'],
      [() => new TokenBudgetAdvisor({} as { maxTokens: number }), 'maxTokens'],
      [() => new TokenBudgetAdvisor({ maxTokens: 10, tokenizer: {} as Tokenizer }), 'tokenizer'],
      [() => new TokenBudgetAdvisor({ maxTokens: 10, order: Number.NaN }), 'order'],
    ];
    for (const [construct, option] of cases) {
      assert.throws(construct, (error: unknown) => error instanceof InvalidOptionError && error.option === option);
    }
  });
});
