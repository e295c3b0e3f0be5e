import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import {
  AdvisorOrder,
  AgentBreaker,
  BudgetExceededError,
  ChatClient,
  CONVERSATION_ID,
  ErrorLoopError,
  RagFixationError,
  StructuredOutputValidationAdvisor,
  TokenDriftError,
  ToolCallAdvisor,
  ToolCallingAdvisor,
  type BreakerEventRecord,
  type ChatClientRequestSpec,
  type GovernorToolContext,
} from '../index.ts';
import { delegatedOutageServer } from '../test-support/delegated-outage.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { ScriptedModelServer, scriptedModel as standInModel } from '../testing/index.ts';
import { compoundingLeadServer, LEAD_PROMPTS } from './test-support/compounding-lead.ts';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** Asks for `calls(n)` in round n (1-based) until it returns none; then answers. */
function scriptedModel(calls: (round: number) => Array<{ tool: string; input: unknown }>): MockLanguageModelV4 {
  let round = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      round += 1;
      const wanted = calls(round);
      if (wanted.length === 0) {
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
      }
      return {
        content: wanted.map((c, i) => ({ type: 'tool-call' as const, toolCallId: `r${round}-${i}`, toolName: c.tool, input: JSON.stringify(c.input) })),
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

describe('AgentBreaker in a ChatClient: one observation point per tool call', () => {
  test('listeners and the breaker hear of the same executed calls, with the same arguments and results', async () => {
    const breaker = new AgentBreaker();
    const heard: Array<{ tool: string; args: unknown; result: unknown }> = [];
    const lookup = tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped` });
    const client = ChatClient.builder(scriptedModel((n) => (n <= 3 ? [{ tool: 'lookup', input: { id: `#W${n}` } }] : [])))
      .defaultAdvisors(
        new ToolCallAdvisor({ listeners: [{ onToolCallEnd: (e) => void heard.push({ tool: e.toolName, args: e.args, result: e.result }) }] }),
        breaker,
      )
      .defaultTools({ lookup })
      .build();
    await client
      .prompt('Where are my orders?')
      .advisors((a) => a.param(CONVERSATION_ID, 'o-1'))
      .call()
      .content();
    assert.deepEqual(
      heard.map((h) => h.result),
      ['order #W1: shipped', 'order #W2: shipped', 'order #W3: shipped'],
    );
    const snapshot = await breaker.snapshot('o-1');
    assert.equal(snapshot.counters.toolCalls, heard.length);
    assert.equal(snapshot.counters.modelCalls, 4);
  });

  test('a tool failing the same way on the same arguments is stopped as an error loop before the next round', async () => {
    const breaker = new AgentBreaker();
    const escalations: BreakerEventRecord[] = [];
    breaker.on((e) => void (e.type === 'escalation' && escalations.push(e)));
    let runs = 0;
    const book = tool({
      inputSchema: z.object({ flight: z.string(), amount: z.number() }),
      execute: async (): Promise<string> => {
        runs += 1;
        throw new Error('payment amount does not add up');
      },
    });
    const client = ChatClient.builder(scriptedModel(() => [{ tool: 'book', input: { flight: 'HAT030', amount: 299 } }]))
      .defaultAdvisors(new ToolCallAdvisor(), breaker)
      .defaultTools({ book })
      .build();
    await assert.rejects(
      client
        .prompt('Book HAT030')
        .advisors((a) => a.param(CONVERSATION_ID, 'b-1'))
        .call()
        .content(),
      ErrorLoopError,
    );
    assert.ok(
      escalations.every((e) => e.category === 'error_loop'),
      'only the error loop escalates',
    );
    assert.equal(escalations.at(-1)?.action, 'stop');
    // The failures the breaker judged are the ones that ran; blocked attempts never reached the tool.
    assert.ok(runs >= 2 && runs < 10, `the tool ran ${runs} times`);
    assert.equal((await breaker.snapshot('b-1')).counters.toolCalls, runs);
  });

  test('an invalid call the model keeps repeating is judged from the error it was shown', async () => {
    const breaker = new AgentBreaker();
    const lookup = tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => id });
    const client = ChatClient.builder(scriptedModel(() => [{ tool: 'lookup', input: { order: 7 } }]))
      .defaultAdvisors(new ToolCallAdvisor(), breaker)
      .defaultTools({ lookup })
      .build();
    await assert.rejects(
      client
        .prompt('Look up order 7')
        .advisors((a) => a.param(CONVERSATION_ID, 'i-1'))
        .call()
        .content(),
      ErrorLoopError,
    );
  });

  test('a stop in stream(): every tool call the stream showed gets a result event, the stopped ones failed', async () => {
    const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'queued' });
    const rounds = Array.from({ length: 8 }, () => ({ toolCalls: [{ name: 'status', input: { job: 'build' } }] }));
    const client = ChatClient.builder(mockModel(rounds)).defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker()).defaultTools({ status }).build();
    const calls: string[] = [];
    const results = new Map<string, { isError: boolean; output: unknown }>();
    await assert.rejects(async () => {
      for await (const event of client.prompt('status?').stream().chatResponse()) {
        if (event.type === 'tool-call') calls.push(event.toolCall.toolCallId);
        if (event.type === 'tool-result') results.set(event.toolCallId, { isError: event.isError, output: event.output });
      }
    }, /Agent stopped: tool-call spiral/);
    assert.ok(calls.length >= 3);
    assert.deepEqual([...results.keys()].sort(), [...calls].sort(), 'no call is left without a result');
    const stopped = results.get(calls.at(-1)!)!;
    assert.equal(stopped.isError, true);
    assert.match(String(stopped.output), /Agent stopped: tool-call spiral/);
  });

  for (const mode of MODES) {
    test(`${mode}: a steer on a call the caller runs (a tool without execute) reaches the model with the call's result, once`, async () => {
      const asks = Array.from({ length: 3 }, (_, i) => ({ toolCalls: [{ name: 'askUser', input: { question: 'Which city?' }, id: `c${i}` }] }));
      const model = mockModel([...asks, { text: 'Which city should the trip start from?' }]);
      const askUser = tool({ inputSchema: z.object({ question: z.string() }) });
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker()).defaultTools({ askUser }).build();
      // One conversation: without an id each call is a session of its own.
      const inTrip = (spec: ChatClientRequestSpec) => spec.advisors((a) => a.param(CONVERSATION_ID, 'trip'));
      let history: ModelMessage[] = [{ role: 'user', content: 'plan my trip' }];
      const steered: number[] = [];
      for (let request = 0; request < 3; request++) {
        const { response } = await runMode(inTrip(client.prompt().messages(...history)), mode);
        if (response.toolCalls.some((c) => c.intervention?.action === 'steer')) steered.push(request);
        const content = response.toolCalls.map((c) => ({
          type: 'tool-result' as const,
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          output: { type: 'text' as const, value: 'The user did not answer.' },
        }));
        history = [...history, ...response.messages, { role: 'tool', content }];
      }
      assert.deepEqual(steered, [2], 'the third identical call is steered');
      // The round after the caller sent that call's result back.
      assert.equal((await runMode(inTrip(client.prompt().messages(...history)), mode)).text, 'Which city should the trip start from?');
      const prompt = JSON.stringify(model.doGenerateCalls.at(-1)?.prompt ?? model.doStreamCalls.at(-1)?.prompt);
      assert.equal(prompt.match(/\[AgentBreaker\] You have called \\"askUser\\" 3 times/g)?.length, 1, prompt);
    });
  }

  test('a tool call the caller cancels is no failure: cancelling five times leaves the conversation going', async () => {
    const breaker = new AgentBreaker();
    const escalations: BreakerEventRecord[] = [];
    breaker.on((e) => void (e.type === 'escalation' && escalations.push(e)));
    const ended: string[] = [];
    const slow = tool({
      inputSchema: z.object({ order: z.number() }),
      execute: (_input, { abortSignal }) => new Promise<string>((_, reject) => abortSignal?.addEventListener('abort', () => reject(abortSignal.reason))),
    });
    const client = ChatClient.builder(scriptedModel(() => [{ tool: 'slow', input: { order: 7 } }]))
      .defaultAdvisors(new ToolCallingAdvisor({ listeners: [{ onToolCallError: (e) => void ended.push(e.toolName) }] }), breaker)
      .defaultTools({ slow })
      .build();
    for (const text of ['look up order 7', 'please check order 7 again', 'order 7 status?', 'once more', 'and now?']) {
      const controller = new AbortController();
      const pending = client
        .prompt(text)
        .advisors((a) => a.param(CONVERSATION_ID, 'cancelled-1'))
        .abortSignal(controller.signal)
        .call()
        .content();
      setTimeout(() => controller.abort(new Error('user pressed stop')), 20);
      await assert.rejects(pending, /user pressed stop/);
    }
    assert.deepEqual(escalations, []);
    assert.deepEqual(ended, ['slow', 'slow', 'slow', 'slow', 'slow'], 'listeners still hear each cancelled call');
    const snapshot = await breaker.snapshot('cancelled-1');
    assert.equal(snapshot.state, 'CLOSED');
    assert.equal(snapshot.counters.toolCalls, 0);
  });
});

describe('AgentBreaker in a ChatClient: searches the provider ran itself', () => {
  for (const mode of ['call', 'stream'] as const) {
    test(`${mode}: each is judged as a retrieval; the same search for the same pages is steered in the next prompt, then stopped`, async () => {
      const queries = ['cheapest flight to Oslo in March', 'cheapest flights Oslo March', 'cheapest Oslo flight in March', 'Oslo cheapest flights March'];
      const prompts: string[] = [];
      let round = 0;
      // What @ai-sdk/anthropic reports for its web search server tool: the call with its query, then the pages found.
      const searchRound = (prompt: unknown) => {
        prompts.push(JSON.stringify(prompt));
        const id = `srvtoolu_${round}`;
        const query = queries[round++ % queries.length]!;
        return [
          { type: 'tool-call', toolCallId: id, toolName: 'web_search', input: JSON.stringify({ query }), providerExecuted: true },
          { type: 'tool-result', toolCallId: id, toolName: 'web_search', result: [{ url: 'https://fares.example/oslo', title: 'Fares' }] },
        ] as const;
      };
      const model = new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => ({
          content: [...searchRound(prompt), { type: 'text', text: 'Let me look once more.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        }),
        // Streamed, the search parts come before the text, as the provider streams them.
        doStream: async ({ prompt }) => ({
          stream: convertArrayToReadableStream([
            { type: 'stream-start', warnings: [] },
            ...searchRound(prompt),
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Let me look ' },
            { type: 'text-delta', id: 't', delta: 'once more.' },
            { type: 'text-end', id: 't' },
            { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } },
          ]),
        }),
      });
      const breaker = new AgentBreaker();
      const client = ChatClient.builder(model).defaultAdvisors(breaker).build();
      const answers: string[] = [];
      const error = await (async () => {
        for (let i = 0; i < 8; i += 1) {
          const spec = client
            .prompt(i === 0 ? 'Find me the cheapest flight to Oslo in March.' : 'Keep looking.')
            .advisors((a) => a.param(CONVERSATION_ID, 'fares-3'));
          if (mode === 'call') answers.push(await spec.call().content());
          else {
            let text = '';
            for await (const delta of spec.stream().content()) text += delta;
            answers.push(text);
          }
        }
      })().then(
        () => assert.fail('the breaker must stop the conversation'),
        (e: unknown) => e,
      );
      assert.ok(RagFixationError.isInstance(error), `expected RagFixationError, got ${String(error)}`);
      assert.deepEqual(answers, ['Let me look once more.', 'Let me look once more.', 'Let me look once more.']);
      assert.equal((await breaker.snapshot('fares-3')).counters.retrievals, 4);
      assert.match(prompts[3]!, /\[AgentBreaker\] .*search/, 'the fourth prompt carried the steer');
      assert.doesNotMatch(prompts[2]!, /\[AgentBreaker\]/);
    });

    test(`${mode}: alike searches in one answer are steered once, and stopped only when the next answer searches again`, async () => {
      const queries = ['cheapest flight to Oslo in March', 'cheapest flights Oslo March', 'cheapest Oslo flight in March', 'Oslo cheapest flights March'];
      const prompts: string[] = [];
      // One answer that runs all four searches, as a research model does in one response.
      const searches = () =>
        queries.flatMap((query, i) => [
          {
            type: 'tool-call',
            toolCallId: `srvtoolu_${prompts.length}_${i}`,
            toolName: 'web_search',
            input: JSON.stringify({ query }),
            providerExecuted: true,
          },
          { type: 'tool-result', toolCallId: `srvtoolu_${prompts.length}_${i}`, toolName: 'web_search', result: [{ url: 'https://fares.example/oslo' }] },
        ]) as never[];
      const model = new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          const content = [...searches(), { type: 'text', text: 'Nothing new.' }] as never[];
          prompts.push(JSON.stringify(prompt));
          return { content, finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
        },
        doStream: async ({ prompt }) => {
          const parts = [...searches()];
          prompts.push(JSON.stringify(prompt));
          return {
            stream: convertArrayToReadableStream([
              { type: 'stream-start', warnings: [] },
              ...parts,
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'Nothing new.' },
              { type: 'text-end', id: 't' },
              { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } },
            ]),
          };
        },
      });
      const breaker = new AgentBreaker();
      const escalations: BreakerEventRecord[] = [];
      breaker.on((e) => {
        if (e.type === 'escalation') escalations.push(e);
      });
      const client = ChatClient.builder(model).defaultAdvisors(breaker).build();
      const ask = async (text: string) => {
        const spec = client.prompt(text).advisors((a) => a.param(CONVERSATION_ID, `fares-one-answer-${mode}`));
        if (mode === 'call') return spec.call().content();
        let answer = '';
        for await (const delta of spec.stream().content()) answer += delta;
        return answer;
      };
      assert.equal(await ask('Find me the cheapest flight to Oslo in March.'), 'Nothing new.');
      const snapshot = await breaker.snapshot(`fares-one-answer-${mode}`);
      assert.equal(snapshot.counters.retrievals, 4);
      assert.equal(snapshot.state, 'CLOSED', 'the model has not read the steer yet');
      assert.deepEqual(
        escalations.map((e) => [e.category, e.action]),
        [['rag_fixation', 'steer']],
      );
      await assert.rejects(ask('Keep looking.'), RagFixationError);
      assert.equal(prompts[1]!.match(/\[AgentBreaker\]/g)?.length, 1, 'the second prompt carried the steer, once');
      assert.deepEqual(
        escalations.map((e) => [e.category, e.action]),
        [
          ['rag_fixation', 'steer'],
          ['rag_fixation', 'stop'],
        ],
      );
    });
  }
});

describe('AgentBreaker in a ChatClient: a sub-agent as a tool, in the same session', () => {
  test("the researcher's task is the lead's, not a user turn: a delegated outage is still caught", async () => {
    await using server = await delegatedOutageServer();
    const breaker = new AgentBreaker({ telemetry: false });
    let attempts = 0;
    const getInvoice = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async (): Promise<string> => {
        attempts += 1;
        throw new Error('503 Service Unavailable: upstream billing-api is down');
      },
    });
    const researcher = ChatClient.builder(standInModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker)
      .defaultTools({ get_invoice: getInvoice })
      .build();
    const lookupInvoice = tool({
      inputSchema: z.object({ task: z.string() }),
      // The researcher runs in the lead's session, as a tool that hands its session on does.
      execute: async ({ task }, { context }) =>
        researcher
          .prompt(task)
          .advisors((a) => a.param(CONVERSATION_ID, (context as GovernorToolContext).sessionId))
          .call()
          .content(),
    });
    const lead = ChatClient.builder(standInModel(server))
      .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 12 }), breaker)
      .defaultTools({ lookup_invoice: lookupInvoice })
      .build();

    const stopped = await lead
      .prompt('Is invoice inv-9 paid?')
      .advisors((a) => a.param(CONVERSATION_ID, 'chat-delegated'))
      .call()
      .content()
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    const { counters } = await breaker.snapshot('chat-delegated');
    assert.equal(counters.userEvents, 1, "only the user's question is a user turn, not the tasks the lead wrote");
    // Thrown inside the lead's tool and swallowed there, the stop reaches the lead's caller as the category's error.
    assert.ok(ErrorLoopError.isInstance(stopped), `the breaker ends the run with the category's error: ${String(stopped)}`);
    assert.equal(stopped.sessionId, 'chat-delegated');
    assert.equal(stopped.evidence?.['transient'], true);
    assert.ok(attempts <= 5, `an outage gets 5 attempts, not ${attempts}`);
  });
});

describe('AgentBreaker in a ChatClient: a tool that times out', () => {
  test("the tool loop's own time limit is an outage: the call gets the 5 attempts of a transient error, not 3", async () => {
    let attempts = 0;
    const fetchPage = tool({
      inputSchema: z.object({ url: z.string() }),
      execute: async (_input, { abortSignal }): Promise<string> => {
        attempts += 1;
        // A slow upstream: it answers only after the loop's limit has cancelled the call.
        return new Promise((resolve) => {
          const timer = setTimeout(() => resolve('late'), 10_000);
          abortSignal?.addEventListener('abort', () => clearTimeout(timer), { once: true });
        });
      },
    });
    const rounds = Array.from({ length: 8 }, () => ({ toolCalls: [{ name: 'fetch_page', input: { url: 'https://example.com/status' } }] }));
    const client = ChatClient.builder(mockModel([...rounds, { text: 'done' }]))
      .defaultAdvisors(new ToolCallingAdvisor({ toolTimeoutMs: 20 }), new AgentBreaker({ telemetry: false }))
      .defaultTools({ fetch_page: fetchPage })
      .build();
    const stopped = await client
      .prompt('Is the site up?')
      .call()
      .content()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(ErrorLoopError.isInstance(stopped), String(stopped));
    assert.equal(stopped.evidence?.['transient'], true);
    assert.equal(attempts, 5);
  });
});

describe('AgentBreaker in a ChatClient: a sub-agent between the rounds of a lead whose context compounds', () => {
  for (const mode of ['call', 'stream'] as const) {
    test(`the researcher on ${mode}(): its small prompts do not restart the lead's growth, token drift trips at the lead's 4th round as without it`, async () => {
      await using server = await compoundingLeadServer();
      const sessionId = `chat-compounding-lead-${mode}`;
      const breaker = new AgentBreaker({ telemetry: false });
      const events: BreakerEventRecord[] = [];
      breaker.on((event) => events.push(event));
      const researcher = ChatClient.builder(standInModel(server)).defaultAdvisors(new ToolCallingAdvisor(), breaker).build();
      let delegations = 0;
      const research = tool({
        inputSchema: z.object({ task: z.string() }),
        // The researcher runs in the lead's session, as a tool that hands its session on does.
        execute: async ({ task }, { context }) => {
          delegations += 1;
          const asked = researcher.prompt(task).advisors((a) => a.param(CONVERSATION_ID, (context as GovernorToolContext).sessionId));
          if (mode === 'call') return asked.call().content();
          let text = '';
          for await (const delta of asked.stream().content()) text += delta;
          return text;
        },
      });
      const lead = ChatClient.builder(standInModel(server))
        .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 12 }), breaker)
        .defaultTools({ research })
        .build();

      const stopped = await lead
        .prompt('Prepare the weekly operations brief.')
        .advisors((a) => a.param(CONVERSATION_ID, sessionId))
        .call()
        .content()
        .then(
          () => assert.fail('the breaker must end the run'),
          (error: unknown) => error,
        );

      assert.ok(TokenDriftError.isInstance(stopped), `expected TokenDriftError, got ${String(stopped)}`);
      const escalated = events.filter((e) => e.type === 'escalation');
      assert.deepEqual(
        escalated.map((e) => `${e.category}:${e.action}`),
        ['token_drift:steer', 'token_drift:stop'],
      );
      assert.deepEqual(
        escalated.map((e) => e.evidence?.promptTokens),
        [LEAD_PROMPTS.slice(0, 4), LEAD_PROMPTS.slice(1, 5)],
        "the lead's own rounds, with none of the researcher's",
      );
      assert.equal(delegations, 4, 'the researcher ran between every two rounds of the lead');
      // The researcher's rounds are still the session's.
      assert.equal((await breaker.snapshot(sessionId)).counters.modelCalls, 9);
    });
  }
});

describe('AgentBreaker in a ChatClient: the budget counts the re-asks of a validation advisor beneath it', () => {
  const Order = z.object({ id: z.string(), status: z.string() });
  const lookup = tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => `order ${id}: shipped` });

  for (const mode of MODES) {
    test(`${mode}: two re-asks push the session over budget.maxTokens, and the budget fires`, async () => {
      // Each attempt costs 620 tokens, under the budget; the three of the round cost 1,860.
      const usage = { promptTokens: 600, completionTokens: 20 };
      await using server = await new ScriptedModelServer({
        script: [
          { text: 'It has shipped.', usage },
          { text: '{"id": "A1"}', usage },
          { text: '{"id": "A1", "status": "shipped"}', usage },
        ],
      }).start();
      const breaker = new AgentBreaker({ budget: { maxTokens: 1_000, wrapUpTurn: false }, telemetry: false });
      const client = ChatClient.builder(standInModel(server))
        .defaultAdvisors(new ToolCallingAdvisor(), breaker, new StructuredOutputValidationAdvisor({ schema: Order }))
        .build();
      const session = `budget-reasks-${mode}`;
      await assert.rejects(
        runMode(
          client.prompt('Where is A1?').advisors((a) => a.param(CONVERSATION_ID, session)),
          mode,
        ),
        BudgetExceededError,
      );
      assert.equal(server.requests.length, 3);
      const snapshot = await breaker.snapshot(session);
      assert.equal(snapshot.budget.tokens, 1_860);
      assert.equal(snapshot.counters.modelCalls, 1, 'the re-asks are part of the round, not rounds of their own');
    });
  }

  test('the cost budget prices every attempt of the round', async () => {
    // gpt-4o input is $2.50 per million tokens: 10,000 prompt tokens cost $0.025 an attempt.
    const usage = { promptTokens: 10_000, completionTokens: 0 };
    await using server = await new ScriptedModelServer({
      modelId: 'gpt-4o',
      script: [
        { text: 'nope', usage },
        { text: '{"id": "A1", "status": "shipped"}', usage },
      ],
    }).start();
    const breaker = new AgentBreaker({ budget: { maxCostUsd: 0.04, wrapUpTurn: false }, telemetry: false });
    const client = ChatClient.builder(standInModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker, new StructuredOutputValidationAdvisor({ schema: Order }))
      .build();
    await assert.rejects(
      client
        .prompt('Where is A1?')
        .advisors((a) => a.param(CONVERSATION_ID, 'cost-reasks'))
        .call()
        .content(),
      BudgetExceededError,
    );
    assert.equal((await breaker.snapshot('cost-reasks')).budget.costUsd, 0.05);
  });

  test('token drift reads the prompt of the round, not the sum of its attempts', async () => {
    // Flat prompts of 6,000 tokens: the last round's three attempts sum to 18,000, which is no growth of the prompt.
    const usage = { promptTokens: 6_000, completionTokens: 10 };
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'lookup', arguments: { id: 'A1' } }], usage },
        { text: 'nope', usage },
        { text: 'still nope', usage },
        { text: '{"id": "A1", "status": "shipped"}', usage },
      ],
    }).start();
    const breaker = new AgentBreaker({ tokenDrift: { consecutive: 1 }, telemetry: false });
    const escalations: BreakerEventRecord[] = [];
    breaker.on((e) => void (e.type === 'escalation' && escalations.push(e)));
    const client = ChatClient.builder(standInModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker, new StructuredOutputValidationAdvisor({ schema: Order }))
      .defaultTools({ lookup })
      .build();
    const order = await client
      .prompt('Where is A1?')
      .advisors((a) => a.param(CONVERSATION_ID, 'drift-reasks'))
      .call()
      .entity(Order);
    assert.deepEqual(order, { id: 'A1', status: 'shipped' });
    assert.deepEqual(escalations, []);
    assert.equal((await breaker.snapshot('drift-reasks')).budget.tokens, 4 * 6_010);
  });

  test('a breaker outside the tool loop counts every round of the call once', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ name: 'lookup', arguments: { id: 'A1' } }], usage: { promptTokens: 1_000, completionTokens: 10 } },
        { text: 'nope', usage: { promptTokens: 1_100, completionTokens: 10 } },
        { text: '{"id": "A1", "status": "shipped"}', usage: { promptTokens: 1_200, completionTokens: 10 } },
      ],
    }).start();
    const breaker = new AgentBreaker({ order: AdvisorOrder.TOOL_LOOP - 1, telemetry: false });
    const client = ChatClient.builder(standInModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker, new StructuredOutputValidationAdvisor({ schema: Order }))
      .defaultTools({ lookup })
      .build();
    await client
      .prompt('Where is A1?')
      .advisors((a) => a.param(CONVERSATION_ID, 'outside-loop'))
      .call()
      .entity(Order);
    assert.equal(server.requests.length, 3);
    assert.equal((await breaker.snapshot('outside-loop')).budget.tokens, 3_330);
  });
});
