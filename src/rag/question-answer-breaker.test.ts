import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  AgentBreakerError,
  ChatClient,
  CONTINUATION_TURN,
  CONVERSATION_ID,
  InMemoryVectorStore,
  QuestionAnswerAdvisor,
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
});
