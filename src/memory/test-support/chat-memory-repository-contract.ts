import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { ToolCallingAdvisor } from '../../advisors/tool-call-advisor.ts';
import { toolApprovalResponse } from '../../advisors/tool-approval.ts';
import { CONVERSATION_ID } from '../../chat/advisor-context.ts';
import { ChatClient } from '../../chat/chat-client.ts';
import { mockModel } from '../../test-support/mock-model.ts';
import { InvalidConversationIdError, InvalidMessageError, ToolApprovalConflictError, ToolResultConflictError } from '../chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../chat-memory-repository.ts';
import { MessageChatMemoryAdvisor } from '../message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from '../message-window-chat-memory.ts';
import { sampleConversation, userText } from './sample-messages.ts';

/** What a repository's test file provides to {@link chatMemoryRepositoryContract}. */
export interface RepositoryHarness {
  /**
   * Another handle on the store this suite run uses: a new connection (pool,
   * client, database handle) where the backend has them, so that concurrent
   * writers really are separate clients.
   */
  open(): Promise<ChatMemoryRepository>;
  /** Closes every handle opened and removes everything the run wrote. */
  cleanup(): Promise<void>;
}

const WRITERS = 50;
const HANDLES = 5;
const BATCHES_PER_WRITER = 2;
const MESSAGES_PER_BATCH = 3;
/** Clients answering one approval at once, each on its own handle. */
const REPLICAS = 4;

/**
 * The behaviour every `ChatMemoryRepository` must show, registered as tests.
 * Each test works on its own conversation ids, so tests never see each other's
 * data even though they share one store.
 */
export function chatMemoryRepositoryContract(name: string, setup: () => Promise<RepositoryHarness>): void {
  describe(`${name} (ChatMemoryRepository contract)`, () => {
    let harness: RepositoryHarness;
    let repository: ChatMemoryRepository;

    before(async () => {
      harness = await setup();
      repository = await harness.open();
    });
    after(async () => {
      await harness?.cleanup();
    });

    test('round-trips every message kind and part, read back through another handle', async () => {
      const id = conversation('round-trip');
      await repository.append(id, sampleConversation());

      assert.deepStrictEqual(await repository.findByConversationId(id), sampleConversation());
      const other = await harness.open();
      assert.deepStrictEqual(await other.findByConversationId(id), sampleConversation());
    });

    test('keeps message order across appends and keeps conversations apart', async () => {
      const first = conversation('order-a');
      const second = conversation('order-b');
      await repository.append(first, [userText('1'), userText('2')]);
      await repository.append(second, [userText('x')]);
      await repository.append(first, [userText('3')]);
      await repository.append(first, []);

      assert.deepStrictEqual(await repository.findByConversationId(first), [userText('1'), userText('2'), userText('3')]);
      assert.deepStrictEqual(await repository.findByConversationId(second), [userText('x')]);
      const ids = await repository.findConversationIds();
      assert.ok(ids.includes(first) && ids.includes(second), `both conversations listed in ${ids.join(', ')}`);
      assert.deepStrictEqual(ids, [...ids].sort(), 'ids are sorted');
    });

    test('reads an unknown conversation as empty', async () => {
      assert.deepStrictEqual(await repository.findByConversationId(conversation('unknown')), []);
    });

    test('saveAll replaces a conversation, and saving no messages removes it', async () => {
      const id = conversation('replace');
      await repository.append(id, [userText('old 1'), userText('old 2')]);

      await repository.saveAll(id, [userText('new')]);
      assert.deepStrictEqual(await repository.findByConversationId(id), [userText('new')]);

      await repository.append(id, [userText('after')]);
      assert.deepStrictEqual(await repository.findByConversationId(id), [userText('new'), userText('after')]);

      await repository.saveAll(id, []);
      assert.deepStrictEqual(await repository.findByConversationId(id), []);
      assert.ok(!(await repository.findConversationIds()).includes(id), 'an emptied conversation is not listed');
    });

    test('deletes one conversation and leaves the others', async () => {
      const gone = conversation('delete-a');
      const kept = conversation('delete-b');
      await repository.append(gone, [userText('a')]);
      await repository.append(kept, [userText('b')]);

      await repository.deleteByConversationId(gone);
      await repository.deleteByConversationId(conversation('never-existed'));

      assert.deepStrictEqual(await repository.findByConversationId(gone), []);
      assert.deepStrictEqual(await repository.findByConversationId(kept), [userText('b')]);
      const ids = await repository.findConversationIds();
      assert.ok(!ids.includes(gone) && ids.includes(kept));
    });

    test('rejects a blank conversation id in every method and writes nothing', async () => {
      const before = await repository.findConversationIds();
      for (const id of ['', '   ']) {
        await assert.rejects(repository.append(id, [userText('x')]), InvalidConversationIdError);
        await assert.rejects(repository.saveAll(id, [userText('x')]), InvalidConversationIdError);
        await assert.rejects(repository.findByConversationId(id), InvalidConversationIdError);
        await assert.rejects(repository.deleteByConversationId(id), InvalidConversationIdError);
      }
      assert.deepStrictEqual(await repository.findConversationIds(), before, 'nothing was stored');
    });

    test('rejects ids a store could not keep apart or index (lone surrogate, NUL, over 1024 UTF-8 bytes) in every method; keeps the rest', async () => {
      const base = conversation('bad-id');
      const before = await repository.findConversationIds();
      // 'c\uD800' and 'c\uD801' would both become 'c\uFFFD' in SQL text: two callers, one conversation.
      for (const id of [`${base}\uD800`, `${base}\uDC00x`, `${base}\u0000x`, base + 'x'.repeat(1025 - base.length), base + 'é'.repeat(513)]) {
        await assert.rejects(repository.append(id, [userText('x')]), InvalidConversationIdError);
        await assert.rejects(repository.saveAll(id, [userText('x')]), InvalidConversationIdError);
        await assert.rejects(repository.findByConversationId(id), InvalidConversationIdError);
        await assert.rejects(repository.deleteByConversationId(id), InvalidConversationIdError);
      }
      assert.deepStrictEqual(await repository.findConversationIds(), before, 'nothing was stored');

      // Up to the limit, astral characters included, ids are kept as they are.
      const room = 1024 - base.length;
      const longest = base + 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2);
      const astral = `${base}-🦊`;
      assert.equal(Buffer.byteLength(longest, 'utf8'), 1024);
      await repository.append(longest, [userText('long')]);
      await repository.append(astral, [userText('fox')]);

      assert.deepStrictEqual(await repository.findByConversationId(longest), [userText('long')]);
      assert.deepStrictEqual(await repository.findByConversationId(astral), [userText('fox')]);
      const ids = await repository.findConversationIds();
      assert.ok(ids.includes(longest) && ids.includes(astral), 'listed exactly as written');
    });

    test('rejects a batch with an unstorable message and writes none of it', async () => {
      const id = conversation('invalid-batch');
      const unstorable = {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: { big: 10n } }],
      } as unknown as ModelMessage;

      await assert.rejects(repository.append(id, [userText('valid'), unstorable]), (error: unknown) => {
        assert.ok(error instanceof InvalidMessageError);
        assert.equal(error.index, 1);
        assert.equal(error.path, 'content[0].input.big');
        return true;
      });
      assert.deepStrictEqual(await repository.findByConversationId(id), []);

      await repository.append(id, [userText('kept')]);
      await assert.rejects(repository.saveAll(id, [userText('replacement'), unstorable]), InvalidMessageError);
      await assert.rejects(repository.append(id, [{ role: 'robot', content: 'hi' } as unknown as ModelMessage]), /unknown role "robot"/);
      assert.deepStrictEqual(await repository.findByConversationId(id), [userText('kept')]);
    });

    test(`${WRITERS} concurrent writers on one conversation lose nothing and keep each batch contiguous`, async () => {
      const id = conversation('concurrent');
      const handles = [repository];
      for (let i = 1; i < HANDLES; i++) handles.push(await harness.open());

      await Promise.all(
        Array.from({ length: WRITERS }, async (_, writer) => {
          const handle = handles[writer % handles.length] ?? repository;
          for (let batch = 0; batch < BATCHES_PER_WRITER; batch++) {
            await handle.append(
              id,
              Array.from({ length: MESSAGES_PER_BATCH }, (_, k) => userText(`w${writer} b${batch} m${k}`)),
            );
          }
        }),
      );

      const stored = (await repository.findByConversationId(id)).map((message) => String(message.content));
      assert.equal(stored.length, WRITERS * BATCHES_PER_WRITER * MESSAGES_PER_BATCH, 'no message lost');
      assert.equal(new Set(stored).size, stored.length, 'no message duplicated');
      for (let writer = 0; writer < WRITERS; writer++) {
        let previousBatchEnd = -1;
        for (let batch = 0; batch < BATCHES_PER_WRITER; batch++) {
          const start = stored.indexOf(`w${writer} b${batch} m0`);
          const slice = stored.slice(start, start + MESSAGES_PER_BATCH);
          assert.deepStrictEqual(
            slice,
            Array.from({ length: MESSAGES_PER_BATCH }, (_, k) => `w${writer} b${batch} m${k}`),
            `batch ${batch} of writer ${writer} is contiguous and in order`,
          );
          assert.ok(start > previousBatchEnd, `writer ${writer}'s batches are in the order written`);
          previousBatchEnd = start + MESSAGES_PER_BATCH - 1;
        }
      }
    });

    test(`one tool approval answered by ${REPLICAS} clients at once runs its call once; the others are refused`, async () => {
      const id = conversation('approval');
      const runs: number[] = [];
      const refund = tool({
        inputSchema: z.object({ amount: z.number() }),
        needsApproval: true,
        execute: async ({ amount }) => {
          runs.push(amount);
          // Long enough for every other answer to arrive while it runs.
          await new Promise((resolve) => setTimeout(resolve, 50));
          return `refunded ${amount}`;
        },
      });
      // Each replica has its own handle (connection) on the store, as separate processes would.
      const replica = (handle: ChatMemoryRepository, model: ReturnType<typeof mockModel>) =>
        ChatClient.builder(model)
          .defaultTools({ refund })
          .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository: handle }) }))
          .defaultAdvisorParams({ [CONVERSATION_ID]: id })
          .build();
      const pending = await replica(repository, mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }]))
        .prompt('Refund 10')
        .call()
        .chatResponse();
      const answer = toolApprovalResponse([{ approvalId: pending.pendingApprovals![0]!.approvalId, approved: true }]);
      const replicas = [];
      for (let i = 0; i < REPLICAS; i++) replicas.push(replica(await harness.open(), mockModel([{ text: 'Refunded.' }, { text: 'Bye.' }])));

      const outcomes = await Promise.allSettled(replicas.map((client) => client.prompt().messages(answer).call().content()));

      assert.deepStrictEqual(runs, [10], 'the approved call ran once');
      const winners = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
      assert.equal(winners.length, 1, JSON.stringify(outcomes.map((o) => o.status)));
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') assert.ok(ToolApprovalConflictError.isInstance(outcome.reason), String(outcome.reason));
      }
      const history = await new MessageWindowChatMemory({ repository }).get(id);
      const results = history.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
      assert.equal(results.length, 1, 'one result is stored');
      const answers = history.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-approval-response') : []));
      assert.equal(answers.length, 1, "the conversation holds the winner's answer only: the lost claims are not left in it");
      assert.deepEqual(
        history.map((m) => m.role),
        ['user', 'assistant', 'tool', 'tool', 'assistant'],
      );
      assert.equal(await replicas[winners[0]!]!.prompt('Thanks').call().content(), 'Bye.', 'the conversation goes on');
    });

    test(`one client-side tool result sent by ${REPLICAS} clients at once is answered once; the others are refused`, async () => {
      const id = conversation('tool-result');
      // No execute: the caller runs the tool and sends its result back.
      const weather = tool({ inputSchema: z.object({ city: z.string() }) });
      const replica = (handle: ChatMemoryRepository, model: ReturnType<typeof mockModel>) =>
        ChatClient.builder(model)
          .defaultTools({ weather })
          .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository: handle }) }))
          .defaultAdvisorParams({ [CONVERSATION_ID]: id })
          .build();
      await replica(repository, mockModel([{ toolCalls: [{ name: 'weather', input: { city: 'Paris' }, id: 'w1' }] }]))
        .prompt('Weather in Paris?')
        .call()
        .content();
      const result: ModelMessage = {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'w1', toolName: 'weather', output: { type: 'text', value: '15C' } }],
      };
      const models = [];
      const replicas = [];
      for (let i = 0; i < REPLICAS; i++) {
        models.push(mockModel([{ text: 'It is 15C.' }]));
        replicas.push(replica(await harness.open(), models[i]!));
      }

      const outcomes = await Promise.allSettled(replicas.map((client) => client.prompt().messages(result).call().content()));

      assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1, JSON.stringify(outcomes.map((o) => o.status)));
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') assert.ok(ToolResultConflictError.isInstance(outcome.reason), String(outcome.reason));
      }
      assert.equal(
        models.reduce((sum, model) => sum + model.doGenerateCalls.length, 0),
        1,
        'the model answered the result once',
      );
      const history = await new MessageWindowChatMemory({ repository }).get(id);
      assert.deepEqual(
        history.map((m) => m.role),
        ['user', 'assistant', 'tool', 'assistant'],
        'the result and its answer once',
      );
    });
  });
}

function conversation(label: string): string {
  return `contract-${label}-${randomUUID()}`;
}
