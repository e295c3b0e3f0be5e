/**
 * Rounds of client-side tool calls (the caller runs the tool and sends its
 * result back) whose requests overlap with other requests on the same
 * conversation: two tabs, two replicas on one store. However the rows land,
 * the conversation the memory reads is one a provider accepts (each call
 * followed by its result), the real result is never replaced by a made-up
 * one, and the conversation goes on. Every store reads the same.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolResultConflictError,
  ToolResultWithoutCallError,
  type ChatMemoryRepository,
} from '../index.ts';
import { SqliteChatMemoryRepository } from '../sqlite/index.ts';
import { SHARED_STORES, type SharedStore } from '../test-support/shared-chat-stores.ts';
import { assertOneResultPerCall } from './test-support/paused-round.ts';

const STORES: ReadonlyArray<readonly [string, () => Promise<SharedStore>]> = [
  ...SHARED_STORES,
  [
    'SQLite',
    async () => {
      const repository = new SqliteChatMemoryRepository({ path: ':memory:' });
      return { handle: () => repository, [Symbol.asyncDispose]: async () => repository.close() };
    },
  ],
];

/** Why a provider that checks message order as OpenAI does refuses `prompt`, if it does. */
function orderProblem(prompt: LanguageModelV4Prompt): string | undefined {
  let open = new Set<string>();
  for (const message of prompt) {
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        if (!open.delete(part.toolCallId)) return `tool message for ${part.toolCallId} does not answer the assistant message before it`;
      }
      continue;
    }
    if (open.size > 0) return `tool calls without results: ${[...open].join(', ')}`;
    open = new Set(message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : []);
  }
  return undefined;
}

const text = (message: LanguageModelV4Prompt[number] | undefined): string =>
  message === undefined || message.role === 'system' ? '' : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * A model that refuses a prompt out of order (with the provider's 400), asks
 * for the client-side tool `lookup` under call id `x` when the user says
 * `CALL:x`, answers results with `answered <ids>` and anything else with
 * `A(<text>)`. A request whose prompt `hold` picks waits for the promise it returns.
 */
function strictModel(hold: (prompt: LanguageModelV4Prompt) => Promise<void> | undefined = () => undefined) {
  const prompts: LanguageModelV4Prompt[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }: LanguageModelV4CallOptions) => {
      prompts.push(prompt);
      const problem = orderProblem(prompt);
      if (problem !== undefined) throw Object.assign(new Error(`400 invalid_request_error: ${problem}`), { statusCode: 400 });
      await hold(prompt);
      const last = prompt.at(-1);
      const usage = {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      };
      if (last?.role === 'tool') {
        const ids = last.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : []));
        return { content: [{ type: 'text', text: `answered ${ids.join('+')}` }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
      }
      const said = text(last);
      if (said.startsWith('CALL:')) {
        const call = { type: 'tool-call' as const, toolCallId: said.slice(5), toolName: 'lookup', input: '{"id":7}' };
        return { content: [call], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
      }
      return { content: [{ type: 'text', text: `A(${said})` }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
  return { model, prompts };
}

/** A replica of a client without a tool loop, its memory on its own handle of the store. */
function replica(model: MockLanguageModelV4, repository: ChatMemoryRepository, maxMessages = 20): ChatClient {
  return ChatClient.builder(model)
    .defaultOptions({ maxRetries: 0 })
    .defaultTools({ lookup: tool({ inputSchema: z.object({ id: z.number() }) }) })
    .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository, maxMessages }) }))
    .defaultAdvisorParams({ [CONVERSATION_ID]: 'c1' })
    .build();
}

const resultOf = (id: string): ModelMessage => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName: 'lookup', output: { type: 'text', value: `result-${id}` } }],
});

/** A message as one short line: `user: hi`, `assistant: -> a`, `tool: a=result-a`. */
function line(message: ModelMessage): string {
  if (typeof message.content === 'string') return `${message.role}: ${message.content}`;
  const pieces = message.content.map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'tool-call') return `-> ${part.toolCallId}`;
    if (part.type === 'tool-result') return `${part.toolCallId}=${part.output.type === 'text' ? part.output.value : part.output.type}`;
    return `[${part.type}]`;
  });
  return `${message.role}: ${pieces.join(' | ')}`;
}

function gate(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Whether a window of `messages` has a tool result whose call is not in the assistant message its group starts with. */
function splitsACall(messages: readonly ModelMessage[]): boolean {
  let calls = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      calls = new Set(message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])));
    } else if (message.role === 'tool') {
      if (message.content.some((part) => part.type === 'tool-result' && !calls.has(part.toolCallId))) return true;
    } else {
      calls = new Set();
    }
  }
  return false;
}

describe('client-side tool rounds interleaved with other requests', () => {
  for (const [store, open] of STORES) {
    test(`${store}: a second tab's round started while the first tab's results wait for the model does not leave the conversation stuck`, async () => {
      await using shared = await open();
      const held = gate();
      let waiting = false;
      const { model, prompts } = strictModel((prompt) => {
        const last = prompt.at(-1);
        if (last?.role !== 'tool' || !last.content.some((part) => part.type === 'tool-result' && part.toolCallId === 'a')) return undefined;
        waiting = true;
        return held.promise;
      });
      const tab1 = replica(model, shared.handle());
      const tab2 = replica(model, shared.handle());
      await tab1.prompt('CALL:a').call().chatResponse();

      const answeringA = tab1.prompt().messages(resultOf('a')).call().content();
      try {
        await until(() => waiting);
        const b = await tab2.prompt('CALL:b').call().chatResponse();
        assert.deepEqual(
          b.toolCalls?.map((call) => call.toolCallId),
          ['b'],
        );
      } finally {
        held.release();
      }
      assert.equal(await answeringA, 'answered a');

      assert.equal(await tab2.prompt().messages(resultOf('b')).call().content(), 'answered b');
      assert.equal(await tab1.prompt('next 1').call().content(), 'A(next 1)');
      assert.equal(await tab2.prompt('next 2').call().content(), 'A(next 2)');

      const memory = new MessageWindowChatMemory({ repository: shared.handle() });
      const stored = await memory.get('c1');
      assert.deepEqual(stored.map(line), [
        'user: CALL:a',
        'assistant: -> a',
        'tool: a=result-a',
        'assistant: answered a',
        'user: CALL:b',
        'assistant: -> b',
        'tool: b=result-b',
        'assistant: answered b',
        'user: next 1',
        'assistant: A(next 1)',
        'user: next 2',
        'assistant: A(next 2)',
      ]);
      assertOneResultPerCall(stored);
      for (const prompt of prompts) assert.equal(orderProblem(prompt), undefined, 'every request reached the model in order');
      for (let maxMessages = 1; maxMessages <= stored.length; maxMessages++) {
        const window = await new MessageWindowChatMemory({ repository: shared.handle(), maxMessages }).get('c1');
        assert.equal(window[0]?.role === 'tool' || splitsACall(window), false, `window of ${maxMessages}: ${window.map(line).join(' / ')}`);
      }
    });

    test(`${store}: results claimed after another replica's plain turn was stored keep their real result, and their answer follows it`, async () => {
      await using shared = await open();
      const { model } = strictModel();
      const held = gate();
      let claiming = false;
      const slow = shared.handle();
      // The replica's store is slow on the claim's write: another replica's turn lands between its read and its claim.
      const slowed: ChatMemoryRepository = {
        findConversationIds: () => slow.findConversationIds(),
        findByConversationId: (id) => slow.findByConversationId(id),
        deleteByConversationId: (id) => slow.deleteByConversationId(id),
        saveAll: (id, messages) => slow.saveAll(id, messages),
        async append(id, messages) {
          if (messages.some((message) => message.role === 'tool') && !claiming) {
            claiming = true;
            await held.promise;
          }
          return slow.append(id, messages);
        },
      };
      const first = replica(model, shared.handle());
      await first.prompt('CALL:k1').call().chatResponse();

      const answering = replica(model, slowed).prompt().messages(resultOf('k1')).call().content();
      try {
        await until(() => claiming);
        assert.equal(await replica(model, shared.handle()).prompt('plain').call().content(), 'A(plain)');
      } finally {
        held.release();
      }
      assert.equal(await answering, 'answered k1');

      const memory = new MessageWindowChatMemory({ repository: shared.handle() });
      const stored = await memory.get('c1');
      assert.deepEqual(stored.map(line), [
        'user: CALL:k1',
        'assistant: -> k1',
        'tool: k1=result-k1',
        'assistant: answered k1',
        'user: plain',
        'assistant: A(plain)',
      ]);
      assert.equal(await first.prompt('next').call().content(), 'A(next)', 'the conversation goes on');
    });

    test(`${store}: results sent after the conversation went on are refused with an error that says so`, async () => {
      await using shared = await open();
      const { model, prompts } = strictModel();
      const tab1 = replica(model, shared.handle());
      const tab2 = replica(model, shared.handle());
      await tab1.prompt('CALL:k1').call().chatResponse();
      await tab2.prompt('plain').call().chatResponse();
      const asked = prompts.length;

      await assert.rejects(tab1.prompt().messages(resultOf('k1')).call().content(), (error: unknown) => {
        assert.ok(ToolResultConflictError.isInstance(error), String(error));
        assert.deepEqual(error.toolCallIds, ['k1']);
        assert.equal(error.reason, 'moved-on');
        assert.match(error.message, /before the conversation went on/);
        assert.doesNotMatch(error.message, /sent by another request/);
        return true;
      });
      assert.equal(prompts.length, asked, 'the model was not called');
    });

    test(`${store}: results for a call the conversation no longer holds (cleared) are refused before the model is called`, async () => {
      await using shared = await open();
      const { model, prompts } = strictModel();
      const client = replica(model, shared.handle());
      await client.prompt('CALL:k1').call().chatResponse();
      await new MessageWindowChatMemory({ repository: shared.handle() }).clear('c1');
      const asked = prompts.length;

      await assert.rejects(client.prompt().messages(resultOf('k1')).call().content(), (error: unknown) => {
        assert.ok(ToolResultWithoutCallError.isInstance(error), String(error));
        assert.equal(error.code, 'GOVERNOR_TOOL_RESULT_WITHOUT_CALL');
        assert.deepEqual(error.toolCallIds, ['k1']);
        return true;
      });
      assert.equal(prompts.length, asked, 'the model was not called');
      assert.deepEqual(await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1'), [], 'nothing was stored');
    });
  }

  test('in-memory: the same interleaving stored by an older version (no turn length on the claim end) reads well-formed', async () => {
    const repository = new InMemoryChatMemoryRepository();
    const mark = (options: Record<string, string>): ModelMessage['providerOptions'] => ({ governor: options });
    await repository.append('c1', [
      { role: 'user', content: 'CALL:b' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'b', toolName: 'lookup', input: { id: 7 } }] },
      { role: 'tool', content: [], providerOptions: mark({ claimEnded: 'other' }) },
      { role: 'assistant', content: 'answered a' },
      { ...resultOf('b'), providerOptions: mark({ approvalClaim: 'c-b' }) },
      { role: 'tool', content: [], providerOptions: mark({ claimEnded: 'c-b' }) },
    ]);
    const { model } = strictModel();
    assert.equal(await replica(model, repository).prompt('next').call().content(), 'A(next)');
    assert.deepEqual((await new MessageWindowChatMemory({ repository, maxMessages: 2 }).get('c1')).map(line), ['user: next', 'assistant: A(next)']);
    assert.deepEqual((await new MessageWindowChatMemory({ repository, maxMessages: 5 }).get('c1')).map(line), [
      'assistant: -> b',
      'tool: b=result-b',
      'assistant: answered a',
      'user: next',
      'assistant: A(next)',
    ]);
  });
});
