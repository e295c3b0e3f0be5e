/**
 * Chat memory and the side effects of tools: approvals answered with only the
 * answer, calls that fail after a tool ran, answers given twice, and turns the
 * store refuses after a call succeeded.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  ChatClient,
  ChatMemoryStoreError,
  ChatMemoryTurnNotStoredError,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  toolApprovalResponse,
  type ChatClientRequestSpec,
  type ChatMemory,
  type ChatResponse,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import { promptLines } from './test-support/prompt-lines.ts';

const inConversation = (spec: ChatClientRequestSpec, id = 'c1'): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, id));

const approveAll = (response: ChatResponse): ModelMessage =>
  toolApprovalResponse((response.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved: true })));

function toolResults(messages: readonly ModelMessage[]): Array<{ toolCallId: string; output: unknown }> {
  return messages.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [p] : [])) : []));
}

/** A refund tool that needs approval, counting its runs; `gate` holds each run until it resolves. */
function refundTool(runs: number[], gate?: Promise<void>) {
  return tool({
    description: 'refund',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      runs.push(amount);
      await gate;
      return `refunded ${amount}`;
    },
  });
}

/** A scripted model whose turns may be errors: the model round fails there (as a provider 5xx after its retries). */
function flakyModel(turns: ReadonlyArray<MockTurn | Error>): MockLanguageModelV4 {
  const inner = mockModel(turns.filter((t): t is MockTurn => !(t instanceof Error)));
  let round = 0;
  const next = (): Error | undefined => {
    const turn = turns[round++];
    return turn instanceof Error ? turn : undefined;
  };
  return new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      const failure = next();
      if (failure) throw failure;
      return inner.doGenerate(options);
    },
    doStream: async (options: LanguageModelV4CallOptions) => {
      const failure = next();
      if (failure) throw failure;
      return inner.doStream(options);
    },
  });
}

/** The prompts the model was sent, in the mode's order. */
const prompts = (model: MockLanguageModelV4, mode: Mode) => (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).map((c) => c.prompt);

describe('approvals with memory when the provider reuses tool-call ids (call_0 in every turn)', () => {
  for (const mode of MODES) {
    test(`${mode}: the second turn's approved call runs, once, and the conversation stays well-formed`, async () => {
      const runs: number[] = [];
      const model = mockModel([
        { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'call_0' }] },
        { text: 'Refunded 10.' },
        { toolCalls: [{ name: 'refund', input: { amount: 20 }, id: 'call_0' }] },
        { text: 'Refunded 20.' },
        { text: 'You are welcome.' },
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultTools({ refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();

      const first = await runMode(inConversation(client.prompt('Refund 10')), mode);
      assert.equal((await runMode(inConversation(client.prompt().messages(approveAll(first.response))), mode)).text, 'Refunded 10.');
      const second = await runMode(inConversation(client.prompt('Refund 20')), mode);
      assert.equal(second.response.pendingApprovals?.length, 1);
      assert.equal((await runMode(inConversation(client.prompt().messages(approveAll(second.response))), mode)).text, 'Refunded 20.');
      assert.deepEqual(runs, [10, 20]);
      assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'You are welcome.');

      const last = promptLines(prompts(model, mode).at(-1)!);
      assert.deepEqual(last, [
        'user: Refund 10',
        'assistant: -> refund',
        'tool refund: refunded 10',
        'assistant: Refunded 10.',
        'user: Refund 20',
        'assistant: -> refund',
        'tool refund: refunded 20',
        'assistant: Refunded 20.',
        'user: Thanks',
      ]);
    });
  }
});

describe('PromptChatMemoryAdvisor continues a turn that waits for the caller', () => {
  for (const mode of MODES) {
    test(`${mode}: an approval answered with only the answer runs the tool, and the model sees the call before its result`, async () => {
      const runs: number[] = [];
      const model = mockModel([{ text: 'Hello.' }, { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultTools({ refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new PromptChatMemoryAdvisor({ memory }))
        .build();

      await runMode(inConversation(client.prompt('Hi')), mode);
      const pending = await runMode(inConversation(client.prompt('Refund 10')), mode);
      const answered = await runMode(inConversation(client.prompt().messages(approveAll(pending.response))), mode);

      assert.equal(answered.text, 'Refunded.');
      assert.deepEqual(runs, [10]);
      const [system, ...rest] = promptLines(prompts(model, mode).at(-1)!);
      assert.match(system ?? '', /user: Hi\nassistant: Hello\./, 'earlier turns stay text in the system prompt');
      assert.doesNotMatch(system ?? '', /Refund 10/, 'the open turn is not in the text as well');
      assert.deepEqual(rest, ['user: Refund 10', 'assistant: -> refund', 'tool refund: refunded 10']);
      assert.deepEqual(
        toolResults(await memory.get('c1')).map((r) => r.toolCallId),
        ['r1'],
      );
    });

    test(`${mode}: a client-side tool's result goes to the model after the call it answers`, async () => {
      const locate = tool({ description: 'where the browser is', inputSchema: z.object({}) });
      const model = mockModel([{ toolCalls: [{ name: 'locate', input: {}, id: 'loc-1' }] }, { text: 'You are in Paris.' }]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model).defaultTools({ locate }).defaultAdvisors(new PromptChatMemoryAdvisor({ memory })).build();

      await runMode(inConversation(client.prompt('Where am I?')), mode);
      const result: ModelMessage = {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'loc-1', toolName: 'locate', output: { type: 'json', value: { city: 'Paris' } } }],
      };
      assert.equal((await runMode(inConversation(client.prompt().messages(result)), mode)).text, 'You are in Paris.');
      assert.deepEqual(promptLines(prompts(model, mode)[1]!), [
        'user: Where am I?',
        'assistant: -> locate',
        'tool locate: {"type":"json","value":{"city":"Paris"}}',
      ]);
    });
  }
});

describe('a call that fails after a tool ran keeps the record of what ran', () => {
  for (const mode of MODES) {
    test(`${mode}: an approved tool runs once: the model round after it fails, the retry goes on from its result`, async () => {
      const runs: number[] = [];
      const model = flakyModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, new Error('upstream overloaded'), { text: 'Refunded.' }]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultOptions({ maxRetries: 0 })
        .defaultTools({ refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();

      const pending = await runMode(inConversation(client.prompt('Refund order 7')), mode);
      const answer = approveAll(pending.response);
      await assert.rejects(runMode(inConversation(client.prompt().messages(answer)), mode), /upstream overloaded/);
      assert.deepEqual(runs, [10]);
      const stored = await memory.get('c1');
      assert.deepEqual(
        toolResults(stored).map((r) => r.output),
        [{ type: 'text', value: 'refunded 10' }],
        'the result is stored although the call failed',
      );
      assert.equal(stored.at(-1)?.role, 'tool', 'nothing after the result: the model never answered');

      // The caller retries the same answer: the tool does not run again.
      assert.equal((await runMode(inConversation(client.prompt().messages(answer)), mode)).text, 'Refunded.');
      assert.deepEqual(runs, [10]);
      assert.deepEqual(promptLines(prompts(model, mode).at(-1)!), ['user: Refund order 7', 'assistant: -> refund', 'tool refund: refunded 10']);
      const final = await memory.get('c1');
      assert.equal(toolResults(final).length, 1);
      assert.deepEqual(final.at(-1), { role: 'assistant', content: [{ type: 'text', text: 'Refunded.' }] });
    });

    test(`${mode}: a client-side tool's result is stored when the model round after it fails; resent, it reaches the model once`, async () => {
      const locate = tool({ description: 'where the browser is', inputSchema: z.object({}) });
      const model = flakyModel([{ toolCalls: [{ name: 'locate', input: {}, id: 'loc-1' }] }, new Error('upstream overloaded'), { text: 'You are in Paris.' }]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultOptions({ maxRetries: 0 })
        .defaultTools({ locate })
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }))
        .build();
      const result: ModelMessage = {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'loc-1', toolName: 'locate', output: { type: 'text', value: 'Paris' } }],
      };

      await runMode(inConversation(client.prompt('Where am I?')), mode);
      await assert.rejects(runMode(inConversation(client.prompt().messages(result).user('Quick please')), mode), /upstream overloaded/);
      assert.deepEqual(
        (await memory.get('c1')).map((m) => m.role),
        ['user', 'assistant', 'tool'],
        'the result is stored; the user message after it, which got no answer, is not',
      );

      assert.equal((await runMode(inConversation(client.prompt().messages(result).user('Quick please')), mode)).text, 'You are in Paris.');
      assert.deepEqual(promptLines(prompts(model, mode).at(-1)!), ['user: Where am I?', 'assistant: -> locate', 'tool locate: Paris', 'user: Quick please']);
      assert.deepEqual(
        (await memory.get('c1')).map((m) => m.role),
        ['user', 'assistant', 'tool', 'user', 'assistant'],
      );
    });

    test(`${mode}: a failed call where nothing ran writes nothing (a denial), and the answer can be sent again`, async () => {
      const runs: number[] = [];
      const model = flakyModel([
        { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
        new Error('upstream overloaded'),
        { text: 'No refund, then.' },
      ]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultOptions({ maxRetries: 0 })
        .defaultTools({ refund: refundTool(runs) })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .build();

      const pending = await runMode(inConversation(client.prompt('Refund order 7')), mode);
      const before = await memory.get('c1');
      const deny = toolApprovalResponse([{ approvalId: pending.response.pendingApprovals![0]!.approvalId, approved: false, reason: 'too much' }]);
      await assert.rejects(runMode(inConversation(client.prompt().messages(deny)), mode), /upstream overloaded/);
      assert.deepStrictEqual(await memory.get('c1'), before);
      assert.equal((await runMode(inConversation(client.prompt().messages(deny)), mode)).text, 'No refund, then.');
      assert.deepEqual(runs, []);
    });
  }

  test('PromptChatMemoryAdvisor: the retry after a failed round sends the stored call and result as messages', async () => {
    const runs: number[] = [];
    const model = flakyModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, new Error('upstream overloaded'), { text: 'Refunded.' }]);
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(model)
      .defaultOptions({ maxRetries: 0 })
      .defaultTools({ refund: refundTool(runs) })
      .defaultAdvisors(new ToolCallingAdvisor(), new PromptChatMemoryAdvisor({ memory }))
      .build();

    const pending = await inConversation(client.prompt('Refund order 7')).call().chatResponse();
    const answer = approveAll(pending);
    await assert.rejects(inConversation(client.prompt().messages(answer)).call().content(), /upstream overloaded/);
    assert.equal(await inConversation(client.prompt().messages(answer)).call().content(), 'Refunded.');
    assert.deepEqual(runs, [10]);
    assert.deepEqual(promptLines(model.doGenerateCalls.at(-1)!.prompt), ['user: Refund order 7', 'assistant: -> refund', 'tool refund: refunded 10']);
  });

  test('stream: a stream abandoned after a tool ran keeps the tool result', async () => {
    let sent = 0;
    const send = tool({
      description: 'send an e-mail',
      inputSchema: z.object({ to: z.string() }),
      execute: async () => {
        sent++;
        return 'sent';
      },
    });
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'send', input: { to: 'bob' }, id: 'm1' }] }, { text: 'Sent the e-mail to Bob.' }]))
      .defaultTools({ send })
      .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .build();
    for await (const event of inConversation(client.prompt('Mail Bob')).stream().chatResponse()) {
      if (event.type === 'text-delta') break;
    }
    assert.equal(sent, 1);
    assert.deepEqual(
      (await memory.get('c1')).map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
  });
});

describe('an approval answered twice at once runs once', () => {
  for (const mode of MODES) {
    test(`${mode}: two replicas on one memory answer the same approval: one runs it, the other gets ToolApprovalConflictError`, async () => {
      const runs: number[] = [];
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const repository = new InMemoryChatMemoryRepository();
      const replica = (turns: MockTurn[]) => {
        const model = mockModel(turns);
        const client = ChatClient.builder(model)
          .defaultTools({ refund: refundTool(runs, gate) })
          .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository }) }))
          .build();
        return { model, client };
      };
      const a = replica([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded (A).' }, { text: 'Bye.' }]);
      const b = replica([{ text: 'Refunded (B).' }]);

      const pending = await runMode(inConversation(a.client.prompt('Refund 10')), mode);
      const answer = approveAll(pending.response);
      const both = Promise.allSettled([
        runMode(inConversation(a.client.prompt().messages(answer)), mode),
        runMode(inConversation(b.client.prompt().messages(answer)), mode),
      ]);
      setTimeout(release, 50);
      const [first, second] = await both;

      assert.deepEqual(runs, [10], 'the refund ran once');
      const outcomes = [first, second].map((r) => (r.status === 'fulfilled' ? r.value.text : r.reason));
      const done = outcomes.filter((o) => typeof o === 'string');
      const refused = outcomes.filter((o) => ToolApprovalConflictError.isInstance(o));
      assert.equal(done.length, 1, String(outcomes));
      assert.equal(refused.length, 1, String(outcomes));
      assert.deepEqual((refused[0] as ToolApprovalConflictError).approvalIds, [pending.response.pendingApprovals![0]!.approvalId]);

      // The conversation goes on, with one result and no claim mark sent to the model. (A's script
      // answers with its next line: 'Bye.' when A ran the refund, else the line the refusal left unused.)
      const next = await runMode(inConversation(a.client.prompt('Thanks')), mode);
      assert.equal(next.text, done[0] === 'Refunded (A).' ? 'Bye.' : 'Refunded (A).');
      const sent = (mode === 'call' ? [...a.model.doGenerateCalls, ...b.model.doGenerateCalls] : [...a.model.doStreamCalls, ...b.model.doStreamCalls]).map(
        (c) => c.prompt,
      );
      const last = sent.at(-1)!;
      assert.equal(toolResults(last as ModelMessage[]).length, 1, promptLines(last).join('\n'));
      assert.ok(
        sent.every((prompt) => prompt.every((m) => m.providerOptions?.['governor'] === undefined)),
        'the claim mark stays in the store',
      );
    });
  }

  test('an answer that arrives while another request runs the approved call is refused before the model is called', async () => {
    const runs: number[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(model)
      .defaultTools({ refund: refundTool(runs, gate) })
      .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .build();

    const pending = await inConversation(client.prompt('Refund 10')).call().chatResponse();
    const answer = approveAll(pending);
    const running = inConversation(client.prompt().messages(answer)).call().content();
    while (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // Should the second answer run the tool too, it must not wait for the gate for ever.
    const fallback = setTimeout(release, 2000);
    await assert.rejects(inConversation(client.prompt().messages(answer)).call().content(), ToolApprovalConflictError);
    clearTimeout(fallback);
    assert.equal(model.doGenerateCalls.length, 1, 'the second answer made no model call');
    release();
    assert.equal(await running, 'Refunded.');
    assert.deepEqual(runs, [10]);
  });
});

/** A repository whose appends fail once `failing` is set, as a Redis at its memory limit does. */
class FailingWrites extends InMemoryChatMemoryRepository {
  failing = false;

  override async append(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    if (this.failing) throw new ChatMemoryStoreError('Test store', 'append to a conversation', new Error('OOM command not allowed'));
    return super.append(conversationId, messages);
  }
}

describe('a call that succeeded but whose turn could not be stored', () => {
  for (const mode of MODES) {
    test(`${mode}: fails with ChatMemoryTurnNotStoredError, a ChatMemoryStoreError that carries the response`, async () => {
      const repository = new FailingWrites();
      let sent = 0;
      const send = tool({
        description: 'send an e-mail',
        inputSchema: z.object({ to: z.string() }),
        execute: async () => {
          sent++;
          repository.failing = true;
          return 'sent';
        },
      });
      const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'send', input: { to: 'bob' }, id: 'm1' }] }, { text: 'Sent the e-mail to Bob.' }]))
        .defaultTools({ send })
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository }) }))
        .build();

      await assert.rejects(runMode(inConversation(client.prompt('Mail Bob')), mode), (error: unknown) => {
        assert.ok(ChatMemoryTurnNotStoredError.isInstance(error), String(error));
        assert.ok(ChatMemoryStoreError.isInstance(error), 'handled wherever store errors are');
        assert.equal(error.store, 'Test store');
        assert.match(error.message, /Test store failed to store the turn of a call that succeeded .*OOM command not allowed/);
        assert.equal(error.response.text, 'Sent the e-mail to Bob.');
        assert.deepEqual(
          error.response.messages.map((m) => m.role),
          ['assistant', 'tool', 'assistant'],
        );
        assert.ok(error.response.totalUsage.inputTokens !== undefined, 'the usage to account for is there');
        assert.ok(ChatMemoryStoreError.isInstance(error.cause), 'the repository error is the cause');
        return true;
      });
      assert.equal(sent, 1);
    });
  }

  test('a memory of its own that fails is named, and its error is the cause', async () => {
    const failure = new Error('disk full');
    class BrokenMemory implements ChatMemory {
      async add(): Promise<void> {
        throw failure;
      }
      async get(): Promise<ModelMessage[]> {
        return [];
      }
      async clear(): Promise<void> {}
    }
    const client = ChatClient.builder(mockModel([{ text: 'Hi.' }]))
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new BrokenMemory() }))
      .build();
    await assert.rejects(client.prompt('Hello').call().content(), (error: unknown) => {
      assert.ok(ChatMemoryTurnNotStoredError.isInstance(error));
      assert.equal(error.store, 'BrokenMemory');
      assert.equal(error.cause, failure);
      assert.equal(error.response.text, 'Hi.');
      return true;
    });
  });
});
