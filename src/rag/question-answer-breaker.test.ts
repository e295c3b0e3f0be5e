import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  AgentBreakerError,
  AgentLoop,
  ChatClient,
  CONTINUATION_TURN,
  CONVERSATION_ID,
  InMemoryVectorStore,
  QuestionAnswerAdvisor,
  submitTool,
  ToolCallAdvisor,
  type BreakerEventRecord,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';

async function store(): Promise<InMemoryVectorStore> {
  const vectorStore = new InMemoryVectorStore();
  await vectorStore.add([
    { id: 'refunds', text: 'Refunds are issued within 14 days of a return.', metadata: {} },
    { id: 'shipping', text: 'Standard shipping takes 3 to 5 business days.', metadata: {} },
  ]);
  return vectorStore;
}

describe('QuestionAnswerAdvisor with the AgentBreaker, no user wiring', () => {
  test('retrieves once per call inside a tool loop, and the breaker hears that one query', async () => {
    const breaker = new AgentBreaker();
    const heard: string[] = [];
    const observe = breaker.observe.bind(breaker);
    breaker.observe = async (sessionId, event) => {
      if (event.kind === 'retrieval') heard.push(`${sessionId}: ${event.query} -> ${event.results?.join(',')}`);
      return observe(sessionId, event);
    };
    const lookup = tool({ inputSchema: z.object({ order: z.string() }), execute: async ({ order }) => `order ${order}: returned` });
    const model = mockModel([
      { toolCalls: [{ name: 'lookup', input: { order: '1' } }] },
      { toolCalls: [{ name: 'lookup', input: { order: '2' } }] },
      { text: 'Within 14 days.' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), breaker, new QuestionAnswerAdvisor({ vectorStore: await store(), searchRequest: { topK: 1 } }))
      .defaultTools({ lookup })
      .build();
    await client
      .prompt('When do refunds arrive?')
      .advisors((a) => a.param(CONVERSATION_ID, 's-1'))
      .call()
      .content();
    assert.equal(model.doGenerateCalls.length, 3);
    assert.deepEqual(heard, ['s-1: When do refunds arrive? -> refunds']);
  });

  test('an agent re-asking near-identical questions whose documents do not change trips RAG fixation, then stops', async () => {
    const breaker = new AgentBreaker();
    const events: BreakerEventRecord[] = [];
    breaker.on((e) => events.push(e));
    const questions = [
      'When do refunds arrive for my order?',
      'When do the refunds arrive for my order?',
      'when do refunds arrive for my order',
      'When will refunds arrive for my order?',
      'When do refunds arrive for my orders?',
      'When do refunds arrive, for my order?',
    ];
    const model = mockModel(questions.map(() => ({ text: 'Within 14 days.' })));
    const client = ChatClient.builder(model)
      .defaultAdvisors(breaker, new QuestionAnswerAdvisor({ vectorStore: await store(), searchRequest: { topK: 1 } }))
      .build();
    let stopped: unknown;
    for (const question of questions) {
      try {
        // Programmatic re-asks (as a harness does), not user turns: nothing new comes in between.
        await client
          .prompt()
          .messages({ role: 'user', content: question })
          .advisors((a) => a.param(CONVERSATION_ID, 'fixated').param(CONTINUATION_TURN, true))
          .call()
          .content();
      } catch (error) {
        stopped = error;
        break;
      }
    }
    const rag = events.filter((e) => e.type === 'escalation' && e.category === 'rag_fixation');
    assert.ok(rag.length >= 1, 'the breaker detected the fixation');
    assert.equal(rag[0]!.sessionId, 'fixated');
    assert.ok(stopped instanceof AgentBreakerError, 'the repeated fixation ends in a typed stop');
  });

  test('the same questions asked by a user, turn after turn, are not fixation: each user turn is new information', async () => {
    const breaker = new AgentBreaker();
    const events: BreakerEventRecord[] = [];
    breaker.on((e) => events.push(e));
    const questions = ['When do refunds arrive?', 'When do the refunds arrive?', 'when do refunds arrive', 'When do refunds arrive??'];
    const client = ChatClient.builder(mockModel(questions.map(() => ({ text: 'Within 14 days.' }))))
      .defaultAdvisors(breaker, new QuestionAnswerAdvisor({ vectorStore: await store(), searchRequest: { topK: 1 } }))
      .build();
    for (const question of questions) {
      await client
        .prompt(question)
        .advisors((a) => a.param(CONVERSATION_ID, 'patient-user'))
        .call()
        .content();
    }
    assert.deepEqual(
      events.filter((e) => e.type === 'escalation'),
      [],
    );
  });

  test("AgentLoop's continuation turns keep the task's documents: its reminder is never searched nor augmented", async () => {
    const breaker = new AgentBreaker();
    const heard: string[] = [];
    const observe = breaker.observe.bind(breaker);
    breaker.observe = async (sessionId, event) => {
      if (event.kind === 'retrieval') heard.push(`${event.query} -> ${event.results?.join(',')}`);
      return observe(sessionId, event);
    };
    const model = mockModel([{ text: 'Let me think.' }, { text: 'Still thinking.' }, { toolCalls: [{ name: 'submit', input: { summary: '14 days.' } }] }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor(), breaker, new QuestionAnswerAdvisor({ vectorStore: await store(), searchRequest: { topK: 1 } }))
      .defaultTools({ submit: submitTool() })
      .build();
    const result = await new AgentLoop({ client, maxInvocations: 5, finishTool: 'submit' }).run('When do refunds arrive?');
    assert.equal(result.status, 'completed');
    assert.equal(model.doGenerateCalls.length, 3);
    for (const [i, call] of model.doGenerateCalls.entries()) {
      const users = call.prompt.filter((m) => m.role === 'user').map((m) => (m.content as Array<{ text?: string }>).map((p) => p.text ?? '').join(''));
      assert.equal(users.length, i + 1);
      assert.match(
        users[0]!,
        /^When do refunds arrive\?\n[\s\S]*Refunds are issued within 14 days of a return\./,
        `call ${i + 1}: the task keeps its documents`,
      );
      for (const reminder of users.slice(1)) assert.doesNotMatch(reminder, /Reference material/, `call ${i + 1}: a reminder is not augmented`);
    }
    assert.deepEqual(heard, ['When do refunds arrive? -> refunds'], 'one search, for the task');
  });

  test('a continuation turn reuses the documents of the question it goes on with, for the last 256 named conversations', async () => {
    const inner = await store();
    const searched: string[] = [];
    const vectorStore = {
      add: inner.add.bind(inner),
      delete: inner.delete.bind(inner),
      similaritySearch: (request: { readonly query: string; readonly topK?: number }) => {
        searched.push(request.query);
        return inner.similaritySearch(request);
      },
    };
    const client = ChatClient.builder(mockModel(Array.from({ length: 400 }, () => ({ text: 'ok' }))))
      .defaultAdvisors(new QuestionAnswerAdvisor({ vectorStore, searchRequest: { topK: 1 } }))
      .build();
    const ask = (conversation: string | undefined, continuation: boolean, ...texts: string[]) =>
      client
        .prompt()
        .messages(...texts.map((content) => ({ role: 'user' as const, content })))
        .advisors((a) => (conversation === undefined ? a : a.param(CONVERSATION_ID, conversation)).param(CONTINUATION_TURN, continuation))
        .call()
        .content();
    await ask('c-0', false, 'When do refunds arrive?');
    await ask('c-0', true, 'When do refunds arrive?');
    await ask('c-0', true, 'When do refunds arrive?', 'Go on.');
    assert.deepEqual(searched, ['When do refunds arrive?'], 'a retry and a reminder search nothing');
    // Without a conversation id a call is a session of its own: nothing to go on with.
    await ask(undefined, false, 'How long is shipping?');
    await ask(undefined, true, 'How long is shipping?');
    assert.equal(searched.length, 3);
    for (let i = 1; i <= 256; i++) await ask(`c-${i}`, false, `question ${i}`);
    searched.length = 0;
    await ask('c-256', true, 'question 256', 'Go on.');
    await ask('c-0', true, 'When do refunds arrive?', 'Go on.');
    assert.deepEqual(searched, ['Go on.'], 'the least recent of 257 conversations is forgotten: its reminder is searched as a question');
  });

  test('follow-up questions that each retrieve another document are not fixation, whatever the documents are called', async () => {
    const texts = [
      'Refund policy for damaged items: send a photo and we refund in full.',
      'Refund policy for digital goods: refunds only before the download starts.',
      'Refund policy for gift cards: gift cards are never refunded.',
      'Refund policy for sale items: sale items are refunded as store credit.',
    ];
    const questions = ['refund policy damaged items?', 'refund policy digital goods?', 'refund policy gift cards?', 'refund policy sale items?'];
    for (const idOf of [() => randomUUID(), (i: number) => `handbook-4.${i + 1}`]) {
      const vectorStore = new InMemoryVectorStore();
      await vectorStore.add(texts.map((text, i) => ({ id: idOf(i), text })));
      const breaker = new AgentBreaker();
      const events: BreakerEventRecord[] = [];
      breaker.on((e) => events.push(e));
      const client = ChatClient.builder(mockModel(questions.map(() => ({ text: 'ok' }))))
        .defaultAdvisors(breaker, new QuestionAnswerAdvisor({ vectorStore, searchRequest: { topK: 1 } }))
        .build();
      for (const question of questions) {
        await client
          .prompt()
          .messages({ role: 'user', content: question })
          .advisors((a) => a.param(CONVERSATION_ID, 'research').param(CONTINUATION_TURN, true))
          .call()
          .content();
      }
      assert.deepEqual(
        events.filter((e) => e.type === 'escalation'),
        [],
      );
    }
  });

  test('the same question sent again as a continuation turn (a retry) is the same search again: a loop of retries is stopped', async () => {
    const breaker = new AgentBreaker();
    const client = ChatClient.builder(mockModel(Array.from({ length: 6 }, (_, i) => ({ text: `answer ${i}` }))))
      .defaultAdvisors(breaker, new QuestionAnswerAdvisor({ vectorStore: await store(), searchRequest: { topK: 1 } }))
      .build();
    let stopped = 0;
    for (let i = 0; i < 6 && stopped === 0; i++) {
      try {
        await client
          .prompt('When do refunds arrive?')
          .advisors((a) => a.param(CONVERSATION_ID, 'retry-loop').param(CONTINUATION_TURN, i > 0))
          .call()
          .content();
      } catch (error) {
        assert.ok(AgentBreakerError.isInstance(error), String(error));
        stopped = i + 1;
      }
    }
    assert.equal(stopped, 4, 'steered on the third retrieval, stopped on the fourth');
  });
});
