/**
 * Steers reach the model, whatever decided them; stops throw their category's
 * class — over real HTTP against the scripted stand-in model, call and stream.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  BreakerOpenError,
  ChatClient,
  CONVERSATION_ID,
  CycleError,
  RagFixationError,
  ToolCallingAdvisor,
  type BreakerEventRecord,
  type GovernorToolContext,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type ChatCompletionMessage, type ScriptedModelServer as Server } from '../testing/index.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';

const QUERIES = ['refund policy for damaged items', 'refund policy damaged item', 'damaged items refund policy', 'the refund policy for damaged items'];

/** A search tool that reports each retrieval to the breaker, as a retriever would. */
function searchTool(breaker: AgentBreaker) {
  return tool({
    inputSchema: z.object({ query: z.string() }),
    execute: async ({ query }, { context }) => {
      // The tool context names the breaker session of the call (with or without a conversation id).
      const { sessionId } = context as GovernorToolContext;
      await breaker.observe(sessionId, { kind: 'retrieval', query, results: ['policy-7', 'faq-2'] });
      return `Found 2 documents for "${query}": policy-7, faq-2`;
    },
  });
}

/** The breaker's note in a recorded request: the last user message, when it is one. */
function steerNote(server: Server, index: number): string | undefined {
  const last: ChatCompletionMessage | undefined = server.requests[index]?.body.messages.at(-1);
  return last?.role === 'user' && String(last.content).startsWith('[AgentBreaker]') ? String(last.content) : undefined;
}

function escalations(breaker: AgentBreaker): BreakerEventRecord[] {
  const seen: BreakerEventRecord[] = [];
  breaker.on((e) => void (e.type === 'escalation' && seen.push(e)));
  return seen;
}

async function drain(spec: ReturnType<ChatClient['prompt']>, mode: Mode): Promise<void> {
  await runMode(spec, mode);
}

describe('a steer reaches the model on its next round', () => {
  for (const mode of MODES) {
    test(`${mode}: a RAG-fixation steer decided on an observed retrieval is in the next request`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          ...QUERIES.slice(0, 3).map((query) => ({ toolCalls: [{ name: 'search', arguments: { query } }] })),
          { text: 'Damaged items are refunded in full.' },
        ],
      }).start();
      const breaker = new AgentBreaker();
      const seen = escalations(breaker);
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new ToolCallingAdvisor(), breaker)
        .defaultTools({ search: searchTool(breaker) })
        .build();
      const { text } = await runMode(
        client.prompt('What is the refund policy?').advisors((a) => a.param(CONVERSATION_ID, `rag-${mode}`)),
        mode,
      );
      assert.equal(text, 'Damaged items are refunded in full.');
      const steer = seen.find((e) => e.category === 'rag_fixation');
      assert.equal(steer?.action, 'steer');
      assert.equal(steerNote(server, 2), undefined, 'no note before the steer was decided');
      assert.equal(steerNote(server, 3), `[AgentBreaker] ${steer!.message}`, 'the round after the third retrieval carries the steer');
      assert.deepEqual(breaker.takeSteers(`rag-${mode}`), [], 'delivered once: nothing left waiting');
    });

    test(`${mode}: a text-repetition steer decided on a round without tool calls reaches the next call of the session`, async () => {
      const reply = 'I am sorry, I cannot find that order in our system right now, please try again later.';
      await using server = await new ScriptedModelServer({
        script: [{ text: reply }, { text: reply }, { text: reply }, { text: 'Order 77 shipped yesterday.' }],
      }).start();
      const breaker = new AgentBreaker();
      const seen = escalations(breaker);
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).build();
      const session = `text-${mode}`;
      for (let i = 0; i < 4; i++)
        await drain(
          client.prompt(i === 0 ? 'Where is order 77?' : 'continue').advisors((a) => a.param(CONVERSATION_ID, session)),
          mode,
        );
      const steer = seen.find((e) => e.category === 'text_repetition');
      assert.equal(steer?.action, 'steer', 'the third identical reply is steered');
      assert.equal(steerNote(server, 2), undefined);
      assert.equal(steerNote(server, 3), `[AgentBreaker] ${steer!.message}`, 'the next request ends with the steer, after the user turn');
    });
    test(`${mode}: a delegation steer decided on a sub-agent's repeated answer is in the next request`, async () => {
      const tasks = [
        'Summarise the Q3 sales report',
        'Give me a short summary of the third quarter sales report',
        'What does the Q3 sales report say, in brief?',
      ];
      await using server = await new ScriptedModelServer({
        script: [...tasks.map((task) => ({ toolCalls: [{ name: 'researcher', arguments: { task } }] })), { text: 'Sales grew 4% in Q3.' }],
      }).start();
      const breaker = new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } });
      const seen = escalations(breaker);
      const researcher = tool({
        inputSchema: z.object({ task: z.string() }),
        execute: async () => 'Q3 sales grew four percent while costs stayed flat and the outlook is unchanged.',
      });
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ researcher }).build();
      const { text } = await runMode(
        client.prompt('Summarise Q3').advisors((a) => a.param(CONVERSATION_ID, `deleg-${mode}`)),
        mode,
      );
      assert.equal(text, 'Sales grew 4% in Q3.');
      const steer = seen.find((e) => e.category === 'delegation_loop');
      assert.equal(steer?.action, 'steer');
      // Decided when the third answer came back: the next round (the fourth request) carries it.
      const delivered = server.requests.map((r) => r.body.messages.some((m) => String(m.content).includes(steer!.message!)));
      assert.deepEqual(delivered, [false, false, false, true], JSON.stringify(server.requests[3]!.body.messages.slice(-2)));
      assert.equal(steerNote(server, 3), `[AgentBreaker] ${steer!.message}`);
    });
  }

  test('the AI SDK adapter and any integration take waiting steers with takeSteers()', async () => {
    const breaker = new AgentBreaker();
    for (const query of QUERIES.slice(0, 3)) await breaker.observe('direct', { kind: 'retrieval', query, results: ['a', 'b'] });
    const steers = breaker.takeSteers('direct');
    assert.equal(steers.length, 1);
    assert.match(steers[0]!, /search|retriev|quer/i);
    assert.deepEqual(breaker.takeSteers('direct'), []);
  });
});

describe('a stop throws its category class', () => {
  for (const mode of MODES) {
    test(`${mode}: a RAG-fixation stop decided on an observed retrieval surfaces as RagFixationError, later calls as BreakerOpenError`, async () => {
      let n = 0;
      await using server = await new ScriptedModelServer({
        script: () => ({ toolCalls: [{ name: 'search', arguments: { query: QUERIES[n++ % QUERIES.length]! } }] }),
      }).start();
      const breaker = new AgentBreaker();
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new ToolCallingAdvisor(), breaker)
        .defaultTools({ search: searchTool(breaker) })
        .build();
      const prompt = () => client.prompt('What is the refund policy?').advisors((a) => a.param(CONVERSATION_ID, `ragstop-${mode}`));
      const error = await runMode(prompt(), mode).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof RagFixationError, `got ${String(error)}`);
      assert.ok(!(error instanceof BreakerOpenError));
      assert.equal(error.evidence?.pattern !== undefined, true, 'the evidence of the trip comes with it');
      const requests = server.requests.length;
      await assert.rejects(runMode(prompt(), mode), BreakerOpenError);
      assert.equal(server.requests.length, requests, 'the open breaker refused before the model was called');
    });

    test(`${mode}: an A-B-A-B cycle stops as CycleError`, async () => {
      let n = 0;
      await using server = await new ScriptedModelServer({
        script: () => (n++ % 2 === 0 ? { toolCalls: [{ name: 'build', arguments: {} }] } : { toolCalls: [{ name: 'test', arguments: {} }] }),
      }).start();
      const breaker = new AgentBreaker();
      const build = tool({ inputSchema: z.object({}), execute: async () => 'build ok' });
      const check = tool({ inputSchema: z.object({}), execute: async () => '3 failing tests' });
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ build, test: check }).build();
      await assert.rejects(
        runMode(
          client.prompt('Fix the tests').advisors((a) => a.param(CONVERSATION_ID, `cycle-${mode}`)),
          mode,
        ),
        CycleError,
      );
    });
  }
});
