/**
 * The LangChain door (`agent-governor/langchain`) on the tool results that do
 * not come back as a plain `ToolMessage`: a tool that throws, and a tool that
 * returns a LangGraph `Command`; and an agent invoked inside a tool, in the
 * lead's session, whose task is no user turn. LangChain's real `createAgent` and
 * `ChatOpenAI`, over real HTTP against the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, humanInTheLoopMiddleware, modelRetryMiddleware, tool, toolRetryMiddleware } from 'langchain';
import { z } from 'zod';
import { AgentBreaker, DelegationLoopError, ErrorLoopError, ToolSpiralError, type AgentBreakerOptions, type BreakerEventRecord } from '../index.ts';
import { governorMiddleware } from './index.ts';
import { ScriptedModelServer } from '../testing/index.ts';
import { escalations, lastToolResult } from '../e2e/recorded-run.ts';
import { assertDelegatedOutageCaught, DELEGATED_TASKS, delegatedOutageServer } from '../test-support/delegated-outage.ts';
import { assertLeadDriftCaught, compoundingLeadServer } from '../breaker/test-support/compounding-lead.ts';

function chatModel(server: ScriptedModelServer): ChatOpenAI {
  return new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
}

function recordingBreaker(options: AgentBreakerOptions = {}) {
  const breaker = new AgentBreaker({ telemetry: false, ...options });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events };
}

/** A model that calls one tool with the same arguments every turn. */
function loopingModel(name: string, args: Record<string, unknown>): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script: [{ toolCalls: [{ name, arguments: args }] }], onExhausted: 'repeat-last' }).start();
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

describe('governorMiddleware: results that are not a plain ToolMessage', () => {
  test('a tool that throws the same error again and again: the steer reaches the model on the error result, before the block and the stop', async () => {
    await using server = await loopingModel('deploy', { env: 'prod' });
    const { breaker, events } = recordingBreaker();
    let attempts = 0;
    const deploy = tool(
      async () => {
        attempts += 1;
        throw new Error('permission denied: role deployer missing');
      },
      { name: 'deploy', description: 'Deploys to an environment', schema: z.object({ env: z.string() }) },
    );
    const agent = createAgent({ model: chatModel(server), tools: [deploy], middleware: [governorMiddleware(breaker)] });

    const error = await rejection(
      agent.invoke({ messages: [{ role: 'user', content: 'Deploy to prod.' }] }, { configurable: { thread_id: 'lc-throws' }, recursionLimit: 100 }),
    );

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.equal(attempts, 3, 'the 3rd attempt ran steered; the 4th was blocked, the 5th stopped');
    assert.equal(
      lastToolResult(server.requests[1]),
      'Error: permission denied: role deployer missing\n Please fix your mistakes.',
      'an unsteered failure reads as without the breaker',
    );
    assert.match(
      lastToolResult(server.requests[3]),
      /^Error: permission denied: role deployer missing\n Please fix your mistakes\.\n\n\[AgentBreaker\] "deploy" has failed/,
      'the 3rd error result carries the steer',
    );
    assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
  });

  test('a tool whose error names the outage only in a field (status 503) gets the allowance for transient errors', async () => {
    await using server = await loopingModel('deploy', { env: 'prod' });
    const { breaker } = recordingBreaker();
    let attempts = 0;
    const deploy = tool(
      async () => {
        attempts += 1;
        throw Object.assign(new Error('upstream failed'), { status: 503 });
      },
      { name: 'deploy', description: 'Deploys to an environment', schema: z.object({ env: z.string() }) },
    );
    const agent = createAgent({ model: chatModel(server), tools: [deploy], middleware: [governorMiddleware(breaker)] });
    const error = await rejection(
      agent.invoke({ messages: [{ role: 'user', content: 'Deploy to prod.' }] }, { configurable: { thread_id: 'lc-throws-status' }, recursionLimit: 100 }),
    );
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(attempts, 5, 'an outage is retried longer than a rejection (3 attempts)');
    assert.equal(lastToolResult(server.requests[1]), 'Error: upstream failed\n Please fix your mistakes.', 'the model reads what LangChain writes');
  });

  test('a tool that returns a Command is judged by the tool message in its update: the spiral is steered on it, then blocked, then stopped', async () => {
    await using server = await loopingModel('check_build', { buildId: 'b-17' });
    const { breaker, events } = recordingBreaker();
    let runs = 0;
    const check = tool(
      async ({ buildId }, config: { toolCall?: { id?: string } }) => {
        runs += 1;
        return new Command({
          update: { messages: [new ToolMessage({ content: `build ${buildId}: running`, tool_call_id: config.toolCall?.id ?? '', name: 'check_build' })] },
        });
      },
      { name: 'check_build', description: 'Status of a CI build', schema: z.object({ buildId: z.string() }) },
    );
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)] });

    const error = await rejection(
      agent.invoke({ messages: [{ role: 'user', content: 'Is b-17 done?' }] }, { configurable: { thread_id: 'lc-command' }, recursionLimit: 100 }),
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(runs, 3);
    assert.equal(lastToolResult(server.requests[2]), 'build b-17: running');
    assert.match(
      lastToolResult(server.requests[3]),
      /^build b-17: running\n\n\[AgentBreaker\] .*"check_build" 3 times/s,
      "the command's tool message carries the steer",
    );
    assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
    assert.equal((await breaker.snapshot('lc-command')).counters.toolCalls, 3);
  });

  test('a Command whose tool message reports a failure is a failure: a tool that keeps failing that way is an error loop', async () => {
    await using server = await loopingModel('deploy', { env: 'prod' });
    const { breaker, events } = recordingBreaker();
    const deploy = tool(
      async (_input, config: { toolCall?: { id?: string } }) =>
        new Command({
          update: [['messages', [new ToolMessage({ content: 'permission denied', tool_call_id: config.toolCall?.id ?? '', name: 'deploy', status: 'error' })]]],
        }),
      { name: 'deploy', description: 'Deploys to an environment', schema: z.object({ env: z.string() }) },
    );
    const agent = createAgent({ model: chatModel(server), tools: [deploy], middleware: [governorMiddleware(breaker)] });

    const error = await rejection(
      agent.invoke({ messages: [{ role: 'user', content: 'Deploy to prod.' }] }, { configurable: { thread_id: 'lc-command-fails' }, recursionLimit: 100 }),
    );

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.match(lastToolResult(server.requests[3]), /^permission denied\n\n\[AgentBreaker\] "deploy" has failed/);
  });
});

describe('governorMiddleware: a hosted shell (commands the Responses API runs in its own container)', () => {
  /** An agent on the Responses API with its hosted shell, governed by `breaker`; `streaming` has ChatOpenAI stream each answer. */
  function shellAgent(server: ScriptedModelServer, breaker: AgentBreaker, streaming: boolean) {
    const model = new ChatOpenAI({
      model: server.modelId,
      apiKey: 'test-key',
      maxRetries: 0,
      useResponsesApi: true,
      streaming,
      configuration: { baseURL: server.baseURL },
    });
    return createAgent({ model, tools: [{ type: 'shell', environment: { type: 'container_auto' } }], middleware: [governorMiddleware(breaker)] });
  }

  /** Asks, then "Keep going." up to 8 times in one thread; the answers, and what ended the run, if anything did. */
  async function askRepeatedly(agent: ReturnType<typeof shellAgent>, threadId: string): Promise<{ answers: string[]; error: unknown }> {
    const answers: string[] = [];
    let messages: BaseMessage[] = [];
    const error = await (async () => {
      for (let i = 0; i < 8; i += 1) {
        messages = [...messages, new HumanMessage(i === 0 ? 'Make the cart tests pass.' : 'Keep going.')];
        messages = (await agent.invoke({ messages }, { configurable: { thread_id: threadId } })).messages;
        answers.push(String(messages.at(-1)?.text));
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    return { answers, error };
  }

  for (const streaming of [false, true]) {
    test(`the same command failing the same way in every answer is noted to the model, then stopped with ErrorLoopError (${streaming ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await new ScriptedModelServer({
        script: () => ({
          shellRuns: [{ commands: ['npm test'], results: [{ stderr: 'FAIL src/cart.test.ts: expected 3, got 2', exitCode: 1 }] }],
          text: 'Let me run the tests once more.',
        }),
      }).start();
      const { breaker, events } = recordingBreaker();
      const threadId = `lc-hosted-shell-${streaming}`;

      const { answers, error } = await askRepeatedly(shellAgent(server, breaker, streaming), threadId);

      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.deepEqual(answers, Array(4).fill('Let me run the tests once more.'));
      // Each run has happened by the time it is judged: the block, too, reaches the model as a note.
      assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
      assert.equal((await breaker.snapshot(threadId)).counters.toolCalls, 5);
      assert.equal(server.requests.length, 5, 'no model request after the stop');
      assert.deepEqual(server.requests[0]!.body['tools'], [{ type: 'shell', environment: { type: 'container_auto' } }]);
      assert.ok(
        server.requests.every((r) => (r.body.stream === true) === streaming),
        streaming ? 'each answer was streamed' : 'no answer was streamed',
      );
      assert.doesNotMatch(JSON.stringify(server.requests[2]!.body.messages), /AgentBreaker/);
      assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] \\"shell\\" has failed 2 times/);
    });
  }

  test('a session that makes progress (new commands, each exiting 0) runs to the end untouched, each run recorded', async () => {
    const commands = ['git status', 'npm test -- cart', 'sed -n 1,40p src/cart.ts', 'npm test', 'npm run lint', 'git diff', 'npm run build', 'git log -1'];
    await using server = await new ScriptedModelServer({
      script: (_request, index) => ({ shellRuns: [{ commands: [commands[index]!], results: [{ stdout: `output of ${commands[index]}` }] }], text: 'Next.' }),
    }).start();
    const { breaker, events } = recordingBreaker();

    const { answers, error } = await askRepeatedly(shellAgent(server, breaker, false), 'lc-hosted-shell-progress');

    assert.equal(error, undefined);
    assert.deepEqual(answers, Array(8).fill('Next.'));
    assert.deepEqual(escalations(events), []);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    assert.equal((await breaker.snapshot('lc-hosted-shell-progress')).counters.toolCalls, commands.length);
  });
});

describe('governorMiddleware: a sub-agent as a tool, in the same session', () => {
  /** How the researcher shares the lead's session. */
  type Sharing = 'the same middleware, with a sessionId' | 'the same middleware, on the thread it inherits' | 'a middleware of its own, handed the thread';

  /**
   * A lead that delegates the same lookup to its researcher (an agent run
   * inside a tool) with a task worded anew each time; the researcher's one
   * tool fails with an outage every time. The researcher is read-only (a
   * lookup), so its answers change nothing that would end the outage's evidence.
   */
  async function delegatedOutage(sharing: Sharing) {
    await using server = await delegatedOutageServer();
    const sessionId = `lc-delegated-${DELEGATED_TASKS.length}-${sharing}`;
    const { breaker, events } = recordingBreaker();
    const middleware = governorMiddleware(breaker, sharing === 'the same middleware, with a sessionId' ? { sessionId } : {});
    let lookups = 0;
    const getInvoice = tool(
      async () => {
        lookups += 1;
        throw new Error('503 Service Unavailable: upstream billing-api is down');
      },
      { name: 'get_invoice', description: 'Reads an invoice', schema: z.object({ id: z.string() }) },
    );
    const researcher = createAgent({
      model: chatModel(server),
      tools: [getInvoice],
      middleware: [sharing === 'a middleware of its own, handed the thread' ? governorMiddleware(breaker) : middleware],
    });
    const lookupInvoice = tool(
      async ({ task }, config: { configurable?: { thread_id?: unknown } }) => {
        const handed = sharing === 'a middleware of its own, handed the thread' ? { configurable: { thread_id: config.configurable?.thread_id } } : {};
        const { messages } = await researcher.invoke({ messages: [{ role: 'user', content: task }] }, { ...handed, recursionLimit: 20 });
        return String(messages.at(-1)?.content ?? '');
      },
      { name: 'lookup_invoice', description: 'Researches a task', schema: z.object({ task: z.string() }) },
    );
    const lead = createAgent({ model: chatModel(server), tools: [lookupInvoice], middleware: [middleware] });
    const config =
      sharing === 'the same middleware, with a sessionId' ? { recursionLimit: 30 } : { configurable: { thread_id: sessionId }, recursionLimit: 30 };
    const error = await rejection(lead.invoke({ messages: [{ role: 'user', content: 'What does invoice inv-9 come to?' }] }, config));
    return { error, events, lookups, counters: (await breaker.snapshot(sessionId)).counters };
  }

  for (const sharing of [
    'the same middleware, with a sessionId',
    'the same middleware, on the thread it inherits',
    'a middleware of its own, handed the thread',
  ] as const) {
    test(`${sharing}: the task the lead wrote is no user turn, and the outage across delegations is caught`, async () => {
      assertDelegatedOutageCaught(await delegatedOutage(sharing));
    });
  }
});

describe('governorMiddleware: a sub-agent between the rounds of a lead whose context compounds', () => {
  for (const sharing of ['the same middleware, on the thread it inherits', 'a middleware of its own, handed the thread'] as const) {
    test(`${sharing}: its small prompts do not restart the lead's growth, token drift trips at the lead's 4th round as without it`, async () => {
      await using server = await compoundingLeadServer();
      const sessionId = `lc-compounding-lead-${sharing}`;
      const { breaker, events } = recordingBreaker();
      const middleware = governorMiddleware(breaker);
      const researcher = createAgent({
        model: chatModel(server),
        tools: [],
        middleware: [sharing === 'a middleware of its own, handed the thread' ? governorMiddleware(breaker) : middleware],
      });
      let delegations = 0;
      const research = tool(
        async ({ task }, config: { configurable?: { thread_id?: unknown } }) => {
          delegations += 1;
          const handed = sharing === 'a middleware of its own, handed the thread' ? { configurable: { thread_id: config.configurable?.thread_id } } : {};
          const { messages } = await researcher.invoke({ messages: [{ role: 'user', content: task }] }, handed);
          return String(messages.at(-1)?.content ?? '');
        },
        { name: 'research', description: 'Researches a task', schema: z.object({ task: z.string() }) },
      );
      const lead = createAgent({ model: chatModel(server), tools: [research], middleware: [middleware] });
      const error = await rejection(
        lead.invoke(
          { messages: [{ role: 'user', content: 'Prepare the weekly operations brief.' }] },
          { configurable: { thread_id: sessionId }, recursionLimit: 30 },
        ),
      );
      await assertLeadDriftCaught(error, events, breaker, sessionId, delegations);
    });
  }
});

describe('governorMiddleware: a call paused for human approval', () => {
  /**
   * How the call is paused, and whether the run resumes on the same agent or,
   * as a server that builds its agent per request does, on a new one (with
   * its own middleware) over the same breaker and checkpointer.
   */
  const cases = [
    { paused: 'by interrupt() inside the tool', resumedOn: 'the same agent' },
    { paused: 'by interrupt() inside the tool', resumedOn: 'a new agent per request' },
    { paused: 'by humanInTheLoopMiddleware before the governor', resumedOn: 'a new agent per request' },
  ] as const;
  for (const { paused, resumedOn } of cases) {
    test(`paused ${paused}, resumed on ${resumedOn}: the call is judged once, so the 3rd repeat runs steered, then the block, then the stop`, async () => {
      await using server = await loopingModel('restart_service', { service: 'api' });
      const { breaker, events } = recordingBreaker();
      const checkpointer = new MemorySaver();
      const inTool = paused === 'by interrupt() inside the tool';
      let runs = 0;
      const restart = tool(
        async ({ service }) => {
          if (inTool) interrupt({ question: `Restart ${service}?` });
          runs += 1;
          return `${service} restarted; still unhealthy`;
        },
        { name: 'restart_service', description: 'Restarts a service', schema: z.object({ service: z.string() }) },
      );
      const build = () =>
        createAgent({
          model: chatModel(server),
          tools: [restart],
          checkpointer,
          middleware: inTool
            ? [governorMiddleware(breaker)]
            : [humanInTheLoopMiddleware({ interruptOn: { restart_service: true } }), governorMiddleware(breaker)],
        });
      const first = build();
      const agent = () => (resumedOn === 'the same agent' ? first : build());
      const config = { configurable: { thread_id: `lc-approval-${paused}-${resumedOn}` }, recursionLimit: 100 };
      const approve = new Command({ resume: inTool ? 'approved' : { decisions: [{ type: 'approve' }] } });

      const error = await rejection(
        (async () => {
          let result = await first.invoke({ messages: [{ role: 'user', content: 'The api is unhealthy: restart it.' }] }, config);
          for (let approvals = 0; approvals < 8; approvals += 1) {
            assert.equal(result.__interrupt__?.length, 1, 'paused for approval');
            result = await agent().invoke(approve, config);
          }
        })(),
      );

      assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
      assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
      assert.equal(runs, 3, 'the approved 3rd call ran');
      assert.match(
        lastToolResult(server.requests[3]),
        /^api restarted; still unhealthy\n\n\[AgentBreaker\] .*"restart_service" 3 times/s,
        'the 3rd result carries the steer',
      );
      assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
      assert.equal((await breaker.snapshot(config.configurable.thread_id)).counters.toolCalls, 3);
    });
  }
});

describe('governorMiddleware: a run cancelled while a tool runs', () => {
  test('the call is no failure: three cancellations are no error loop, and the next run calls the tool as if none had been', async () => {
    await using server = await new ScriptedModelServer({
      script: (request) =>
        request.body.messages.at(-1)?.role === 'tool' ? { text: 'Exported.' } : { toolCalls: [{ name: 'export_report', arguments: { id: 'r-1' } }] },
    }).start();
    const { breaker, events } = recordingBreaker();
    const sessionId = 'lc-cancelled';
    let cancel: (() => void) | undefined;
    let exported = 0;
    const exportReport = tool(
      async ({ id }, config: { signal?: AbortSignal }) => {
        if (cancel === undefined) {
          exported += 1;
          return `report ${id} exported`;
        }
        // A slow export, which honours the run's signal; the caller cancels the run once it is under way.
        const { signal } = config;
        const aborted = new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
        cancel();
        return aborted;
      },
      { name: 'export_report', description: 'Exports a report', schema: z.object({ id: z.string() }) },
    );
    const agent = createAgent({ model: chatModel(server), tools: [exportReport], middleware: [governorMiddleware(breaker)] });
    const ask = (signal?: AbortSignal) =>
      agent.invoke({ messages: [{ role: 'user', content: 'Export report r-1.' }] }, { configurable: { thread_id: sessionId }, ...(signal ? { signal } : {}) });

    for (let i = 0; i < 3; i += 1) {
      const controller = new AbortController();
      cancel = () => controller.abort(new Error('cancelled by the user'));
      await assert.rejects(ask(controller.signal), /cancelled by the user/);
    }
    cancel = undefined;
    const { messages } = await ask();

    assert.equal(messages.at(-1)?.content, 'Exported.');
    assert.equal(exported, 1);
    assert.equal(lastToolResult(server.requests.at(-1)), 'report r-1 exported', 'the call ran, unsteered');
    assert.deepEqual(escalations(events), []);
    assert.equal((await breaker.snapshot(sessionId)).counters.toolCalls, 1, 'only the call that finished is recorded');
  });
});

describe('governorMiddleware: a sub-agent run inside a tool named in delegation.subAgentTools', () => {
  const TASKS = [
    'Find the 2024 revenue of ACME Corp.',
    "Look up ACME Corp's revenue for 2024.",
    "What was ACME Corp's 2024 revenue? Check the filings.",
    'Search the filings again for the ACME Corp 2024 revenue.',
    'ACME Corp 2024 revenue: try once more.',
    'Revenue of ACME Corp in 2024, please.',
  ];
  const ANSWER = 'I could not find the 2024 revenue of ACME Corp in the available filings.';

  for (const named of [true, false]) {
    test(`${named ? 'named' : 'not named'}: a reworded re-ask with the same answer ${named ? 'is a delegation loop' : 'is a plain tool call, never a loop'}`, async () => {
      // The lead re-asks its researcher the same task worded anew each round; the researcher (no tools) answers the same every time.
      await using server = await new ScriptedModelServer({
        script: (request) => {
          if (request.body.tools === undefined) return { text: ANSWER };
          const asked = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
          return asked < TASKS.length ? { toolCalls: [{ name: 'researcher', arguments: { task: TASKS[asked] } }] } : { text: 'No revenue found.' };
        },
      }).start();
      const { breaker, events } = recordingBreaker(named ? { delegation: { subAgentTools: ['researcher'] } } : {});
      const researcherAgent = createAgent({ model: chatModel(server), tools: [], middleware: [governorMiddleware(breaker)] });
      let researched = 0;
      const researcher = tool(
        async ({ task }, config: { configurable?: { thread_id?: unknown } }) => {
          researched += 1;
          const { messages } = await researcherAgent.invoke(
            { messages: [{ role: 'user', content: task }] },
            { configurable: { thread_id: config.configurable?.thread_id } },
          );
          return String(messages.at(-1)?.content ?? '');
        },
        { name: 'researcher', description: 'Researches a task', schema: z.object({ task: z.string() }) },
      );
      const lead = createAgent({ model: chatModel(server), tools: [researcher], middleware: [governorMiddleware(breaker)] });

      const ended = await lead
        .invoke(
          { messages: [{ role: 'user', content: 'What was ACME Corp revenue in 2024?' }] },
          { configurable: { thread_id: `lc-sub-agent-tools-${named}` }, recursionLimit: 100 },
        )
        .then(
          ({ messages }) => messages.at(-1)?.content,
          (error: unknown) => error,
        );

      if (!named) {
        assert.equal(ended, 'No revenue found.', 'every reworded ask ran');
        assert.equal(researched, TASKS.length);
        assert.deepEqual(escalations(events), []);
        return;
      }
      assert.ok(DelegationLoopError.isInstance(ended), `expected DelegationLoopError, got ${String(ended)}`);
      assert.deepEqual(escalations(events), ['delegation_loop:steer', 'delegation_loop:block', 'delegation_loop:stop']);
      assert.equal(researched, 2, 'the 3rd ask was blocked and the 4th stopped before the researcher ran');
      const leadRequests = server.requests.filter((r) => r.body.tools !== undefined);
      assert.match(JSON.stringify(leadRequests[2]!.body.messages[0]), /Sub-agent \\"researcher\\" gave the same answer/, 'the lead was steered');
      assert.match(
        lastToolResult(leadRequests[3]),
        /^\[AgentBreaker\] This call was NOT executed\. You have given sub-agent "researcher" a similar task 3 times/,
      );
    });
  }
});

describe("governorMiddleware next to LangChain's own tool-error middleware (handleToolErrors: false)", () => {
  /** `fetch_page` fails its first `failures` runs, then answers; how often it ran. */
  function flakyFetch(failures: number) {
    let attempts = 0;
    const fetchPage = tool(
      async () => {
        attempts += 1;
        if (attempts <= failures) throw new Error('ECONNRESET while fetching');
        return 'page body';
      },
      { name: 'fetch_page', description: 'Fetches a page', schema: z.object({ url: z.string() }) },
    );
    return { fetchPage, attempts: () => attempts };
  }

  const oneFetch = () =>
    new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'fetch_page', arguments: { url: 'https://example.com' } }] }, { text: 'Fetched.' }] }).start();

  test('toolRetryMiddleware before it retries a flaky tool, as without the breaker; each failed attempt is recorded', async () => {
    await using server = await oneFetch();
    const { breaker } = recordingBreaker();
    const { fetchPage, attempts } = flakyFetch(2);
    const retry = toolRetryMiddleware({ maxRetries: 3, initialDelayMs: 0, jitter: false });
    const agent = createAgent({ model: chatModel(server), tools: [fetchPage], middleware: [retry, governorMiddleware(breaker, { handleToolErrors: false })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Fetch it.' }] }, { configurable: { thread_id: 'lc-retry' } });
    assert.equal(attempts(), 3);
    const answer = result.messages.find((m: BaseMessage) => ToolMessage.isInstance(m));
    assert.equal(answer?.content, 'page body');
    assert.equal((await breaker.snapshot('lc-retry')).counters.toolCalls, 3, 'two failures and the answer');
  });

  test("an error LangChain's middleware throws on purpose (onFailure: 'error') ends the run, as without the breaker", async () => {
    await using server = await oneFetch();
    const { breaker } = recordingBreaker();
    const { fetchPage } = flakyFetch(10);
    const retry = toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 0, jitter: false, onFailure: 'error' });
    const agent = createAgent({ model: chatModel(server), tools: [fetchPage], middleware: [retry, governorMiddleware(breaker, { handleToolErrors: false })] });
    await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: 'Fetch it.' }] }), /ECONNRESET while fetching/);
    assert.throws(() => governorMiddleware(breaker, { handleToolErrors: 'no' as never }), { name: 'InvalidOptionError', option: 'handleToolErrors' });
  });
});

describe('governorMiddleware: a model call retried from above it', () => {
  test('a steer waiting for the model call still goes with the retry modelRetryMiddleware makes of a call that failed', async () => {
    const same = 'I cannot find that order. Please check the number.';
    await using server = await new ScriptedModelServer({
      script: [{ text: same }, { text: same }, { text: same }, { error: { status: 503 } }, { text: 'Let me try a different approach.' }],
    }).start();
    const { breaker, events } = recordingBreaker();
    const agent = createAgent({
      model: chatModel(server),
      tools: [],
      checkpointer: new MemorySaver(),
      // Retries outside the breaker, as the README places tool-error middleware.
      middleware: [modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 1, backoffFactor: 1, jitter: false }), governorMiddleware(breaker)],
    });
    for (const text of ['Where is order 12?', 'ok', 'ok', 'ok'])
      await agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: 'lc-retried' } });
    assert.ok(escalations(events).includes('text_repetition:steer'), escalations(events).join(' '));
    assert.equal(server.requests.length, 5);
    const carries = (index: number) => /\[AgentBreaker\]/.test(JSON.stringify(server.requests[index]!.body.messages));
    assert.equal(carries(3), true, 'the attempt that failed carried the steer');
    assert.equal(carries(4), true, 'the retry the model answered carries it too');
  });
});
