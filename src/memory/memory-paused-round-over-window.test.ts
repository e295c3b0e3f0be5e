/**
 * A round that paused for the caller (a client-side tool's result, an
 * approval) and alone costs more than the memory's window: the window keeps
 * it, so the caller's answer is taken, stored and claimed as when it fits.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { ChatClient, MessageWindowChatMemory, TokenWindowChatMemory, ToolCallingAdvisor, ToolResultConflictError, toolApprovalResponse } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_RESULTS,
  clientSideToolSet,
  inConversation,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  refundTool,
  RESUMES,
  type Resume,
} from './test-support/paused-round.ts';

/** A long plan before the calls: about 1,300 estimated tokens, over the window's 1,000. */
const PLAN = 'Here is my plan. '.repeat(300);

const roles = (messages: readonly ModelMessage[]) => messages.map((m) => m.role);

describe('a paused round larger than the memory window', () => {
  for (const advisorName of Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[]) {
    for (const resume of Object.keys(RESUMES) as Resume[]) {
      test(`${advisorName}, ${resume}: client-side results reach the model and are stored with the call`, async () => {
        const memory = new TokenWindowChatMemory({ maxTokens: 1_000 });
        const model = mockModel([
          {
            text: PLAN,
            toolCalls: [
              { name: 'lookup', input: { id: 7 }, id: 'l1' },
              { name: 'locate', input: {}, id: 'loc-1' },
            ],
          },
          { text: 'Order 7 is in Paris.' },
        ]);
        const client = ChatClient.builder(model)
          .defaultTools(clientSideToolSet())
          .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisorName](memory))
          .build();
        const paused = await inConversation(client.prompt('Where is order 7?')).call().chatResponse();
        assert.equal(paused.finishReason, 'tool-calls');
        const answer = await inConversation(client.prompt().messages(...RESUMES[resume](paused, CLIENT_SIDE_RESULTS)))
          .call()
          .content();
        assert.equal(answer, 'Order 7 is in Paris.');
        // Read whole, through a window that holds it all.
        const stored = await new MessageWindowChatMemory({ repository: memory.repository }).get('c1');
        assertOneResultPerCall(stored);
        assert.deepEqual(roles(stored), ['user', 'assistant', 'tool', 'assistant']);
        assert.ok(
          (stored[2]!.content as Array<{ type: string; output?: { type: string } }>).every((p) => p.type === 'tool-result' && p.output?.type === 'text'),
          'the results the caller sent, not a "not answered" closing',
        );
      });
    }
  }

  test('the same results sent twice at once: one answer, the other a ToolResultConflictError', async () => {
    const memory = new TokenWindowChatMemory({ maxTokens: 1_000 });
    const model = mockModel([
      { text: PLAN, toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
      { text: 'Order 7: 10 EUR.' },
      { text: 'Order 7: 10 EUR, again.' },
    ]);
    const client = ChatClient.builder(model)
      .defaultTools(clientSideToolSet())
      .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS.MessageChatMemoryAdvisor(memory))
      .build();
    const paused = await inConversation(client.prompt('Where is order 7?')).call().chatResponse();
    const result: ModelMessage = { role: 'tool', content: [CLIENT_SIDE_RESULTS.content[0] as Extract<ModelMessage, { role: 'tool' }>['content'][number]] };
    const settled = await Promise.allSettled(
      [1, 2].map(() =>
        inConversation(client.prompt().messages(...paused.messages, result))
          .call()
          .content(),
      ),
    );
    assert.deepEqual(settled.map((s) => s.status).sort(), ['fulfilled', 'rejected']);
    assert.ok(ToolResultConflictError.isInstance(settled.find((s) => s.status === 'rejected')!.reason));
    assert.equal(model.doGenerateCalls.length, 2, 'the model answers once');
  });

  test('an approval answered alone runs the tool and stores the round', async () => {
    const runs: string[] = [];
    const memory = new TokenWindowChatMemory({ maxTokens: 1_000 });
    const model = mockModel([{ text: PLAN, toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
    const client = ChatClient.builder(model)
      .defaultTools({ refund: refundTool(runs) })
      .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS.MessageChatMemoryAdvisor(memory))
      .build();
    const paused = await inConversation(client.prompt('Refund order 7')).call().chatResponse();
    const answer = toolApprovalResponse((paused.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved: true })));
    assert.equal(await inConversation(client.prompt().messages(answer)).call().content(), 'Refunded.');
    assert.deepEqual(runs, ['refund 10']);
    const stored = await new MessageWindowChatMemory({ repository: memory.repository }).get('c1');
    assertOneResultPerCall(stored);
    assert.deepEqual(roles(stored.filter((m) => m.role !== 'tool')), ['user', 'assistant', 'assistant']);
  });

  test('a round that does not wait for anyone still leaves a window it does not fit', async () => {
    const memory = new TokenWindowChatMemory({ maxTokens: 1_000 });
    await memory.add('c2', [
      { role: 'user', content: 'Plan it' },
      { role: 'assistant', content: PLAN },
    ]);
    assert.deepEqual(await memory.get('c2'), []);
  });
});
