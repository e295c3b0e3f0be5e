/**
 * The CONVERSATION_ID advisor param as a chat memory advisor reads it: left
 * out, the advisor's default conversation; set, the conversation it names,
 * and set to nothing (`req.user?.id` of an anonymous user), an error rather
 * than the conversation every such request would share.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Advisor } from '../chat/advisor.ts';
import { CONVERSATION_ID } from '../chat/advisor-context.ts';
import { ChatClient } from '../chat/chat-client.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import type { ChatMemory } from './chat-memory.ts';
import { InvalidConversationIdError } from './chat-memory-errors.ts';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { MessageChatMemoryAdvisor } from './message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from './message-window-chat-memory.ts';
import { PromptChatMemoryAdvisor } from './prompt-chat-memory-advisor.ts';

const KINDS: Record<string, (memory: ChatMemory) => Advisor> = {
  MessageChatMemoryAdvisor: (memory) => new MessageChatMemoryAdvisor({ memory, conversationId: 'shared' }),
  PromptChatMemoryAdvisor: (memory) => new PromptChatMemoryAdvisor({ memory, conversationId: 'shared' }),
};

describe('a CONVERSATION_ID param set to nothing', () => {
  for (const mode of MODES) {
    for (const [kind, advisor] of Object.entries(KINDS)) {
      for (const id of [undefined, null]) {
        test(`${mode}, ${kind}: a param set to ${id} is refused before the model is called, not put into the default conversation`, async () => {
          const repository = new InMemoryChatMemoryRepository();
          const model = mockModel([{ text: 'never' }]);
          const client = ChatClient.builder(model)
            .defaultAdvisors(advisor(new MessageWindowChatMemory({ repository })))
            .build();

          await assert.rejects(
            runMode(
              client.prompt('hi').advisors((a) => a.param(CONVERSATION_ID, id)),
              mode,
            ),
            (error: unknown) => {
              assert.ok(InvalidConversationIdError.isInstance(error), String(error));
              assert.match(error.message, new RegExp(`the CONVERSATION_ID advisor param is set to ${id}`));
              assert.match(error.message, /leave the param out for the default conversation \("shared"\)/);
              return true;
            },
          );
          assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 0);
          assert.deepEqual(await repository.findConversationIds(), []);
        });
      }

      test(`${mode}, ${kind}: set to nothing in params() or defaultAdvisorParams() too`, async () => {
        const model = mockModel([{ text: 'never' }]);
        const memory = new MessageWindowChatMemory();
        const byDefault = ChatClient.builder(model)
          .defaultAdvisors(advisor(memory))
          .defaultAdvisorParams({ [CONVERSATION_ID]: undefined })
          .build();
        await assert.rejects(runMode(byDefault.prompt('hi'), mode), InvalidConversationIdError);
        const perRequest = ChatClient.builder(model).defaultAdvisors(advisor(memory)).build();
        await assert.rejects(
          runMode(
            perRequest.prompt('hi').advisors((a) => a.params({ [CONVERSATION_ID]: null })),
            mode,
          ),
          InvalidConversationIdError,
        );
        assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 0);
      });

      test(`${mode}, ${kind}: a param left out still means the default conversation`, async () => {
        const memory = new MessageWindowChatMemory();
        const client = ChatClient.builder(mockModel([{ text: 'ok' }]))
          .defaultAdvisors(advisor(memory))
          .build();
        await runMode(client.prompt('hi'), mode);
        assert.deepEqual(
          (await memory.get('shared')).map((m) => m.role),
          ['user', 'assistant'],
        );
      });
    }
  }
});
