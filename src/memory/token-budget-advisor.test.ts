import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { ToolCallAdvisor, ToolCallingAdvisor } from '../advisors/tool-call-advisor.ts';
import type { GovernorToolContext } from '../chat/tool-context.ts';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { CONVERSATION_ID } from '../chat/advisor-context.ts';
import { ChatClient } from '../chat/chat-client.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { ScriptedModelServer, scriptedModel, type ChatCompletionMessage } from '../testing/index.ts';
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

  test('system messages among the history are kept where they are, and counted', async () => {
    const persona: ModelMessage = { role: 'system', content: 'SYS-A' };
    const plan: ModelMessage = { role: 'system', content: 'SYS-B' };
    // Costs: SYS-A 5, SYS-B 5, now 3: 13 fixed; 4 left for history, which fits "bbbb".
    assert.deepStrictEqual(await promptSent(17, [persona, userText('aaaa'), plan, assistantText('bbbb')]), [
      'system: SYS-A',
      'system: SYS-B',
      'assistant: bbbb',
      'user: now',
    ]);
    assert.deepStrictEqual(await promptSent(13, [persona, userText('aaaa'), plan, assistantText('bbbb')]), ['system: SYS-A', 'system: SYS-B', 'user: now']);
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

  for (const mode of MODES) {
    test(`${mode}: a breaker's steer does not push the user's question out of the current turn`, async () => {
      const question = 'Customer #5531 received a damaged blender. What does the refund policy say about damaged items?';
      const queries = ['refund policy for damaged items', 'refund policy damaged item', 'damaged items refund policy'];
      await using server = await new ScriptedModelServer({
        script: [...queries.map((query) => ({ toolCalls: [{ name: 'search', arguments: { query } }] })), { text: 'Damaged items are refunded in full.' }],
      }).start();
      const breaker = new AgentBreaker();
      const search = tool({
        inputSchema: z.object({ query: z.string() }),
        execute: async ({ query }, { context }) => {
          const { sessionId } = context as GovernorToolContext;
          await breaker.observe(sessionId, { kind: 'retrieval', query, results: ['policy-7', 'faq-2'] });
          return `Found 2 documents for "${query}": policy-7 (refunds for damaged goods), faq-2 (returns and exchanges)`;
        },
      });
      const client = ChatClient.builder(scriptedModel(server))
        .defaultSystem('You are a support agent. Answer from the documents the search tool finds; cite them by id.')
        .defaultAdvisors(new ToolCallingAdvisor(), breaker, new TokenBudgetAdvisor({ maxTokens: 200 }))
        .defaultTools({ search })
        .build();
      const { text } = await runMode(
        client
          .prompt()
          .messages(...history)
          .user(question)
          .advisors((a) => a.param(CONVERSATION_ID, `budget-steer-${mode}`)),
        mode,
      );

      assert.equal(text, 'Damaged items are refunded in full.');
      const rounds = server.requests.map((r) => r.body.messages);
      const isNote = (m: ChatCompletionMessage | undefined) => m?.role === 'user' && String(m.content).startsWith('[AgentBreaker]');
      assert.ok(isNote(rounds[3]?.at(-1)), 'the last round carries the rag_fixation steer, at its end');
      for (const [i, messages] of rounds.entries()) {
        assert.ok(
          messages.some((m) => m.role === 'user' && m.content === question),
          `round ${i} keeps the question: ${JSON.stringify(messages.map((m) => m.role))}`,
        );
        const first = messages.find((m) => m.role !== 'system');
        assert.equal(first?.role, 'user', `round ${i} starts with a user message, not an orphan tool call or result`);
      }
      assert.equal(rounds[0]?.[1]?.content, 'aaaa', 'the first round is under the ceiling: the earlier history goes along');
      // The last round is over the ceiling: the earlier history goes, the question, the three searches and the steer stay.
      assert.deepStrictEqual(
        rounds[3]?.map((m) => m.role),
        ['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'user'],
      );
      assert.equal(rounds[3]?.[1]?.content, question);
    });
  }

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
