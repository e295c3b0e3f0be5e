/**
 * A sub-agent run inside a ChatClient tool call of the lead's session (a
 * ChatClient, or an AI SDK agent on a door of its own), or a ChatClient run
 * inside an AI SDK door's tool call, with the same AgentBreaker: each steer
 * the breaker queues reaches the agent it was decided for. Real ChatClients,
 * the real AI SDK and the openai-compatible provider over real HTTP against
 * the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, breakerForAiSdk, ChatClient, CONVERSATION_ID, ToolCallingAdvisor, type BreakerEventRecord, type GovernorToolContext } from '../index.ts';
import { escalations } from '../e2e/recorded-run.ts';
import { type RecordedRequest, ScriptedModelServer, type ScriptedTurn, scriptedModel } from '../testing/index.ts';
import { runMode, type Mode } from '../test-support/run-modes.ts';
import { assertDelegatedOutageCaught, delegatedOutageServer } from '../test-support/delegated-outage.ts';
import { assertResearcherSteerStayed, DELEGATE, hasSteer, isLead, RESEARCHER_PROMPTS, researcherSteerCase } from '../test-support/sub-agent-steers.ts';

/** The lead's tool that runs the researcher on the task the lead wrote. */

const taskSchema = z.object({ task: z.string() });
const invoiceSchema = z.object({ id: z.string() });

function recordingBreaker(subAgentTools: readonly string[] = []) {
  const breaker = new AgentBreaker({ telemetry: false, delegation: { subAgentTools } });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events };
}

/** Runs the researcher on `task` in session `sessionId`; its one tool is `get_invoice`. */
type Researcher = (task: string, sessionId: string) => Promise<string>;

function chatResearcher(server: ScriptedModelServer, breaker: AgentBreaker, mode: Mode): Researcher {
  const getInvoice = tool({ inputSchema: invoiceSchema, execute: async ({ id }) => `${id}: line items of invoice inv-9` });
  const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ get_invoice: getInvoice }).build();
  return async (task, sessionId) => {
    const { text } = await runMode(
      client.prompt(task).advisors((a) => a.param(CONVERSATION_ID, sessionId)),
      mode,
    );
    return text;
  };
}

/** An AI SDK agent on a door of its own for the session, as a sub-agent handed the session id builds. */
function aiSdkResearcher(server: ScriptedModelServer, breaker: AgentBreaker): Researcher {
  return async (task, sessionId) => {
    const door = breakerForAiSdk(breaker, { sessionId });
    const tools = door.tools({ get_invoice: tool({ inputSchema: invoiceSchema, execute: async ({ id }) => `${id}: line items of invoice inv-9` }) });
    return (await generateText({ model: door.model(scriptedModel(server)), tools, stopWhen: isStepCount(10), prompt: task })).text;
  };
}

/** A ChatClient lead whose `research` tool hands its session on to the researcher; its calls of one round run in order. */
async function runChatLead(server: ScriptedModelServer, breaker: AgentBreaker, sessionId: string, research: Researcher, mode: Mode, extraTools = {}) {
  const delegate = tool({
    inputSchema: taskSchema,
    execute: async ({ task }, { context }) => research(task, (context as GovernorToolContext).sessionId),
  });
  const lead = ChatClient.builder(scriptedModel(server))
    .defaultAdvisors(new ToolCallingAdvisor({ parallel: false, maxToolCalls: 12 }), breaker)
    .defaultTools({ ...extraTools, [DELEGATE]: delegate })
    .build();
  return runMode(
    lead.prompt('What does invoice inv-9 come to?').advisors((a) => a.param(CONVERSATION_ID, sessionId)),
    mode,
  );
}

/** An AI SDK lead on its door for the session, whose `research` tool runs the researcher in that session. */
async function runAiSdkLead(server: ScriptedModelServer, breaker: AgentBreaker, sessionId: string, research: Researcher) {
  const governed = breakerForAiSdk(breaker, { sessionId });
  const tools = governed.tools({ [DELEGATE]: tool({ inputSchema: taskSchema, execute: async ({ task }) => research(task, sessionId) }) });
  return generateText({
    model: governed.model(scriptedModel(server)),
    tools,
    stopWhen: [isStepCount(12), governed.stopWhen],
    prompt: 'What does invoice inv-9 come to?',
  });
}

describe("a ChatClient lead's steer is the lead's, not its sub-agent's", () => {
  const QUERIES = ['refund policy for damaged items', 'refund policy damaged item', 'damaged items refund policy'];
  const VARIANTS = [
    { researcher: 'a ChatClient', mode: 'call' },
    { researcher: 'a ChatClient', mode: 'stream' },
    { researcher: 'an AI SDK agent on a door of its own', mode: 'call' },
  ] as const;

  /** The lead searches three times alike (the 3rd search is steered), delegating in the round of the 3rd, after it. */
  const searchThenDelegate = (request: RecordedRequest): ScriptedTurn => {
    if (!isLead(request)) return { text: 'Refunds for damaged items are in policy-7.' };
    const round = request.body.messages.filter((m) => m.role === 'assistant').length;
    if (round === 3) return { text: 'Damaged items are refunded in full.' };
    const search = { name: 'search', arguments: { query: QUERIES[round]! } };
    return { toolCalls: round === 2 ? [search, { name: DELEGATE, arguments: { task: 'Check the refund policy.' } }] : [search] };
  };

  for (const variant of VARIANTS) {
    test(`${variant.mode}, the researcher ${variant.researcher}: a RAG-fixation steer decided on a search in the round that delegates reaches the lead's next call`, async () => {
      await using server = await new ScriptedModelServer({
        script: searchThenDelegate,
      }).start();
      const sessionId = `chat-lead-rag-${variant.researcher}-${variant.mode}`;
      const { breaker, events } = recordingBreaker();
      const search = tool({
        inputSchema: z.object({ query: z.string() }),
        // A retriever that reports each search to the breaker.
        execute: async ({ query }, { context }) => {
          await breaker.observe((context as GovernorToolContext).sessionId, { kind: 'retrieval', query, results: ['policy-7', 'faq-2'] });
          return `Found 2 documents for "${query}": policy-7, faq-2`;
        },
      });
      const research = variant.researcher === 'a ChatClient' ? chatResearcher(server, breaker, variant.mode) : aiSdkResearcher(server, breaker);

      const { text } = await runChatLead(server, breaker, sessionId, research, variant.mode, { search });

      assert.equal(text, 'Damaged items are refunded in full.');
      assert.deepEqual(escalations(events), ['rag_fixation:steer']);
      const leads = server.requests.filter(isLead);
      assert.deepEqual(leads.map(hasSteer), [false, false, false, true], "the lead's 4th call, and only it, carries the steer");
      const researcher = server.requests.filter((r) => !isLead(r));
      assert.equal(researcher.length, 1);
      assert.ok(!hasSteer(researcher[0]!), "the researcher's call, the session's next after the search, does not carry it");
    });
  }
  test("a ChatClient researcher, tools run in parallel: a steer on a search reported once the researcher's call has started reaches the lead, not the researcher", async () => {
    await using server = await new ScriptedModelServer({
      script: searchThenDelegate,
    }).start();
    const sessionId = 'chat-lead-rag-parallel';
    const { breaker, events } = recordingBreaker();
    let delegated = () => {};
    const researcherStarted = new Promise<void>((resolve) => (delegated = resolve));
    let searched = () => {};
    const searchReported = new Promise<void>((resolve) => (searched = resolve));
    const search = tool({
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }, { context }) => {
        // The 3rd search (the steered one) is reported once the call running the researcher has started.
        if (query === QUERIES[2]) await researcherStarted;
        await breaker.observe((context as GovernorToolContext).sessionId, { kind: 'retrieval', query, results: ['policy-7', 'faq-2'] });
        searched();
        return `Found 2 documents for "${query}": policy-7, faq-2`;
      },
    });
    const research = chatResearcher(server, breaker, 'call');
    const delegate = tool({
      inputSchema: taskSchema,
      execute: async ({ task }, { context }) => {
        delegated();
        await searchReported;
        return research(task, (context as GovernorToolContext).sessionId);
      },
    });
    const lead = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor({ parallel: true }), breaker)
      .defaultTools({ search, [DELEGATE]: delegate })
      .build();

    const text = await lead
      .prompt('What does invoice inv-9 come to?')
      .advisors((a) => a.param(CONVERSATION_ID, sessionId))
      .call()
      .content();

    assert.equal(text, 'Damaged items are refunded in full.');
    assert.deepEqual(escalations(events), ['rag_fixation:steer']);
    assert.deepEqual(server.requests.filter(isLead).map(hasSteer), [false, false, false, true], "the lead's 4th call, and only it, carries the steer");
    const researcher = server.requests.filter((r) => !isLead(r));
    assert.equal(researcher.length, 1);
    assert.ok(!hasSteer(researcher[0]!), "the researcher's call, made after the search was reported, does not carry it");
  });
});

describe("a sub-agent's steer is its own, not the lead's", () => {
  const VARIANTS = [
    { lead: 'a ChatClient', researcher: 'a ChatClient', mode: 'call' },
    { lead: 'a ChatClient', researcher: 'a ChatClient', mode: 'stream' },
    { lead: 'a ChatClient', researcher: 'an AI SDK agent on a door of its own', mode: 'call' },
    { lead: 'an AI SDK agent', researcher: 'a ChatClient', mode: 'call' },
    { lead: 'an AI SDK agent', researcher: 'a ChatClient', mode: 'stream' },
  ] as const;

  for (const variant of VARIANTS) {
    for (const rounds of [4, 5] as const) {
      const what = researcherSteerCase(rounds);
      test(`${variant.lead} lead, the researcher ${variant.researcher} on ${variant.mode}(): ${what}`, async () => {
        await using server = await new ScriptedModelServer({
          script: (request): ScriptedTurn => {
            const round = request.body.messages.filter((m) => m.role === 'tool').length;
            if (isLead(request)) {
              if (round > 0) return { text: 'Invoice inv-9 comes to 120 EUR.', usage: { promptTokens: 900, completionTokens: 20 } };
              return { toolCalls: [{ name: DELEGATE, arguments: { task: 'Find invoice inv-9.' } }], usage: { promptTokens: 800, completionTokens: 20 } };
            }
            const usage = { promptTokens: RESEARCHER_PROMPTS[round] ?? 1_000, completionTokens: 20 };
            // Its last round answers; before it, each reads another page of the invoice.
            if (round === rounds - 1) return { text: 'inv-9 comes to 120 EUR.', usage };
            return { toolCalls: [{ name: 'get_invoice', arguments: { id: `inv-9/page-${round + 1}` } }], usage };
          },
        }).start();
        const sessionId = `chat-sub-steer-${variant.lead}-${variant.researcher}-${variant.mode}-${rounds}`;
        const { breaker, events } = recordingBreaker();
        const research = variant.researcher === 'a ChatClient' ? chatResearcher(server, breaker, variant.mode) : aiSdkResearcher(server, breaker);

        const { text } =
          variant.lead === 'a ChatClient'
            ? await runChatLead(server, breaker, sessionId, research, variant.mode)
            : await runAiSdkLead(server, breaker, sessionId, research);

        assert.equal(text, 'Invoice inv-9 comes to 120 EUR.');
        assert.deepEqual(escalations(events), ['token_drift:steer']);
        assertResearcherSteerStayed(server.requests, rounds);
        assert.equal(server.requests.filter(isLead).length, 2, 'the lead asked twice');
      });
    }
  }
});

describe("a steer decided on a sub-agent's tool results is its own, also when its loop ends on that round", () => {
  /** The researcher's own sub-agent tool: it asks an expert, who answers alike however the task is worded. */
  const EXPERT = 'ask_expert';
  const TASKS = ['Summarise invoice inv-9', 'Give me a short summary of invoice inv-9'];
  const ANSWER = 'Invoice inv-9 lists three items and comes to 120 EUR, due at the end of the month.';
  /**
   * How the researcher's loop ends after its 2nd ask, whose answer (the same again) is steered as a delegation loop:
   * - `goes on`: it answers in another round, which carries the steer;
   * - `return-direct`: the 2nd ask is its round's only call, of a return-direct tool (the 1st came with another call);
   * - `loop-ending`: a loop-ending `submit` is called with it, in parallel, so both start before the answer is judged.
   */
  const ENDINGS = ['goes on', 'return-direct', 'loop-ending'] as const;
  const VARIANTS = [
    { lead: 'a ChatClient', mode: 'call' },
    { lead: 'a ChatClient', mode: 'stream' },
    { lead: 'an AI SDK agent', mode: 'call' },
    { lead: 'an AI SDK agent', mode: 'stream' },
  ] as const;

  function researcherOf(server: ScriptedModelServer, breaker: AgentBreaker, mode: Mode, ending: (typeof ENDINGS)[number]): Researcher {
    const ask = tool({ inputSchema: taskSchema, execute: async () => ANSWER });
    const tools = {
      [EXPERT]: ending === 'return-direct' ? { ...ask, returnDirect: true } : ask,
      get_invoice: tool({ inputSchema: invoiceSchema, execute: async ({ id }) => `${id}: line items of invoice inv-9` }),
      submit: { ...tool({ inputSchema: z.object({}), execute: async () => 'Invoice inv-9 comes to 120 EUR.' }), endsLoop: true },
    };
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools(tools).build();
    return async (task, sessionId) => {
      const { text } = await runMode(
        client.prompt(task).advisors((a) => a.param(CONVERSATION_ID, sessionId)),
        mode,
      );
      return text;
    };
  }

  for (const variant of VARIANTS) {
    for (const ending of ENDINGS) {
      const what = ending === 'goes on' ? "reaches the researcher's next call, not the lead" : 'ends with its loop, and does not reach the lead';
      test(`${variant.lead} lead, a ChatClient researcher on ${variant.mode}(), its loop ${ending}: the steer on its 2nd ask's answer ${what}`, async () => {
        await using server = await new ScriptedModelServer({
          script: (request): ScriptedTurn => {
            const round = request.body.messages.filter((m) => m.role === 'assistant').length;
            if (isLead(request)) {
              if (round > 0) return { text: 'Invoice inv-9 comes to 120 EUR.' };
              return { toolCalls: [{ name: DELEGATE, arguments: { task: 'Find invoice inv-9.' } }] };
            }
            if (round === 2) return { text: 'inv-9 comes to 120 EUR.' };
            const ask = { name: EXPERT, arguments: { task: TASKS[round]! } };
            if (round === 0) return { toolCalls: ending === 'return-direct' ? [ask, { name: 'get_invoice', arguments: { id: 'inv-9' } }] : [ask] };
            return { toolCalls: ending === 'loop-ending' ? [ask, { name: 'submit', arguments: {} }] : [ask] };
          },
        }).start();
        const sessionId = `chat-sub-result-steer-${variant.lead}-${variant.mode}-${ending}`;
        const { breaker, events } = recordingBreaker([EXPERT]);
        const research = researcherOf(server, breaker, variant.mode, ending);

        const { text } =
          variant.lead === 'a ChatClient'
            ? await runChatLead(server, breaker, sessionId, research, variant.mode)
            : await runAiSdkLead(server, breaker, sessionId, research);

        assert.equal(text, 'Invoice inv-9 comes to 120 EUR.');
        assert.deepEqual(escalations(events), ['delegation_loop:steer'], 'the 2nd ask is steered once it has run');
        const researcher = server.requests.filter((r) => !isLead(r));
        assert.deepEqual(
          researcher.map(hasSteer),
          ending === 'goes on' ? [false, false, true] : [false, false],
          "the researcher's call after the 2nd ask, and only it, carries the steer",
        );
        assert.deepEqual(server.requests.filter(isLead).map(hasSteer), [false, false], 'no call of the lead carries it');
        assert.deepEqual(breaker.takeSteers(sessionId), [], 'nothing is left waiting for the session');
      });
    }
  }
});

describe("a sub-agent's stop reaches a lead of another kind as the category's error", () => {
  const failing = (attempts: { count: number }) =>
    tool({
      inputSchema: invoiceSchema,
      execute: async (): Promise<string> => {
        attempts.count += 1;
        throw new Error('503 Service Unavailable: upstream billing-api is down');
      },
    });

  test('a ChatClient lead, the researcher an AI SDK agent on a door of its own', async () => {
    await using server = await delegatedOutageServer();
    const { breaker, events } = recordingBreaker();
    const attempts = { count: 0 };
    const lookupInvoice = tool({
      inputSchema: taskSchema,
      execute: async ({ task }, { context }) => {
        const door = breakerForAiSdk(breaker, { sessionId: (context as GovernorToolContext).sessionId });
        const tools = door.tools({ get_invoice: failing(attempts) });
        return (await generateText({ model: door.model(scriptedModel(server)), tools, stopWhen: isStepCount(10), prompt: task })).text;
      },
    });
    const lead = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 12 }), breaker)
      .defaultTools({ lookup_invoice: lookupInvoice })
      .build();
    const error = await lead
      .prompt('Is invoice inv-9 paid?')
      .advisors((a) => a.param(CONVERSATION_ID, 'mixed-chat-lead'))
      .call()
      .content()
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    const { counters } = await breaker.snapshot('mixed-chat-lead');
    assertDelegatedOutageCaught({ error, events, lookups: attempts.count, counters });
  });

  test('an AI SDK lead, the researcher a ChatClient', async () => {
    await using server = await delegatedOutageServer();
    const { breaker, events } = recordingBreaker();
    const attempts = { count: 0 };
    const researcher = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker)
      .defaultTools({ get_invoice: failing(attempts) })
      .build();
    const governed = breakerForAiSdk(breaker, { sessionId: 'mixed-ai-sdk-lead' });
    const tools = governed.tools({
      lookup_invoice: tool({
        inputSchema: taskSchema,
        execute: async ({ task }) =>
          researcher
            .prompt(task)
            .advisors((a) => a.param(CONVERSATION_ID, 'mixed-ai-sdk-lead'))
            .call()
            .content(),
      }),
    });
    const error = await generateText({
      model: governed.model(scriptedModel(server)),
      tools,
      stopWhen: [isStepCount(12), governed.stopWhen],
      prompt: 'Is invoice inv-9 paid?',
    }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    const { counters } = await breaker.snapshot('mixed-ai-sdk-lead');
    assertDelegatedOutageCaught({ error, events, lookups: attempts.count, counters });
  });
});
