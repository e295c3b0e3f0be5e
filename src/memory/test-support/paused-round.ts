import assert from 'node:assert/strict';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  type Advisor,
  type ChatClientRequestSpec,
  type ChatMemoryRepository,
  type ChatResponse,
} from '../../index.ts';
import { SqliteChatMemoryRepository } from '../../sqlite/index.ts';
import { mockModel, type MockTurn } from '../../test-support/mock-model.ts';
import type { ChatMemory } from '../chat-memory.ts';
import type { Mode } from '../../test-support/run-modes.ts';
import { promptLines } from './prompt-lines.ts';

/*
 * What the tests of a paused round of tool calls share, for both memory
 * advisors: how a caller goes on, the stores, the tools and the checks.
 */

export const inConversation = (spec: ChatClientRequestSpec): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, 'c1'));

/** The two ways to go on: the docs' way with memory (approval answers or tool results only), and `AgentLoop.resume`'s. */
export const RESUMES = {
  'only the answer': (_paused: ChatResponse, answer: ModelMessage): ModelMessage[] => [answer],
  'the round again with the answer': (paused: ChatResponse, answer: ModelMessage): ModelMessage[] => [...paused.messages, answer],
} as const;
export type Resume = keyof typeof RESUMES;

/** The shared ways to go on, and a client that keeps the whole conversation and sends it all again. */
export const FORMS = {
  ...RESUMES,
  'the conversation again with the answer': (paused: ChatResponse, answer: ModelMessage, before: readonly ModelMessage[]): ModelMessage[] => [
    ...before,
    ...paused.messages,
    answer,
  ],
} as const;
export type Form = keyof typeof FORMS;

/** Each memory advisor, made for a memory. */
export const MEMORY_ADVISORS = {
  MessageChatMemoryAdvisor: (memory: ChatMemory): Advisor => new MessageChatMemoryAdvisor({ memory }),
  PromptChatMemoryAdvisor: (memory: ChatMemory): Advisor => new PromptChatMemoryAdvisor({ memory }),
} as const;
export type MemoryAdvisorName = keyof typeof MEMORY_ADVISORS;

/** A repository for one test, closed when the test's `using` scope ends. */
type OpenRepository = () => { readonly repository: ChatMemoryRepository } & Disposable;

export const REPOSITORIES: ReadonlyArray<readonly [string, OpenRepository]> = [
  ['in-memory', () => ({ repository: new InMemoryChatMemoryRepository(), [Symbol.dispose]: () => {} })],
  [
    'SQLite',
    () => {
      const repository = new SqliteChatMemoryRepository({ path: ':memory:' });
      return { repository, [Symbol.dispose]: () => repository.close() };
    },
  ],
];

/** A tool that runs at once, counting its runs. */
export function lookupTool(runs: string[]) {
  return tool({
    description: 'look an order up',
    inputSchema: z.object({ id: z.number() }),
    execute: async ({ id }) => {
      runs.push(`lookup ${id}`);
      return `order ${id}: 10 EUR`;
    },
  });
}

/** A tool that needs the caller's approval, counting its runs; `gate` holds each run until it resolves. */
export function refundTool(runs: string[], gate?: Promise<void>) {
  return tool({
    description: 'refund',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      runs.push(`refund ${amount}`);
      await gate;
      return `refunded ${amount}`;
    },
  });
}

/** A loop-ending tool (`endsLoop`) that runs at once, counting its runs: the loop ends with its output. */
export function finishTool(runs: string[]) {
  const finish = tool({
    description: 'end the task',
    inputSchema: z.object({ summary: z.string() }),
    execute: async ({ summary }) => {
      runs.push(`finish ${summary}`);
      return summary;
    },
  });
  return Object.assign(finish, { endsLoop: true as const });
}

/** `model`, except that its `round`-th request (from 1) fails, as a provider's 5xx after its retries. */
export function failingOnce(model: MockLanguageModelV4, round: number): MockLanguageModelV4 {
  let requests = 0;
  const failing = (): void => {
    if (++requests === round) throw new Error('upstream overloaded');
  };
  return new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      failing();
      return model.doGenerate(options);
    },
    doStream: async (options: LanguageModelV4CallOptions) => {
      failing();
      return model.doStream(options);
    },
  });
}

/** Two tools without `execute`: the caller runs them and sends their results back. */
export function clientSideToolSet() {
  return {
    lookup: tool({ description: 'look an order up', inputSchema: z.object({ id: z.number() }) }),
    locate: tool({ description: 'where the browser is', inputSchema: z.object({}) }),
  };
}

/** The model's turn that asks for the two tools of {@link clientSideToolSet}. */
export const CLIENT_SIDE_CALLS: MockTurn = {
  toolCalls: [
    { name: 'lookup', input: { id: 7 }, id: 'l1' },
    { name: 'locate', input: {}, id: 'loc-1' },
  ],
};

/** The results of the two client-side tools of {@link clientSideToolSet}, as the caller sends them back. */
export const CLIENT_SIDE_RESULTS: ModelMessage = {
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: 'l1', toolName: 'lookup', output: { type: 'text', value: 'order 7: 10 EUR' } },
    { type: 'tool-result', toolCallId: 'loc-1', toolName: 'locate', output: { type: 'text', value: 'Paris' } },
  ],
};

/**
 * A client without a tool loop whose model, after a first reply, asks for
 * two client-side tools (the caller runs them and sends the results back),
 * then answers "Done." and the `after` replies; its 3rd request fails once.
 * The memory (the advisor's) is on SQLite, closed when the test's `using`
 * scope ends.
 */
export function clientSideTools(advisor: (memory: ChatMemory) => Advisor, after: readonly MockTurn[] = []) {
  const model = failingOnce(mockModel([{ text: 'Hello.' }, CLIENT_SIDE_CALLS, { text: 'Done.' }, ...after]), 3);
  const repository = new SqliteChatMemoryRepository({ path: ':memory:' });
  const memory = new MessageWindowChatMemory({ repository });
  const client = ChatClient.builder(model).defaultOptions({ maxRetries: 0 }).defaultTools(clientSideToolSet()).defaultAdvisors(advisor(memory)).build();
  return { model, memory, client, [Symbol.dispose]: () => repository.close() };
}

/** The model's requests, one array of prompt lines each, in the mode's order. */
export const sentPrompts = (model: MockLanguageModelV4, mode: Mode): string[][] =>
  (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).map((c) => promptLines(c.prompt));

/** Every tool call of `messages` has exactly one result (in any tool message after it). */
export function assertOneResultPerCall(messages: readonly ModelMessage[]): void {
  const calls = messages.flatMap((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? m.content.filter((p) => p.type === 'tool-call') : []));
  const results = messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
  assert.deepEqual(results.map((r) => r.toolCallId).sort(), calls.map((c) => c.toolCallId).sort());
}
