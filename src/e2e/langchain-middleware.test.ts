/**
 * The AgentBreaker as LangChain v1 middleware (`agent-governor/langchain`), with
 * LangChain's real `ChatOpenAI` over real HTTP against the scripted stand-in
 * model. What the model received is read from the recorded requests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { AgentBreaker, BreakerOpenError, BudgetExceededError, ErrorLoopError, RagFixationError, ToolSpiralError, type BreakerEventRecord } from '../index.ts';
import { governorMiddleware } from '../langchain/index.ts';
import { CODE_LOOP, MCP_LOOP, PAGE_LOOP, SEARCH_LOOP_ANSWER, searchLoopServer } from '../test-support/hosted-loops.ts';
import { ScriptedModelServer, type ScriptFunction } from '../testing/index.ts';
import { escalations, lastToolResult, spiralServer } from './recorded-run.ts';

const PROMPT = 'Is build b-17 done?';

function chatModel(server: ScriptedModelServer): ChatOpenAI {
  return new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
}

function recordingBreaker(options: ConstructorParameters<typeof AgentBreaker>[0] = {}) {
  const breaker = new AgentBreaker({ telemetry: false, ...options });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events };
}

/** A tool the Responses API runs itself, as ChatOpenAI takes it. */
type HostedTool = NonNullable<Parameters<typeof createAgent>[0]['tools']>[number];

/**
 * An agent on the Responses API with one tool the API runs itself (its web
 * search unless told), governed by `breaker`; `include` asks for more of what
 * the tool did (a code run's outputs).
 */
function hostedToolAgent(server: { modelId: string; baseURL: string }, breaker: AgentBreaker, tool: HostedTool = { type: 'web_search' }, include?: string[]) {
  const model = new ChatOpenAI({
    model: server.modelId,
    apiKey: 'test-key',
    maxRetries: 0,
    useResponsesApi: true,
    configuration: { baseURL: server.baseURL },
    ...(include === undefined ? {} : { modelKwargs: { include } }),
  });
  return createAgent({ model, tools: [tool], middleware: [governorMiddleware(breaker)] });
}

/** What askUntilStopped needs of an agent. */
interface ThreadAgent {
  invoke(input: { messages: BaseMessage[] }, config: { configurable: { thread_id: string } }): Promise<{ messages: BaseMessage[] }>;
}

/** Asks `first`, then "Keep looking." up to 8 times in one thread; returns what ended the run (it must end). */
function askUntilStopped(agent: ThreadAgent, first: string, threadId: string, answers: string[]): Promise<unknown> {
  return (async () => {
    let messages: BaseMessage[] = [];
    for (let i = 0; i < 8; i += 1) {
      messages = [...messages, new HumanMessage(i === 0 ? first : 'Keep looking.')];
      const result = await agent.invoke({ messages }, { configurable: { thread_id: threadId } });
      messages = result.messages;
      answers.push(String(messages.at(-1)?.text));
    }
  })().then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

function checkBuild(statuses: (run: number) => string) {
  const executions: string[] = [];
  const check = tool(
    async ({ buildId }) => {
      const status = statuses(executions.length);
      executions.push(buildId);
      return `build ${buildId}: ${status}`;
    },
    { name: 'check_build', description: 'Status of a CI build', schema: z.object({ buildId: z.string() }) },
  );
  return { check, executions };
}

/** Checks build b-17 on every turn until the user says thanks. */
const checkUntilThanked: ScriptFunction = (request) => {
  const user = String(request.body.messages.findLast((m) => m.role === 'user')?.content ?? '');
  return user.startsWith('Thanks') ? { text: 'You are welcome.' } : { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] };
};

describe('governorMiddleware on createAgent with ChatOpenAI', () => {
  test('a tool-call spiral is steered, then blocked, then stopped with ToolSpiralError before the tool runs again', async () => {
    await using server = await spiralServer();
    const { breaker, events } = recordingBreaker();
    const { check, executions } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)] });

    const error = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, { configurable: { thread_id: 'lc-spiral' } }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.equal(error.sessionId, 'lc-spiral', 'the session is the LangGraph thread');
    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17'], 'the blocked and the stopped call did not run');
    assert.equal(server.requests.length, 5, 'no model request after the stop');
    assert.equal(lastToolResult(server.requests[2]), 'build b-17: running');
    assert.match(lastToolResult(server.requests[3]), /^build b-17: running\n\n\[AgentBreaker\] .*"check_build" 3 times/s, 'the 3rd result carries the steer');
    const blocked = lastToolResult(server.requests[4]);
    assert.match(blocked, /^\[AgentBreaker\] This call was NOT executed\./);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal((await breaker.snapshot('lc-spiral')).state, 'OPEN');
  });

  test('a stopped thread is refused while the breaker is open, and runs again after a reset', async () => {
    await using server = await new ScriptedModelServer({ script: checkUntilThanked }).start();
    const { breaker } = recordingBreaker();
    const { check } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)] });
    const config = { configurable: { thread_id: 'lc-reopen' } };

    await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, config), (e) => ToolSpiralError.isInstance(e));
    const requests = server.requests.length;
    await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: 'Thanks' }] }, config), (e) => BreakerOpenError.isInstance(e));
    assert.equal(server.requests.length, requests, 'an open breaker refuses the model call');

    await breaker.reset('lc-reopen');
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Thanks' }] }, config);
    assert.equal(result.messages.at(-1)?.content, 'You are welcome.');
    assert.equal((await breaker.snapshot('lc-reopen')).state, 'CLOSED', 'the probe round closed the breaker');
  });

  test('with a checkpointer, the thread a stop left with an unanswered tool call still reaches the model well formed', async () => {
    await using server = await new ScriptedModelServer({ script: checkUntilThanked }).start();
    const { breaker } = recordingBreaker();
    const { check } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'lc-checkpointed' } };
    await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, config), (e) => ToolSpiralError.isInstance(e));
    await breaker.reset('lc-checkpointed');

    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Thanks' }] }, config);

    assert.equal(result.messages.at(-1)?.content, 'You are welcome.');
    const sent = server.requests.at(-1)!.body.messages;
    // Every tool call the model is shown is answered, before the next message of another kind (as the Chat Completions API requires).
    sent.forEach((message, i) => {
      const ids = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((call) => (call as { id: string }).id);
      const answered = new Set<unknown>();
      for (let j = i + 1; j < sent.length && sent[j]!.role === 'tool'; j++) answered.add(sent[j]!.tool_call_id);
      for (const id of ids) assert.ok(answered.has(id), `the call ${id} of message ${i} is answered`);
    });
    assert.match(JSON.stringify(sent), /was not run: the run ended before it/);
  });

  test('streaming: the spiral is stopped with ToolSpiralError out of agent.stream', async () => {
    await using server = await spiralServer();
    const { breaker } = recordingBreaker();
    const { check, executions } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker, { sessionId: 'lc-stream' })] });

    const updates: unknown[] = [];
    const error = await (async () => {
      for await (const update of await agent.stream({ messages: [{ role: 'user', content: PROMPT }] }, { streamMode: 'updates' })) updates.push(update);
    })().then(
      () => assert.fail('the breaker must end the stream'),
      (e: unknown) => e,
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.ok(updates.length > 0, 'the steps before the stop were streamed');
    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17']);
    assert.equal(server.requests.length, 5);
  });

  test('reading different files and paging through new data runs to the end untouched', async () => {
    const files = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'];
    const script: ScriptFunction = (_request, index) => {
      if (index < files.length)
        return { toolCalls: [{ name: 'read_file', arguments: { path: files[index] } }], usage: { promptTokens: 300, completionTokens: 20 } };
      if (index < files.length + 3)
        return { toolCalls: [{ name: 'list_orders', arguments: { page: index - files.length + 1 } }], usage: { promptTokens: 300, completionTokens: 20 } };
      return { text: 'Four files read, three pages listed.', usage: { promptTokens: 300, completionTokens: 20 } };
    };
    await using server = await new ScriptedModelServer({ script }).start();
    const { breaker, events } = recordingBreaker();
    const ran: string[] = [];
    const readFile = tool(
      async ({ path }) => {
        ran.push(path);
        return `// ${path}\nexport const value = ${JSON.stringify(path)};`;
      },
      { name: 'read_file', description: 'Read a file', schema: z.object({ path: z.string() }) },
    );
    const listOrders = tool(
      async ({ page }) => {
        ran.push(`page ${page}`);
        return JSON.stringify({ page, orders: [`o-${page * 2 - 1}`, `o-${page * 2}`], more: page < 3 });
      },
      { name: 'list_orders', description: 'One page of orders', schema: z.object({ page: z.number().int() }) },
    );
    const agent = createAgent({
      model: chatModel(server),
      tools: [readFile, listOrders],
      middleware: [governorMiddleware(breaker, { sessionId: 'lc-productive' })],
    });

    // The middleware's beforeModel/afterModel nodes are graph steps too: 8 rounds need more than the default 25.
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Read the sources, then list the orders.' }] }, { recursionLimit: 60 });

    assert.equal(result.messages.at(-1)?.content, 'Four files read, three pages listed.');
    assert.deepEqual(ran, [...files, 'page 1', 'page 2', 'page 3']);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    assert.deepEqual(escalations(events), []);
    const snapshot = await breaker.snapshot('lc-productive');
    assert.equal(snapshot.state, 'CLOSED');
    assert.equal(snapshot.counters.modelCalls, 8);
    assert.equal(snapshot.counters.toolCalls, 7);
    assert.equal(snapshot.budget.tokens, 8 * 320, 'every round’s reported usage reached the budget');
  });

  test('usage reaches the budget: the wrap-up steer reaches the model, then the run stops with BudgetExceededError', async () => {
    const script: ScriptFunction = (_request, index) => ({
      toolCalls: [{ name: 'check_build', arguments: { buildId: `b-${index}` } }],
      usage: { promptTokens: 400, completionTokens: 100 },
    });
    await using server = await new ScriptedModelServer({ script }).start();
    const { breaker } = recordingBreaker({ budget: { maxTokens: 1200 } });
    const { check, executions } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker, { sessionId: 'lc-budget' })] });

    const error = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }).then(
      () => assert.fail('the budget must end the run'),
      (e: unknown) => e,
    );

    assert.ok(BudgetExceededError.isInstance(error), `expected BudgetExceededError, got ${String(error)}`);
    assert.equal(error.sessionId, 'lc-budget', 'the sessionId option wins');
    const wrapUp = server.requests.findIndex((r) => r.body.messages[0]?.role === 'system' && String(r.body.messages[0].content).includes('[AgentBreaker]'));
    assert.ok(wrapUp > 0, 'a later request carries the wrap-up message in its system message');
    assert.equal(server.requests.length, wrapUp + 1, 'no model request after the wrap-up round');
    assert.ok(executions.length <= wrapUp);
  });

  test('without a sessionId or thread_id each invoke is a session of its own', async () => {
    // Two identical status checks, then an answer: per invoke.
    const script: ScriptFunction = (request) =>
      request.body.messages.filter((m) => m.role === 'tool').length < 2
        ? { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] }
        : { text: 'Still running.' };
    await using server = await new ScriptedModelServer({ script }).start();
    const { events, breaker } = recordingBreaker();
    const { check, executions } = checkBuild(() => 'running');
    const agent = createAgent({ model: chatModel(server), tools: [check], middleware: [governorMiddleware(breaker)] });

    const first = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] });
    const second = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] });

    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17', 'b-17'], 'four identical calls ran');
    assert.deepEqual(escalations(events), [], 'split over two sessions, they are not a spiral');
    const ids = [first.governorSessionId, second.governorSessionId];
    assert.ok(
      ids.every((id) => typeof id === 'string' && id.length > 0),
      'each invoke got a session id',
    );
    assert.notEqual(ids[0], ids[1]);
    assert.equal((await breaker.snapshot(String(ids[0]))).counters.toolCalls, 2);
  });

  test("searches the API ran itself (the Responses API's hosted web search) are judged: the same search over and over is stopped with RagFixationError", async () => {
    await using server = await searchLoopServer();
    const { breaker } = recordingBreaker();
    const agent = hostedToolAgent(server, breaker);
    const answers: string[] = [];
    const error = await askUntilStopped(agent, 'Find me the cheapest flight to Oslo in March.', 'lc-hosted', answers);

    assert.ok(RagFixationError.isInstance(error), `expected RagFixationError, got ${String(error)}`);
    assert.deepEqual(answers, [SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER]);
    assert.equal((await breaker.snapshot('lc-hosted')).counters.retrievals, 4);
    assert.equal(server.requests[0]!.path, '/v1/responses');
  });

  test('a page the API opened itself again and again (its web search opening a page) is noted, then stopped with ToolSpiralError', async () => {
    await using server = await PAGE_LOOP.start();
    const { breaker } = recordingBreaker();
    const agent = hostedToolAgent(server, breaker);
    const answers: string[] = [];
    const error = await askUntilStopped(agent, 'What does a flight to Oslo cost in March?', 'lc-pages', answers);
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(PAGE_LOOP.answer));
    assert.equal((await breaker.snapshot('lc-pages')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] You have called \\"open_page\\" 3 times/);
  });

  test('code the API ran itself that fails the same way again and again (its code interpreter) is noted, then stopped with ErrorLoopError', async () => {
    await using server = await CODE_LOOP.start();
    const { breaker } = recordingBreaker();
    const agent = hostedToolAgent(server, breaker, { type: 'code_interpreter', container: { type: 'auto' } }, ['code_interpreter_call.outputs']);
    const answers: string[] = [];
    const error = await askUntilStopped(agent, 'What was the total revenue in sales.csv?', 'lc-code', answers);
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(CODE_LOOP.answer));
    assert.equal((await breaker.snapshot('lc-code')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] \\"code_interpreter\\" has failed 2 times/);
  });

  test('a remote MCP tool the API called again and again for the same output is noted, then stopped with ToolSpiralError', async () => {
    await using server = await MCP_LOOP.start();
    const { breaker } = recordingBreaker();
    const answers: string[] = [];
    const error = await askUntilStopped(
      hostedToolAgent(server, breaker, { type: 'mcp', server_label: 'tracker', server_url: 'https://mcp.tracker.example/sse', require_approval: 'never' }),
      'What is the state of ENG-42?',
      'lc-mcp',
      answers,
    );
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(MCP_LOOP.answer));
    assert.equal((await breaker.snapshot('lc-mcp')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] You have called \\"get_issue\\" 3 times/);
  });

  test('four alike hosted searches in one answer are steered once; the next answer that searches again is stopped', async () => {
    await using server = await searchLoopServer({ perAnswer: 4 });
    const { breaker } = recordingBreaker();
    const agent = hostedToolAgent(server, breaker);
    const config = { configurable: { thread_id: 'lc-hosted-one-answer' } };
    const first = await agent.invoke({ messages: [new HumanMessage('Find me the cheapest flight to Oslo in March.')] }, config);
    assert.equal(String(first.messages.at(-1)?.text), SEARCH_LOOP_ANSWER);
    const error = await agent.invoke({ messages: [...first.messages, new HumanMessage('Keep looking.')] }, config).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(RagFixationError.isInstance(error), `expected RagFixationError, got ${String(error)}`);
    // Every search that ran is counted, those of the stopped answer too.
    assert.equal((await breaker.snapshot('lc-hosted-one-answer')).counters.retrievals, 8);
    assert.equal(JSON.stringify(server.requests[1]!.body.messages).match(/\[AgentBreaker\]/g)?.length, 1, 'one steer, in the second request');
  });

  test('a bad breaker or sessionId is a typed error naming the option', () => {
    assert.throws(() => governorMiddleware({} as never), { name: 'InvalidOptionError', option: 'breaker' });
    assert.throws(() => governorMiddleware(new AgentBreaker({ telemetry: false }), { sessionId: '' }), { name: 'InvalidOptionError', option: 'sessionId' });
  });
});
