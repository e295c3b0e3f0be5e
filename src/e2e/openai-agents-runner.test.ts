/**
 * The AgentBreaker on OpenAI Agents SDK runs (`agent-governor/openai-agents`),
 * with the SDK's own OpenAI provider (in Chat Completions mode, and in its
 * default Responses mode for the spiral) over real HTTP against the scripted
 * stand-in model. What the model received is read from
 * the recorded requests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Agent,
  MemorySession,
  OpenAIProvider,
  applyPatchTool,
  codeInterpreterTool,
  handoff,
  hostedMcpTool,
  shellTool,
  tool,
  webSearchTool,
  type Editor,
  type Shell,
} from '@openai/agents';
import { z } from 'zod';
import {
  AgentBreaker,
  BudgetExceededError,
  ErrorLoopError,
  RagFixationError,
  ToolSpiralError,
  type AgentBreakerOptions,
  type BreakerEventRecord,
} from '../index.ts';
import { breakerForOpenAIAgents } from '../openai-agents/index.ts';
import { CODE_LOOP, MCP_LOOP, PAGE_LOOP, SEARCH_LOOP_ANSWER, searchLoopServer } from '../test-support/hosted-loops.ts';
import { ScriptedModelServer, type ScriptFunction } from '../testing/index.ts';
import { escalations, lastToolResult, spiralServer } from './recorded-run.ts';

const PROMPT = 'Is build b-17 done?';

function governed(server: ScriptedModelServer, options: AgentBreakerOptions = {}, sessionId?: string, useResponses = false) {
  const breaker = new AgentBreaker({ telemetry: false, ...options });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses });
  const door = breakerForOpenAIAgents(breaker, { runConfig: { modelProvider, tracingDisabled: true }, ...(sessionId ? { sessionId } : {}) });
  return { breaker, events, door };
}

/**
 * Asks `first`, then "Keep looking." up to 8 times in one session (streamed
 * or not); returns the answers and what ended the run (it must end).
 */
async function askUntilStopped(
  door: ReturnType<typeof governed>['door'],
  agent: Agent,
  session: MemorySession,
  first: string,
  stream = false,
): Promise<{ answers: unknown[]; error: unknown }> {
  const answers: unknown[] = [];
  const error = await (async () => {
    for (let i = 0; i < 8; i += 1) {
      const prompt = i === 0 ? first : 'Keep looking.';
      if (stream) {
        const result = await door.run(agent, prompt, { session, stream: true });
        for await (const _event of result) {
          // drained only to drive the run
        }
        await result.completed;
        answers.push(result.finalOutput);
      } else {
        answers.push((await door.run(agent, prompt, { session })).finalOutput);
      }
    }
  })().then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
  return { answers, error };
}

function checkBuild(statuses: (run: number) => string) {
  const executions: string[] = [];
  const check = tool({
    name: 'check_build',
    description: 'Status of a CI build',
    parameters: z.object({ buildId: z.string() }),
    execute: async ({ buildId }) => {
      const status = statuses(executions.length);
      executions.push(buildId);
      return `build ${buildId}: ${status}`;
    },
  });
  return { check, executions };
}

describe("breakerForOpenAIAgents over the SDK's OpenAI provider", () => {
  for (const useResponses of [false, true]) {
    test(`a tool-call spiral is steered, then blocked, then stopped with ToolSpiralError before the tool runs again (${useResponses ? 'Responses' : 'Chat Completions'} model)`, async () => {
      await using server = await spiralServer();
      const { breaker, events, door } = governed(server, {}, undefined, useResponses);
      const { check, executions } = checkBuild(() => 'running');
      const agent = new Agent({ name: 'ops', instructions: 'Answer about CI builds.', model: server.modelId, tools: door.tools([check]) });

      const error = await door.run(agent, PROMPT, { session: new MemorySession({ sessionId: 'oa-spiral' }), maxTurns: 30 }).then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );

      assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
      assert.equal(error.sessionId, 'oa-spiral', "the breaker session is the SDK session's id");
      assert.deepEqual(executions, ['b-17', 'b-17', 'b-17'], 'the blocked and the stopped call did not run');
      assert.equal(server.requests.length, 5, 'no model request after the stop');
      assert.equal(lastToolResult(server.requests[2]), 'build b-17: running');
      assert.match(lastToolResult(server.requests[3]), /^build b-17: running\n\n\[AgentBreaker\] .*"check_build" 3 times/s, 'the 3rd result carries the steer');
      assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
      assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
      assert.equal((await breaker.snapshot('oa-spiral')).state, 'OPEN');
      assert.equal(server.requests[0]!.path, useResponses ? '/v1/responses' : '/v1/chat/completions');
    });
  }

  test('streaming: the spiral is stopped with ToolSpiralError, from the stream and from completed', async () => {
    await using server = await spiralServer();
    const { door } = governed(server, {}, 'oa-stream');
    const { check, executions } = checkBuild(() => 'running');
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

    const result = await door.run(agent, PROMPT, { stream: true, maxTurns: 30 });
    const error = await (async () => {
      for await (const _event of result) {
        // drained only to drive the run
      }
      await result.completed;
      return result.error;
    })().then(
      (e) => e,
      (e: unknown) => e,
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17']);
    assert.equal(server.requests.length, 5);
    assert.ok(
      server.requests.every((r) => r.body.stream === true),
      'the model was streamed',
    );
  });

  test('paging through new data runs to the end untouched, each turn recorded with its usage', async () => {
    const pages = 6;
    await using server = await new ScriptedModelServer({
      script: (_request, index) =>
        index < pages
          ? {
              toolCalls: [{ name: 'list_orders', arguments: { customer: 'c-9', page: index + 1 } }],
              usage: { promptTokens: 100 + index, completionTokens: 10 },
            }
          : { text: `Customer c-9 has ${pages * 2} orders.`, usage: { promptTokens: 200, completionTokens: 10 } },
    }).start();
    const { breaker, events, door } = governed(server);
    const pagesRead: number[] = [];
    const listOrders = tool({
      name: 'list_orders',
      description: 'One page of orders',
      parameters: z.object({ customer: z.string(), page: z.number().int() }),
      execute: async ({ customer, page }) => {
        pagesRead.push(page);
        return { customer, page, orders: [`o-${page * 2 - 1}`, `o-${page * 2}`], more: page < pages };
      },
    });
    const agent = new Agent({ name: 'orders', model: server.modelId, tools: door.tools([listOrders]) });

    const result = await door.run(agent, 'How many orders has c-9?', { session: new MemorySession({ sessionId: 'oa-pages' }) });

    assert.equal(result.finalOutput, 'Customer c-9 has 12 orders.');
    assert.deepEqual(pagesRead, [1, 2, 3, 4, 5, 6]);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    assert.deepEqual(escalations(events), []);
    const snapshot = await breaker.snapshot('oa-pages');
    assert.equal(snapshot.state, 'CLOSED');
    assert.equal(snapshot.counters.modelCalls, pages + 1);
    assert.equal(snapshot.counters.toolCalls, pages);
    const expected = [...Array(pages).keys()].reduce((sum, i) => sum + 110 + i, 0) + 210;
    assert.equal(snapshot.budget.tokens, expected, 'every turn’s reported usage reached the budget');
  });

  test('without a session id each run is a session of its own', async () => {
    await using server = await spiralServer();
    const { events, door } = governed(server);
    const { check, executions } = checkBuild(() => 'running');
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

    for (let run = 0; run < 2; run++) {
      // Two turns each: alone, neither run repeats the call often enough to be steered.
      await door.run(agent, PROMPT, { maxTurns: 2 }).then(
        () => assert.fail('maxTurns ends the run'),
        (e: unknown) => assert.equal((e as Error).name, 'MaxTurnsExceededError'),
      );
    }

    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17', 'b-17'], 'four identical calls ran');
    assert.deepEqual(escalations(events), [], 'split over two sessions, they are not a spiral');
  });

  test('usage reaches the budget: the wrap-up steer reaches the model, then the run stops with BudgetExceededError', async () => {
    const script: ScriptFunction = (_request, index) => ({
      toolCalls: [{ name: 'check_build', arguments: { buildId: `b-${index}` } }],
      usage: { promptTokens: 400, completionTokens: 100 },
    });
    await using server = await new ScriptedModelServer({ script }).start();
    const { door } = governed(server, { budget: { maxTokens: 1200 } }, 'oa-budget');
    const { check, executions } = checkBuild(() => 'running');
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

    const error = await door.run(agent, PROMPT, { maxTurns: 30 }).then(
      () => assert.fail('the budget must end the run'),
      (e: unknown) => e,
    );

    assert.ok(BudgetExceededError.isInstance(error), `expected BudgetExceededError, got ${String(error)}`);
    assert.equal(error.sessionId, 'oa-budget', 'the sessionId option names the session');
    const wrapUp = server.requests.findIndex((r) => JSON.stringify(r.body.messages[0]).includes('[AgentBreaker]'));
    assert.ok(wrapUp > 0, 'a later request carries the wrap-up message in its system instructions');
    assert.ok(server.requests.length <= wrapUp + 1, 'no model request after the wrap-up round');
    assert.ok(executions.length < 30);
  });

  test('handoffs are recorded as delegations: ping-pong between two agents is stopped', async () => {
    // Each agent hands straight back to the other.
    const script: ScriptFunction = (request) => {
      const system = String(request.body.messages[0]?.content ?? '');
      return { toolCalls: [{ name: system.includes('triage') ? 'transfer_to_billing' : 'transfer_to_triage', arguments: {} }] };
    };
    await using server = await new ScriptedModelServer({ script }).start();
    const { breaker, events, door } = governed(server, {}, 'oa-handoffs');
    const billing = new Agent({ name: 'billing', instructions: 'You are billing.', model: server.modelId });
    const triage = new Agent({ name: 'triage', instructions: 'You are triage.', model: server.modelId, handoffs: [billing] });
    billing.handoffs = [handoff(triage)];

    const error = await door.run(triage, 'Refund order o-1', { maxTurns: 40 }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(error instanceof Error && 'category' in error && error.category === 'delegation_loop', `expected a delegation loop stop, got ${String(error)}`);
    assert.ok(escalations(events).includes('delegation_loop:stop'));
    assert.ok((await breaker.snapshot('oa-handoffs')).counters.delegations > 0);
    assert.ok(server.requests.length < 40, 'stopped well before maxTurns');
  });

  for (const stream of [false, true]) {
    test(`searches the API ran itself (its hosted web search) are judged: the same search over and over is stopped with RagFixationError (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await searchLoopServer();
      const { breaker, door } = governed(server, {}, `oa-hosted-${stream}`, true);
      const agent = new Agent({ name: 'travel', instructions: 'You book travel.', model: server.modelId, tools: [webSearchTool()] });
      const session = new MemorySession({ sessionId: `oa-hosted-${stream}` });
      const { answers, error } = await askUntilStopped(door, agent, session, 'Find me the cheapest flight to Oslo in March.', stream);

      assert.ok(RagFixationError.isInstance(error), `expected RagFixationError, got ${String(error)}`);
      assert.deepEqual(answers, [SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER, SEARCH_LOOP_ANSWER]);
      assert.equal((await breaker.snapshot(`oa-hosted-${stream}`)).counters.retrievals, 4);
      assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] .*search/, 'the 4th turn carried the steer');
      assert.equal(server.requests[0]!.path, '/v1/responses');
    });
  }

  test('a page its hosted web search opened again and again is noted, then stopped with ToolSpiralError', async () => {
    await using server = await PAGE_LOOP.start();
    const { breaker, door } = governed(server, {}, 'oa-pages', true);
    const agent = new Agent({ name: 'travel', instructions: 'You book travel.', model: server.modelId, tools: [webSearchTool()] });
    const { answers, error } = await askUntilStopped(door, agent, new MemorySession({ sessionId: 'oa-pages' }), 'What does a flight to Oslo cost in March?');
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(PAGE_LOOP.answer));
    assert.equal((await breaker.snapshot('oa-pages')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] You have called \\"open_page\\" 3 times/);
  });

  test('code its hosted code interpreter ran that fails the same way again and again is noted, then stopped with ErrorLoopError', async () => {
    await using server = await CODE_LOOP.start();
    const { breaker, door } = governed(server, {}, 'oa-code', true);
    const agent = new Agent({
      name: 'analyst',
      instructions: 'You analyse sales data.',
      model: server.modelId,
      tools: [codeInterpreterTool({ includeOutputs: true })],
    });
    const { answers, error } = await askUntilStopped(door, agent, new MemorySession({ sessionId: 'oa-code' }), 'What was the total revenue in sales.csv?');
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(CODE_LOOP.answer));
    assert.equal((await breaker.snapshot('oa-code')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] \\"code_interpreter\\" has failed 2 times/);
  });

  test('a remote MCP tool its hosted MCP tool called again and again for the same output is noted, then stopped with ToolSpiralError', async () => {
    await using server = await MCP_LOOP.start();
    const { breaker, door } = governed(server, {}, 'oa-mcp', true);
    const tracker = hostedMcpTool({ serverLabel: 'tracker', serverUrl: 'https://mcp.tracker.example/sse', requireApproval: 'never' });
    const agent = new Agent({ name: 'triage', instructions: 'You triage issues.', model: server.modelId, tools: [tracker] });
    const { answers, error } = await askUntilStopped(door, agent, new MemorySession({ sessionId: 'oa-mcp' }), 'What is the state of ENG-42?');
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(answers, Array(4).fill(MCP_LOOP.answer));
    assert.equal((await breaker.snapshot('oa-mcp')).counters.toolCalls, 5);
    assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] You have called \\"get_issue\\" 3 times/);
  });

  test('four alike hosted searches in one answer are steered once; the next answer that searches again is stopped', async () => {
    await using server = await searchLoopServer({ perAnswer: 4 });
    const { breaker, door } = governed(server, {}, 'oa-hosted-one-answer', true);
    const agent = new Agent({ name: 'travel', instructions: 'You book travel.', model: server.modelId, tools: [webSearchTool()] });
    const session = new MemorySession({ sessionId: 'oa-hosted-one-answer' });
    assert.equal((await door.run(agent, 'Find me the cheapest flight to Oslo in March.', { session })).finalOutput, SEARCH_LOOP_ANSWER);
    const error = await door.run(agent, 'Keep looking.', { session }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(RagFixationError.isInstance(error), `expected RagFixationError, got ${String(error)}`);
    // Every search that ran is counted, those of the stopped answer too.
    assert.equal((await breaker.snapshot('oa-hosted-one-answer')).counters.retrievals, 8);
    assert.equal(JSON.stringify(server.requests[1]!.body.messages).match(/\[AgentBreaker\]/g)?.length, 1, 'one steer, in the second turn');
  });

  test('an agent given a Model instance is governed through governed.model, and refused without it', async () => {
    await using server = await spiralServer();
    const { door } = governed(server, {}, 'oa-instance');
    const { check, executions } = checkBuild(() => 'running');
    const chatModel = await new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false }).getModel(server.modelId);

    const bare = new Agent({ name: 'ops', model: chatModel, tools: door.tools([check]) });
    await assert.rejects(door.run(bare, PROMPT), { name: 'InvalidOptionError', option: 'agent "ops".model' });
    const ungovernedTools = new Agent({ name: 'ops', model: server.modelId, tools: [check] });
    await assert.rejects(door.run(ungovernedTools, PROMPT), { name: 'InvalidOptionError', option: 'agent "ops".tools["check_build"]' });
    assert.equal(server.requests.length, 0, 'nothing ran ungoverned');

    const agent = new Agent({ name: 'ops', model: door.model(chatModel), tools: door.tools([check]) });
    const error = await door.run(agent, PROMPT, { maxTurns: 30 }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(executions, ['b-17', 'b-17', 'b-17']);
    assert.equal(server.requests.length, 5);
  });

  /** A shell whose every command fails the same way, and the commands it ran. */
  function failingShell(): { shell: Shell; ran: string[][] } {
    const ran: string[][] = [];
    const shell: Shell = {
      run: async (action) => {
        ran.push(action.commands);
        return { output: [{ stdout: '', stderr: 'FAIL src/cart.test.ts: expected 3, got 2', outcome: { type: 'exit', exitCode: 1 } }] };
      },
    };
    return { shell, ran };
  }

  for (const stream of [false, true]) {
    test(`a local shell command that fails the same way again and again is steered, then refused, then stopped with ErrorLoopError (the SDK's shell tool, ${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await new ScriptedModelServer({
        script: [{ toolCalls: [{ name: 'shell', arguments: { commands: ['npm test'] } }] }],
        onExhausted: 'repeat-last',
      }).start();
      const { events, door } = governed(server, {}, `oa-shell-${stream}`, true);
      const { shell, ran } = failingShell();
      const agent = new Agent({ name: 'coder', instructions: 'Fix the failing test.', model: server.modelId, tools: door.tools([shellTool({ shell })]) });

      const error = await (async () => {
        if (!stream) return door.run(agent, 'Make the cart tests pass.', { maxTurns: 30 });
        const result = await door.run(agent, 'Make the cart tests pass.', { maxTurns: 30, stream: true });
        for await (const _event of result) {
          // drained only to drive the run
        }
        await result.completed;
        if (result.error !== null && result.error !== undefined) throw result.error;
      })().then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );

      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
      assert.deepEqual(ran, [['npm test'], ['npm test'], ['npm test']], 'the refused and the stopped command did not run');
      assert.equal(server.requests.length, 5, 'no model request after the stop');
      assert.ok(JSON.stringify(server.requests[0]!.body.tools).includes('"shell"'), 'the model was given the built-in shell tool');
      assert.ok(
        server.requests.every((r) => r.body.stream === stream),
        stream ? 'the model was streamed' : 'the model was not streamed',
      );
      assert.equal(lastToolResult(server.requests[1]), 'FAIL src/cart.test.ts: expected 3, got 2');
      assert.match(
        lastToolResult(server.requests[3]),
        /^FAIL src\/cart\.test\.ts: expected 3, got 2\n\n\[AgentBreaker\] .*"shell" has failed/s,
        'the 3rd output carries the steer',
      );
      assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
    });
  }

  test('a patch that fails to apply again and again is stopped with ErrorLoopError; the refused edits never reach the editor', async () => {
    const operation = { type: 'update_file', path: 'src/cart.ts', diff: '@@\n-  return items.length;\n+  return items.reduce((n, i) => n + i.quantity, 0);\n' };
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'apply_patch', arguments: operation }] }],
      onExhausted: 'repeat-last',
    }).start();
    const { events, door } = governed(server, {}, 'oa-patch', true);
    const edits: string[] = [];
    const editor: Editor = {
      createFile: async () => assert.fail('no file is created'),
      deleteFile: async () => assert.fail('no file is deleted'),
      updateFile: async (op) => {
        edits.push(op.path);
        return { status: 'failed', output: `Invalid context at line 12 of ${op.path}: "  return items.length;" not found` };
      },
    };
    const agent = new Agent({ name: 'coder', model: server.modelId, tools: door.tools([applyPatchTool({ editor })]) });

    const error = await door.run(agent, 'Count quantities in the cart.', { maxTurns: 30 }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.deepEqual(edits, ['src/cart.ts', 'src/cart.ts', 'src/cart.ts']);
    assert.match(lastToolResult(server.requests[3]), /^Invalid context at line 12.*\n\n\[AgentBreaker\] .*"apply_patch" has failed/s);
    assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
  });

  test('a shell session that makes progress runs to the end untouched, each command recorded with its output', async () => {
    const commands = ['git status', 'npm test -- cart', 'sed -n 1,40p src/cart.ts', 'npm test'];
    await using server = await new ScriptedModelServer({
      script: [...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { commands: [command] } }] })), { text: 'All tests pass.' }],
    }).start();
    const { breaker, events, door } = governed(server, {}, 'oa-shell-progress', true);
    const ran: string[] = [];
    const shell: Shell = {
      run: async ({ commands: [command = ''] }) => {
        ran.push(command);
        return { output: [{ stdout: `output of ${command}: ${ran.length}`, stderr: '', outcome: { type: 'exit', exitCode: 0 } }] };
      },
    };
    const agent = new Agent({ name: 'coder', model: server.modelId, tools: door.tools([shellTool({ shell })]) });

    const result = await door.run(agent, 'Make the cart tests pass.');

    assert.equal(result.finalOutput, 'All tests pass.');
    assert.deepEqual(ran, commands);
    assert.deepEqual(escalations(events), []);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    assert.equal((await breaker.snapshot('oa-shell-progress')).counters.toolCalls, commands.length);
  });

  test('a shell that throws is recorded as a failure, and the SDK still answers the model with the error', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'shell', arguments: { commands: ['make deploy'] } }] }],
      onExhausted: 'repeat-last',
    }).start();
    const { events, door } = governed(server, {}, 'oa-shell-throws', true);
    let runs = 0;
    const shell: Shell = {
      run: async () => {
        runs += 1;
        throw new Error('sandbox: permission denied');
      },
    };
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([shellTool({ shell })]) });

    const error = await door.run(agent, 'Deploy.', { maxTurns: 30 }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.equal(runs, 3);
    assert.equal(lastToolResult(server.requests[1]), 'sandbox: permission denied');
  });

  test('an ungoverned shell or patch tool is refused before anything runs', async () => {
    await using server = await spiralServer();
    const { door } = governed(server, {}, 'oa-ungoverned', true);
    const { shell } = failingShell();
    const editor: Editor = { createFile: async () => {}, updateFile: async () => {}, deleteFile: async () => {} };
    const withShell = new Agent({ name: 'coder', model: server.modelId, tools: [shellTool({ shell })] });
    await assert.rejects(door.run(withShell, PROMPT), { name: 'InvalidOptionError', option: 'agent "coder".tools["shell"]' });
    const withPatch = new Agent({ name: 'coder', model: server.modelId, tools: [applyPatchTool({ editor })] });
    await assert.rejects(door.run(withPatch, PROMPT), { name: 'InvalidOptionError', option: 'agent "coder".tools["apply_patch"]' });
    assert.equal(server.requests.length, 0, 'nothing ran ungoverned');
  });

  test('a bad breaker or sessionId is a typed error naming the option', () => {
    assert.throws(() => breakerForOpenAIAgents({} as never), { name: 'InvalidOptionError', option: 'breaker' });
    assert.throws(() => breakerForOpenAIAgents(new AgentBreaker({ telemetry: false }), { sessionId: '' }), { name: 'InvalidOptionError', option: 'sessionId' });
  });

  const failures = [
    // The SDK hands the guardrail its own fixed text in place of the throw.
    { name: "the SDK's default error text", errorFunction: undefined, seen: /^An error occurred while running the tool/ },
    // A text of the tool's own is read by the breaker itself: one that opens with "Error" is a failure.
    { name: 'an errorFunction of its own', errorFunction: (_context: unknown, e: unknown) => `Error: ${String((e as Error).message)}`, seen: /^Error: CI API/ },
  ];
  for (const failure of failures) {
    test(`a tool that throws, answered with ${failure.name}, is recorded as a failure: the loop is stopped as an error loop`, async () => {
      await using server = await spiralServer();
      const { events, door } = governed(server, {}, 'oa-throws');
      let attempts = 0;
      const check = tool({
        name: 'check_build',
        description: 'Status of a CI build',
        parameters: z.object({ buildId: z.string() }),
        execute: async () => {
          attempts += 1;
          throw new Error('CI API: permission denied for build b-17');
        },
        ...(failure.errorFunction === undefined ? {} : { errorFunction: failure.errorFunction }),
      });
      const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

      const error = await door.run(agent, PROMPT, { maxTurns: 30 }).then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );

      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
      // The model saw the failure's text for every attempt that ran.
      assert.match(lastToolResult(server.requests[1]), failure.seen);
      assert.equal(attempts, 3, 'the 3rd attempt ran steered; the 4th was blocked, the 5th stopped');
    });
  }

  test('a tool that keeps timing out is an outage: it gets the transient allowance, then is stopped as an error loop', async () => {
    await using server = await spiralServer();
    const { events, door } = governed(server, {}, 'oa-timeout');
    let attempts = 0;
    const check = tool({
      name: 'check_build',
      description: 'Status of a CI build',
      parameters: z.object({ buildId: z.string() }),
      timeoutMs: 5,
      execute: async () => {
        attempts += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
        return 'never';
      },
    });
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

    const error = await door.run(agent, PROMPT, { maxTurns: 30 }).then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.match(lastToolResult(server.requests[1]), /^Tool 'check_build' timed out after 5ms\.$/);
    assert.equal(escalations(events)[0], 'error_loop:steer');
    assert.equal(attempts, 5, 'an outage gets 5 attempts (maxTransientRepeats; the 5th runs steered), not 3');
  });
});
