/**
 * Two chat memory advisors in one call: a client default and the same kind
 * added on the request (the Spring AI idiom), on one memory. The call has
 * one conversation, sent once and stored once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import type { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import type { Advisor } from '../chat/advisor.ts';
import { CONVERSATION_ID } from '../chat/advisor-context.ts';
import { beforeAfterAdvisor } from '../chat/before-after-advisor.ts';
import { ChatClient, type ChatClientRequestSpec } from '../chat/chat-client.ts';
import { ToolCallingAdvisor } from '../advisors/tool-call-advisor.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import type { ChatMemory } from './chat-memory.ts';
import { MessageChatMemoryAdvisor } from './message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from './message-window-chat-memory.ts';
import { PromptChatMemoryAdvisor } from './prompt-chat-memory-advisor.ts';
import { promptLines } from './test-support/prompt-lines.ts';

const inConversation = (spec: ChatClientRequestSpec): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, 'd'));

/** The stored conversation as `role:text` lines (`role:[part types]` for parts without text). */
function lines(messages: readonly ModelMessage[]): string[] {
  return messages.map((m) => {
    if (typeof m.content === 'string') return `${m.role}:${m.content}`;
    const parts: ReadonlyArray<{ type: string; text?: string }> = m.content;
    return `${m.role}:${parts.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('|')}`;
  });
}

function lastPrompt(model: MockLanguageModelV4, mode: Mode): string[] {
  const calls = mode === 'call' ? model.doGenerateCalls : model.doStreamCalls;
  return promptLines(calls.at(-1)!.prompt);
}

const KINDS: Record<string, (memory: ChatMemory) => Advisor> = {
  MessageChatMemoryAdvisor: (memory) => new MessageChatMemoryAdvisor({ memory }),
  PromptChatMemoryAdvisor: (memory) => new PromptChatMemoryAdvisor({ memory }),
};

describe('two chat memory advisors on one memory in one call', () => {
  for (const mode of MODES) {
    for (const [outerKind, outer] of Object.entries(KINDS)) {
      for (const [innerKind, inner] of Object.entries(KINDS)) {
        test(`${mode}: a default ${outerKind} and a ${innerKind} added on the request send the history once and store the turn once`, async () => {
          const memory = new MessageWindowChatMemory();
          const model = mockModel([{ text: 'ok' }, { text: 'ok again' }]);
          const client = ChatClient.builder(model).defaultAdvisors(outer(memory)).build();

          await runMode(inConversation(client.prompt('first')), mode);
          const second = await runMode(inConversation(client.prompt('second').advisors(inner(memory))), mode);

          assert.equal(second.text, 'ok again');
          assert.deepEqual(lines(await memory.get('d')), ['user:first', 'assistant:ok', 'user:second', 'assistant:ok again']);
          // The history once, in the outer advisor's form.
          const sent = lastPrompt(model, mode).join('\n');
          assert.equal(sent.split('first').length - 1, 1, `the history is sent once:\n${sent}`);
        });
      }
    }

    test(`${mode}: a tool loop under both stores each round once`, async () => {
      const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `15°C in ${city}` });
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'weather', input: { city: 'Paris' } }] }, { text: 'Paris 15' }]))
        .defaultTools({ weather })
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
        .build();

      await runMode(inConversation(client.prompt('Weather?').advisors(new MessageChatMemoryAdvisor({ memory }))), mode);

      assert.deepEqual(lines(await memory.get('d')), ['user:Weather?', 'assistant:[tool-call]', 'tool:[tool-result]', 'assistant:Paris 15']);
    });

    test(`${mode}: two memory advisors on two memories each keep the conversation`, async () => {
      const first = new MessageWindowChatMemory();
      const second = new MessageWindowChatMemory();
      const client = ChatClient.builder(mockModel([{ text: 'ok' }]))
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: first }))
        .build();

      await runMode(inConversation(client.prompt('hi').advisors(new MessageChatMemoryAdvisor({ memory: second }))), mode);

      assert.deepEqual(lines(await first.get('d')), ['user:hi', 'assistant:ok']);
      assert.deepEqual(lines(await second.get('d')), ['user:hi', 'assistant:ok']);
    });

    test(`${mode}: a memory advisor run again by a recursive advisor outside it, after its first run failed, stores the retried turn`, async () => {
      const memory = new MessageWindowChatMemory();
      let attempts = 0;
      const failOnce = beforeAfterAdvisor({
        name: 'failOnce',
        before: (request) => {
          attempts += 1;
          if (attempts === 1) throw new Error('first attempt fails');
          return request;
        },
      });
      const retry: Advisor = {
        name: 'retry',
        order: -3_000_000,
        async adviseCall(request, chain) {
          try {
            return await chain.copy(retry).nextCall(request);
          } catch {
            return chain.copy(retry).nextCall(request);
          }
        },
        async *adviseStream(request, chain) {
          try {
            yield* chain.copy(retry).nextStream(request);
          } catch {
            yield* chain.copy(retry).nextStream(request);
          }
        },
      };
      const client = ChatClient.builder(mockModel([{ text: 'ok' }]))
        .defaultAdvisors(retry, new MessageChatMemoryAdvisor({ memory }), failOnce)
        .build();

      await runMode(inConversation(client.prompt('hi')), mode);

      assert.equal(attempts, 2);
      assert.deepEqual(lines(await memory.get('d')), ['user:hi', 'assistant:ok']);
    });
  }
});
