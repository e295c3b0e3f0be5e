/**
 * The Agents SDK door (`agent-governor/openai-agents`) where an agent's tools
 * reach it other than as its own function tools (MCP servers, agents used as
 * tools), where a run is resumed after human approval, and what a stopped run
 * hands back: the SDK's own OpenAI provider in Chat Completions mode, over
 * real HTTP against the scripted stand-in model; MCP tools from a real stdio
 * MCP server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Agent,
  getDefaultModel,
  handoff,
  MaxTurnsExceededError,
  MCPServerStdio,
  MemorySession,
  OpenAIChatCompletionsModel,
  OpenAIProvider,
  Runner,
  RunState,
  retryPolicies,
  shellTool,
  ToolCallError,
  tool,
  type CallToolResultContent,
  type MCPServer,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import {
  AgentBreaker,
  BreakerOpenError,
  BreakerUnavailableError,
  BudgetExceededError,
  DelegationLoopError,
  ErrorLoopError,
  InMemoryBreakerStore,
  ToolSpiralError,
  type AgentBreakerOptions,
  type BreakerEventRecord,
} from '../index.ts';
import type { BreakerEvent, ObserveOptions } from '../breaker/index.ts';
import { breakerForOpenAIAgents, type GovernedRunStop } from './index.ts';
import { ScriptedModelServer, type RecordedRequest, type ScriptedTurn } from '../testing/index.ts';
import { escalations, lastToolResult, spiralServer } from '../e2e/recorded-run.ts';
import { OPS_MCP_SERVER } from './test-support/ops-mcp-server.ts';
import { restartServiceTool } from './test-support/restart-tool.ts';
import { assertLeadDriftCaught, compoundingLeadServer } from '../breaker/test-support/compounding-lead.ts';

function governed(server: ScriptedModelServer, options: AgentBreakerOptions = {}, sessionId?: string) {
  const breaker = new AgentBreaker({ telemetry: false, ...options });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
  const door = breakerForOpenAIAgents(breaker, { runConfig: { modelProvider, tracingDisabled: true }, ...(sessionId ? { sessionId } : {}) });
  return { breaker, events, door };
}

/** A model that calls one tool with the same arguments every turn. */
function loopingModel(name: string, args: Record<string, unknown>): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script: [{ toolCalls: [{ name, arguments: args }] }], onExhausted: 'repeat-last' }).start();
}

/** A `get_invoice` tool built by governed.tool that throws what `thrown` gives every time, and how often it ran. */
function throwingInvoiceTool(door: ReturnType<typeof breakerForOpenAIAgents>, thrown: () => unknown, errorFunction?: (() => string) | null) {
  let attempts = 0;
  const getInvoice = door.tool({
    name: 'get_invoice',
    description: 'An invoice by id',
    parameters: z.object({ id: z.string() }),
    execute: async (): Promise<string> => {
      attempts += 1;
      throw thrown();
    },
    ...(errorFunction === undefined ? {} : { errorFunction }),
  });
  return { getInvoice, attempts: () => attempts };
}

/** The ops test MCP server over stdio, connected; closed with the test. */
async function opsMcpServer(): Promise<MCPServerStdio & AsyncDisposable> {
  const server = new MCPServerStdio({ name: 'ops', command: process.execPath, args: [OPS_MCP_SERVER] });
  await server.connect();
  return Object.assign(server, { [Symbol.asyncDispose]: () => server.close() });
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

function checkBuild() {
  const executions: string[] = [];
  const check = tool({
    name: 'check_build',
    description: 'Status of a CI build',
    parameters: z.object({ buildId: z.string() }),
    execute: async ({ buildId }) => {
      executions.push(buildId);
      return `build ${buildId}: running`;
    },
  });
  return { check, executions };
}

describe("breakerForOpenAIAgents: an agent's MCP servers", () => {
  test('an MCP tool called again and again with the same arguments is steered, then blocked, then stopped with ToolSpiralError', async () => {
    await using server = await loopingModel('get_issue', { id: 'ENG-42' });
    await using mcp = await opsMcpServer();
    const { breaker, events, door } = governed(server, {}, 'oa-mcp-spiral');
    const agent = new Agent({ name: 'triage', model: server.modelId, mcpServers: door.mcpServers([mcp]) });

    const error = await rejection(door.run(agent, 'What is the state of ENG-42?', { maxTurns: 20 }));

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(server.requests.length, 5, 'no model request after the stop');
    assert.match(lastToolResult(server.requests[1]), /ENG-42: open, assigned to nobody/);
    assert.match(
      lastToolResult(server.requests[3]),
      /^ENG-42: open, assigned to nobody\n\n\[AgentBreaker\] .*"get_issue" 3 times/s,
      'the 3rd result carries the steer',
    );
    assert.match(lastToolResult(server.requests[4]), /\[AgentBreaker\] This call was NOT executed\./);
    assert.equal((await breaker.snapshot('oa-mcp-spiral')).counters.toolCalls, 3, 'the blocked and the stopped call never reached the server');
  });

  test('an agent whose MCP servers did not go through governed.mcpServers is refused before anything runs', async () => {
    await using server = await loopingModel('get_issue', { id: 'ENG-42' });
    await using mcp = await opsMcpServer();
    const { door } = governed(server);
    const agent = new Agent({ name: 'triage', model: server.modelId, mcpServers: [mcp] });
    await assert.rejects(door.run(agent, 'What is the state of ENG-42?'), { name: 'InvalidOptionError', option: 'agent "triage".mcpServers["ops"]' });
    // A handoff's servers count as well.
    const lead = new Agent({ name: 'lead', model: server.modelId, handoffs: [agent] });
    await assert.rejects(door.run(lead, 'What is the state of ENG-42?'), { name: 'InvalidOptionError', option: 'agent "triage".mcpServers["ops"]' });
    assert.equal(server.requests.length, 0, 'nothing ran ungoverned');
    assert.throws(() => door.mcpServers([{}] as never), { name: 'InvalidOptionError', option: 'mcpServers[0]' });
  });

  test('MCP tools that make progress run to the end untouched', async () => {
    await using server = await new ScriptedModelServer({
      script: [...[1, 2, 3, 4].map(() => ({ toolCalls: [{ name: 'list_issues', arguments: { project: 'ENG' } }] })), { text: 'ENG has 8 open issues.' }],
    }).start();
    await using mcp = await opsMcpServer();
    const { events, door } = governed(server);
    const agent = new Agent({ name: 'triage', model: server.modelId, mcpServers: door.mcpServers([mcp]) });
    const result = await door.run(agent, 'How many issues are open in ENG?');
    assert.equal(result.finalOutput, 'ENG has 8 open issues.');
    assert.deepEqual(escalations(events), []);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
  });

  test("an MCP tool failing with the server's own error is an error loop; one failing as an outage (503) gets the transient allowance", async () => {
    await using mcp = await opsMcpServer();
    const attempts = async (toolName: string, args: Record<string, unknown>) => {
      await using server = await loopingModel(toolName, args);
      const { events, door } = governed(server, {}, `oa-mcp-${toolName}`);
      const agent = new Agent({ name: 'ops', model: server.modelId, mcpServers: door.mcpServers([mcp]) });
      const error = await rejection(door.run(agent, 'Go.', { maxTurns: 30 }));
      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.equal(escalations(events)[0], 'error_loop:steer');
      const ran = server.requests.filter((r) => r.body.messages.at(-1)?.role === 'tool' && !lastToolResult(r).startsWith('[AgentBreaker]')).length;
      return { ran, transient: error.evidence?.['transient'] };
    };
    assert.deepEqual(await attempts('deploy', { service: 'api' }), { ran: 3, transient: false });
    assert.deepEqual(await attempts('get_invoice', { id: 'inv-9' }), { ran: 5, transient: true });
  });

  test('an MCP call that fails outright is recorded with its own error: an outage gets the transient allowance, and the steer reaches the model', async () => {
    await using server = await loopingModel('get_invoice', { id: 'inv-9' });
    const { events, door } = governed(server, {}, 'oa-mcp-down');
    let calls = 0;
    // A server whose transport fails, as a remote one behind a gateway that answers 503 does.
    const down: MCPServer = {
      name: 'billing',
      cacheToolsList: false,
      connect: async () => {},
      close: async () => {},
      invalidateToolsCache: async () => {},
      listTools: async (): ReturnType<MCPServer['listTools']> => [
        {
          name: 'get_invoice',
          description: 'An invoice',
          inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
        },
      ],
      callTool: async (): Promise<CallToolResultContent> => {
        calls += 1;
        throw new Error('Streamable HTTP error: 503 Service Unavailable');
      },
    };
    const agent = new Agent({ name: 'billing', model: server.modelId, mcpServers: door.mcpServers([down]) });

    const error = await rejection(door.run(agent, 'Get invoice inv-9.', { maxTurns: 30 }));

    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(calls, 5, 'an outage gets 5 attempts, not 3');
    // A call that threw has no result to carry the steer: it joins the next turn's system instructions.
    const steered = server.requests.findIndex((r) => String(r.body.messages[0]?.content).includes('[AgentBreaker]'));
    assert.ok(steered > 0, 'the steer reached the model');
    assert.equal(escalations(events)[0], 'error_loop:steer');
  });
});

describe('breakerForOpenAIAgents: a function tool that throws', () => {
  // The SDK hands the guardrail its default text in place of the error: a tool's own errorFunction can pass the error on; governed.tool sees the throw itself.
  test('with an errorFunction that says what failed, an outage (503) gets the transient allowance', async () => {
    await using server = await loopingModel('get_invoice', { id: 'inv-9' });
    const { door } = governed(server, {}, 'oa-fn-outage');
    let attempts = 0;
    const getInvoice = tool({
      name: 'get_invoice',
      description: 'An invoice by id',
      parameters: z.object({ id: z.string() }),
      execute: async (): Promise<string> => {
        attempts += 1;
        throw new Error('503 Service Unavailable: upstream billing-api is down');
      },
      errorFunction: (_context, error) => `Error: ${error instanceof Error ? error.message : String(error)}`,
    });
    const agent = new Agent({ name: 'billing', model: server.modelId, tools: door.tools([getInvoice]) });
    const error = await rejection(door.run(agent, 'Get invoice inv-9.', { maxTurns: 30 }));
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(attempts, 5);
  });

  /** A run of an agent whose one tool, built by governed.tool, throws what it is given every time, to its stop. */
  async function throwingRun(thrown: () => unknown, options: { stream: boolean; errorFunction?: () => string }) {
    await using server = await loopingModel('get_invoice', { id: 'inv-9' });
    const { events, door } = governed(server);
    const { getInvoice, attempts } = throwingInvoiceTool(door, thrown, options.errorFunction);
    const agent = new Agent({ name: 'billing', model: server.modelId, tools: [getInvoice] });
    const error = await rejection(
      (async () => {
        if (!options.stream) return door.run(agent, 'Get invoice inv-9.', { maxTurns: 30 });
        for await (const _event of await door.run(agent, 'Get invoice inv-9.', { maxTurns: 30, stream: true })) {
          // drained only to drive the run
        }
      })(),
    );
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(escalations(events)[0], 'error_loop:steer');
    // What the model got for each attempt that ran (a blocked one is answered by the breaker alone).
    const answers = server.requests
      .slice(1)
      .map((r) => lastToolResult(r))
      .filter((answer) => !answer.startsWith('[AgentBreaker]'));
    return { attempts: attempts(), transient: error.evidence?.['transient'], answers };
  }

  const SDK_DEFAULT = 'An error occurred while running the tool. Please try again.';
  const outages: [string, () => unknown][] = [
    ['a 503', () => new Error('503 Service Unavailable: upstream billing-api is down')],
    ['a 429', () => Object.assign(new Error('429 Too Many Requests'), { status: 429 })],
    ['a timeout', () => new DOMException('The operation was aborted due to timeout', 'TimeoutError')],
    ['a 503 said only in its status field', () => Object.assign(new Error('upstream failed'), { status: 503 })],
  ];
  for (const stream of [false, true]) {
    for (const [name, thrown] of outages) {
      test(`built by governed.tool, with the SDK's default text, an outage (${name}) gets the transient allowance; the model gets the SDK's text (${stream ? 'streamed' : 'not streamed'})`, async () => {
        const { attempts, transient, answers } = await throwingRun(thrown, { stream });
        assert.equal(transient, true);
        assert.equal(attempts, 5, 'an outage gets 5 attempts, not 3');
        assert.equal(answers.length, attempts);
        for (const answer of answers) assert.ok(answer === SDK_DEFAULT || answer.startsWith(`${SDK_DEFAULT}\n\n[AgentBreaker] `), answer);
        assert.ok(
          answers.some((answer) => answer !== SDK_DEFAULT),
          "the steer rides on the SDK's text",
        );
      });
    }

    test(`built by governed.tool, a rejection (invoice not found) is still judged permanent (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const { attempts, transient, answers } = await throwingRun(() => new Error('invoice not found'), { stream });
      assert.equal(transient, false);
      assert.equal(attempts, 3);
      assert.equal(answers[0], SDK_DEFAULT);
    });
  }

  test("built by governed.tool with an errorFunction whose text does not say what failed, an outage is still judged by the error; the model gets the errorFunction's text", async () => {
    const { attempts, transient, answers } = await throwingRun(() => new Error('503 Service Unavailable'), {
      stream: false,
      errorFunction: () => 'Billing is not answering right now.',
    });
    assert.equal(transient, true);
    assert.equal(attempts, 5);
    assert.equal(answers[0], 'Billing is not answering right now.');
  });

  test("built by governed.tool, a tool that keeps timing out is judged by the SDK's timeout text, not by the abort its execute then throws", async () => {
    await using server = await loopingModel('get_invoice', { id: 'inv-9' });
    const { door } = governed(server);
    let attempts = 0;
    const getInvoice = door.tool({
      name: 'get_invoice',
      description: 'An invoice by id',
      parameters: z.object({ id: z.string() }),
      timeoutMs: 5,
      // As fetch does with the signal it is given: the call is abandoned, with an error of its own.
      execute: (_input, _context, details) =>
        new Promise<string>((_resolve, reject) => {
          attempts += 1;
          details?.signal?.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')));
        }),
    });
    const agent = new Agent({ name: 'billing', model: server.modelId, tools: [getInvoice] });
    const error = await rejection(door.run(agent, 'Get invoice inv-9.', { maxTurns: 30 }));
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(attempts, 5);
    assert.equal(lastToolResult(server.requests[1]), "Tool 'get_invoice' timed out after 5ms.");
  });

  test('governed.tool names a tool as the SDK does, and refuses a tool without an execute function', async () => {
    await using server = await loopingModel('get_invoice', { id: 'inv-9' });
    const { door } = governed(server);
    const named = door.tool({
      description: 'An invoice by id',
      parameters: z.object({ id: z.string() }),
      execute: async function get_invoice() {
        return 'paid';
      },
    });
    assert.equal(named.name, 'get_invoice');
    assert.equal(door.tools([named])[0], named, 'already governed');
    assert.throws(() => door.tool({ name: 'get_invoice' } as never), { name: 'InvalidOptionError', option: 'execute' });
  });
});

describe('breakerForOpenAIAgents: agents used as tools', () => {
  /** A manager that asks the researcher once; the researcher looks the same thing up every turn. */
  function managerServer(): Promise<ScriptedModelServer> {
    return new ScriptedModelServer({
      script: (request) => {
        const tools = ((request.body.tools ?? []) as { function?: { name?: string } }[]).map((t: { function?: { name?: string } }) => t.function?.name);
        if (!tools.includes('researcher')) return { toolCalls: [{ name: 'lookup', arguments: { sku: 'b-17' } }] };
        return request.body.messages.some((m: { role: string }) => m.role === 'tool')
          ? { text: 'parent done' }
          : { toolCalls: [{ name: 'researcher', arguments: { input: 'price of b-17' } }] };
      },
    }).start();
  }

  function lookupTool() {
    let runs = 0;
    const lookup = tool({
      name: 'lookup',
      description: 'Price of a SKU',
      parameters: z.object({ sku: z.string() }),
      execute: async () => {
        runs += 1;
        return 'no price yet';
      },
    });
    return { lookup, runs: () => runs };
  }

  test("an agent tool whose agent's own tools are not governed is refused before anything runs", async () => {
    await using server = await managerServer();
    const { door } = governed(server);
    const { lookup, runs } = lookupTool();
    const researcher = new Agent({ name: 'researcher', model: server.modelId, tools: [lookup] });
    const manager = new Agent({
      name: 'manager',
      model: server.modelId,
      tools: door.tools([researcher.asTool({ toolName: 'researcher', toolDescription: 'Research' })]),
    });

    await assert.rejects(door.run(manager, 'What is the price of b-17?'), { name: 'InvalidOptionError', option: 'agent "researcher".tools["lookup"]' });
    assert.equal(server.requests.length, 0, 'nothing ran ungoverned');
    assert.equal(runs(), 0);
  });

  test("an agent tool whose agent's tools are governed runs governed: its loop stops the whole run", async () => {
    await using server = await managerServer();
    const { events, door } = governed(server);
    const { lookup, runs } = lookupTool();
    const researcher = new Agent({ name: 'researcher', model: server.modelId, tools: door.tools([lookup]) });
    const manager = new Agent({
      name: 'manager',
      model: server.modelId,
      tools: door.tools([researcher.asTool({ toolName: 'researcher', toolDescription: 'Research' })]),
    });

    const error = await rejection(door.run(manager, 'What is the price of b-17?', { maxTurns: 10 }));

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.equal(runs(), 3);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    // The stop carries the run's state: the manager's conversation, not the one of the researcher's run inside it.
    const { state } = error as GovernedRunStop;
    assert.ok(state !== undefined, 'the stop carries a state');
    assert.partialDeepStrictEqual(state.history[0], { role: 'user', content: 'What is the price of b-17?' });
    assert.equal(state.history.filter((item) => item.type === 'function_call' && item.name === 'researcher').length, 1);
    assert.equal(state.history.filter((item) => item.type === 'function_call' && item.name === 'lookup').length, 0);
    assert.equal(JSON.parse(state.toString()).currentAgent.name, 'manager');
  });

  test("an agent tool's task is the lead's, not the user's: a new task per call is no user turn, which would wipe the breaker's evidence", async () => {
    const sessionId = 'oa-delegated-tasks';
    const leadTurns = (request: { body: { messages: { role: string }[] } }) => request.body.messages.filter((m) => m.role === 'tool').length;
    await using server = await new ScriptedModelServer({
      script: (request) => {
        const tools = ((request.body.tools ?? []) as { function?: { name?: string } }[]).map((t) => t.function?.name);
        if (!tools.includes('researcher')) return { text: 'Nothing found.' };
        const asked = leadTurns(request);
        return asked < 3 ? { toolCalls: [{ name: 'researcher', arguments: { input: `price of b-${17 + asked}` } }] } : { text: 'No prices yet.' };
      },
    }).start();
    const { breaker, door } = governed(server, {}, sessionId);
    const researcher = new Agent({ name: 'researcher', model: server.modelId });
    const lead = new Agent({
      name: 'lead',
      model: server.modelId,
      tools: door.tools([researcher.asTool({ toolName: 'researcher', toolDescription: 'Research' })]),
    });

    const result = await door.run(lead, 'What do b-17, b-18 and b-19 cost?', { maxTurns: 10 });

    assert.equal(result.finalOutput, 'No prices yet.');
    const { counters } = await breaker.snapshot(sessionId);
    assert.equal(counters.toolCalls, 3, 'three delegations');
    assert.equal(counters.userEvents, 1, "only the user's question is a user turn, not the tasks the lead wrote");
  });
});

describe('breakerForOpenAIAgents: an agent tool whose nested run fails', () => {
  /** A breaker that keeps what the door records of each call of the researcher. */
  class RecordingBreaker extends AgentBreaker {
    readonly recorded: { result: string | null; error: boolean | undefined }[] = [];
    override observe(sessionId: string, event: BreakerEvent, options?: ObserveOptions) {
      if (event.kind === 'tool_call' && event.tool === 'researcher') this.recorded.push({ result: event.result, error: event.error });
      return super.observe(sessionId, event, options);
    }
  }

  const SDK_DEFAULT = 'An error occurred while running the tool. Please try again.';

  /**
   * A lead that asks its researcher (an agent tool) the same thing every
   * turn, to the breaker's stop; the researcher's own turns are `nested`, its
   * one tool (`get_invoice`) throws what `thrown` gives.
   */
  async function failingDelegation(
    nested: () => ScriptedTurn,
    options: { stream?: boolean; thrown?: () => unknown; errorFunction?: null; nestedMaxTurns?: number } = {},
  ) {
    const isLead = (request: { body: { tools?: unknown } }) =>
      ((request.body.tools ?? []) as { function?: { name?: string } }[]).some((t) => t.function?.name === 'researcher');
    await using server = await new ScriptedModelServer({
      script: (request) => (isLead(request) ? { toolCalls: [{ name: 'researcher', arguments: { input: 'Find invoice inv-9.' } }] } : nested()),
    }).start();
    const breaker = new RecordingBreaker({ telemetry: false });
    const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
    const door = breakerForOpenAIAgents(breaker, { runConfig: { modelProvider, tracingDisabled: true } });
    const { getInvoice, attempts } = throwingInvoiceTool(
      door,
      options.thrown ?? (() => new Error('503 Service Unavailable: upstream billing-api is down')),
      options.errorFunction,
    );
    const researcher = new Agent({ name: 'researcher', model: server.modelId, tools: [getInvoice] });
    const asTool = researcher.asTool({
      toolName: 'researcher',
      toolDescription: 'Finds invoices',
      ...(options.nestedMaxTurns === undefined ? {} : { runOptions: { maxTurns: options.nestedMaxTurns } }),
    });
    const lead = new Agent({ name: 'lead', model: server.modelId, tools: door.tools([asTool]) });
    const error = await rejection(
      (async () => {
        if (options.stream !== true) return door.run(lead, 'Is invoice inv-9 paid?', { maxTurns: 30 });
        for await (const _event of await door.run(lead, 'Is invoice inv-9 paid?', { maxTurns: 30, stream: true })) {
          // drained only to drive the run
        }
      })(),
    );
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    // What the lead's model got for each delegation that ran (a blocked one is answered by the breaker alone).
    const answers = server.requests
      .filter((r) => isLead(r) && r.body.messages.at(-1)?.role === 'tool')
      .map((r) => lastToolResult(r))
      .filter((answer) => !answer.startsWith('[AgentBreaker]'));
    return { recorded: breaker.recorded, transient: error.evidence?.['transient'], attempts: attempts(), answers };
  }

  for (const stream of [false, true]) {
    test(`its model down (503) is recorded with the 503: the outage gets the transient allowance, 5 runs and not 3 (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const { recorded, transient, answers } = await failingDelegation(() => ({ error: { status: 503, retryAfterMs: 1 } }), { stream });
      assert.equal(transient, true);
      assert.equal(recorded.length, 5, 'an outage gets 5 attempts, not 3');
      for (const call of recorded) {
        assert.match(String(call.result), /^503 /);
        assert.equal(call.error, true);
      }
      assert.equal(answers.length, 5);
      for (const answer of answers) assert.ok(answer.startsWith(SDK_DEFAULT), "the lead's model still gets the SDK's text");
    });
  }

  test('its model refusing the request (400) is recorded with the 400, and still judged permanent', async () => {
    const { recorded, transient } = await failingDelegation(() => ({ error: { status: 400, message: 'The model `gpt-9` does not exist' } }));
    assert.equal(transient, false);
    assert.equal(recorded.length, 3);
    for (const call of recorded) assert.deepEqual(call, { result: '400 The model `gpt-9` does not exist', error: true });
  });

  test('a governed.tool of its agent whose throw ends the nested run (errorFunction: null) is what the call is recorded with: an outage, then a rejection', async () => {
    const callInvoice = () => ({ toolCalls: [{ name: 'get_invoice', arguments: { id: 'inv-9' } }] });
    const outage = await failingDelegation(callInvoice, { errorFunction: null });
    assert.equal(outage.transient, true);
    assert.equal(outage.attempts, 5);
    assert.deepEqual(outage.recorded[0], { result: '503 Service Unavailable: upstream billing-api is down', error: true });

    const rejected = await failingDelegation(callInvoice, { errorFunction: null, thrown: () => new Error('invoice not found') });
    assert.equal(rejected.transient, false);
    assert.equal(rejected.attempts, 3);
    assert.deepEqual(rejected.recorded[0], { result: 'invoice not found', error: true });
  });

  test("a throw the nested run answered and went on from is not what its later failure is recorded with (the nested run's turns running out)", async () => {
    // The researcher's tool fails with a 503, which the SDK answers; the nested run then runs out of turns.
    const { recorded, transient, attempts } = await failingDelegation(() => ({ toolCalls: [{ name: 'get_invoice', arguments: { id: 'inv-9' } }] }), {
      nestedMaxTurns: 1,
    });
    assert.equal(transient, false);
    assert.equal(attempts, 3);
    for (const call of recorded) assert.deepEqual(call, { result: SDK_DEFAULT, error: true });
  });
});

describe('breakerForOpenAIAgents: human approval', () => {
  test('a run paused for approval inside a governed agent tool resumes from its saved state: the SDK still knows which agent the governed tool runs', async () => {
    await using server = await new ScriptedModelServer({
      script: (request) => {
        const tools = ((request.body.tools ?? []) as { function?: { name?: string } }[]).map((t) => t.function?.name);
        const answered = request.body.messages.some((m) => m.role === 'tool');
        if (tools.includes('operator'))
          return answered ? { text: 'The api was restarted.' } : { toolCalls: [{ name: 'operator', arguments: { input: 'restart api' } }] };
        return answered ? { text: 'restarted' } : { toolCalls: [{ name: 'restart_service', arguments: { service: 'api' } }] };
      },
    }).start();
    const { door } = governed(server);
    const { restart, runs: restarts } = restartServiceTool(() => 'restarted');
    const operator = new Agent({ name: 'operator', model: server.modelId, tools: door.tools([restart]) });
    const lead = new Agent({
      name: 'lead',
      model: server.modelId,
      tools: door.tools([operator.asTool({ toolName: 'operator', toolDescription: 'Operates services' })]),
    });

    const paused = await door.run(lead, 'Restart the api.');
    assert.equal(paused.interruptions.length, 1);
    // Saved and restored, as a run waiting for a person is.
    const state = await RunState.fromString(lead, paused.state.toString());
    for (const item of state.getInterruptions()) state.approve(item);
    const result = await door.run(lead, state);

    assert.equal(result.finalOutput, 'The api was restarted.');
    assert.equal(restarts(), 1);
  });

  test('a run resumed from result.state after each approval goes on in the same session: the loop across approvals is stopped', async () => {
    await using server = await loopingModel('restart_service', { service: 'api' });
    const { events, door } = governed(server);
    const { restart, runs: restarts } = restartServiceTool();
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([restart]) });

    let approvals = 0;
    const error = await rejection(
      (async () => {
        let result = await door.run(agent, 'The api is down, fix it.', { maxTurns: 50 });
        while (result.interruptions.length > 0 && approvals < 8) {
          for (const item of result.interruptions) result.state.approve(item);
          approvals += 1;
          // As the SDK's own run takes it: the state, typed, with no cast.
          result = await door.run(agent, result.state, { maxTurns: 50 });
        }
      })(),
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(restarts(), 3, 'the blocked and the stopped restart did not run');
    assert.ok(approvals < 8);
  });
});

describe('breakerForOpenAIAgents: what a stopped run hands back', () => {
  test("the stop carries the run's state, as the SDK's own errors do: its history holds the whole conversation, and it resumes in the same session", async () => {
    // The model checks the build until stopped; asked again, it answers.
    await using server = await new ScriptedModelServer({
      script: (_request, index) => (index < 5 ? { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] } : { text: 'b-17 is still running.' }),
    }).start();
    const { breaker, door } = governed(server);
    const { check, executions } = checkBuild();
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });
    const session = new MemorySession({ sessionId: 'oa-stopped-state' });

    const error = await rejection(door.run(agent, 'Is build b-17 done?', { session, maxTurns: 30 }));

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    const { state } = error as GovernedRunStop;
    assert.ok(state !== undefined, 'the stop carries a state');
    const history = state.history;
    assert.partialDeepStrictEqual(history[0], { role: 'user', content: 'Is build b-17 done?' }, "the user's message is kept");
    assert.equal(history.filter((item) => item.type === 'function_call').length, 5, 'every call is there, up to the one the breaker stopped');
    const outputs = history.filter((item) => item.type === 'function_call_result');
    assert.equal(outputs.length, 5, 'each with what it was answered');
    assert.match(JSON.stringify(outputs[2]), /build b-17: running/);
    assert.match(JSON.stringify(outputs[4]), /\[AgentBreaker\]/, 'the stopped call with the refusal');
    assert.doesNotMatch(JSON.stringify(error), /b-17/, 'the conversation is not among the fields a log prints');

    // After a reset the conversation goes on from the state, in the session the stop was in.
    await breaker.reset('oa-stopped-state');
    const before = (await breaker.snapshot('oa-stopped-state')).counters.modelCalls;
    const resumed = await door.run(agent, state);
    assert.equal(resumed.finalOutput, 'b-17 is still running.');
    assert.equal((await breaker.snapshot('oa-stopped-state')).counters.modelCalls, before + 1, "the resumed turn counted in the stopped run's session");
    assert.match(JSON.stringify(server.requests[5]!.body.messages), /Is build b-17 done\?.*build b-17: running/s, 'the model was sent the whole conversation');
    assert.equal(executions.length, 3);
  });

  test("a streamed run's stop carries the run's own state", async () => {
    await using server = await spiralServer();
    const { door } = governed(server, {}, 'oa-stream-state');
    const { check } = checkBuild();
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });
    const result = await door.run(agent, 'Is build b-17 done?', { stream: true, maxTurns: 30 });
    const error = await rejection(
      (async () => {
        for await (const _event of result) {
          // drained only to drive the run
        }
      })(),
    );
    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    const { state } = error as GovernedRunStop;
    assert.equal(state, result.state);
    assert.partialDeepStrictEqual(state?.history[0], { role: 'user', content: 'Is build b-17 done?' });
  });

  for (const stream of [false, true]) {
    test(`with toolUseBehavior 'stop_on_first_tool' the stop rejects the run with the category's error (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await spiralServer();
      const { door } = governed(server, {}, `oa-first-tool-${stream}`);
      const { check, executions } = checkBuild();
      const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]), toolUseBehavior: 'stop_on_first_tool' });
      const session = new MemorySession();
      const outputs: unknown[] = [];
      const error = await rejection(
        (async () => {
          for (let i = 0; i < 7; i += 1) {
            const prompt = i === 0 ? 'Is build b-17 done yet?' : 'continue';
            if (!stream) {
              outputs.push((await door.run(agent, prompt, { session })).finalOutput);
              continue;
            }
            const result = await door.run(agent, prompt, { session, stream: true });
            const failed = await (async () => {
              for await (const _event of result) {
                // drained only to drive the run
              }
            })().then(
              () => undefined,
              (e: unknown) => e,
            );
            // Each way of reading a streamed run tells the same.
            const completed = await result.completed.then(
              () => undefined,
              (e: unknown) => e,
            );
            assert.equal(completed, failed, 'completed rejects as the stream did');
            assert.equal(result.error ?? undefined, failed, 'result.error is the stop');
            if (failed !== undefined) throw failed;
            outputs.push(result.finalOutput);
          }
        })(),
      );
      assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
      for (const output of outputs) assert.doesNotMatch(String(output), /Agent stopped/, 'no run completed with the stop as its answer');
      assert.equal(executions.length, 3);
    });
  }
});

describe('breakerForOpenAIAgents: a hosted shell (commands the API runs in its own container)', () => {
  /** A door over the SDK's own Responses model (the hosted shell is a Responses tool), the breaker's events recorded. */
  function responsesDoor(server: ScriptedModelServer, sessionId: string) {
    const breaker = new AgentBreaker({ telemetry: false });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: true });
    return { breaker, events, door: breakerForOpenAIAgents(breaker, { sessionId, runConfig: { modelProvider, tracingDisabled: true } }) };
  }

  function coder(server: ScriptedModelServer): Agent {
    return new Agent({
      name: 'coder',
      instructions: 'Fix the failing test.',
      model: server.modelId,
      tools: [shellTool({ environment: { type: 'container_auto' } })],
    });
  }

  /** Asks, then "Keep going." up to 8 times in one session (streamed or not); the answers, and what ended the run, if anything did. */
  async function askRepeatedly(door: ReturnType<typeof responsesDoor>['door'], agent: Agent, sessionId: string, stream: boolean) {
    const session = new MemorySession({ sessionId });
    const answers: unknown[] = [];
    const error = await (async () => {
      for (let i = 0; i < 8; i += 1) {
        const prompt = i === 0 ? 'Make the cart tests pass.' : 'Keep going.';
        if (!stream) {
          answers.push((await door.run(agent, prompt, { session })).finalOutput);
          continue;
        }
        const result = await door.run(agent, prompt, { session, stream: true });
        for await (const _event of result) {
          // drained only to drive the run
        }
        await result.completed;
        if (result.error !== null && result.error !== undefined) throw result.error;
        answers.push(result.finalOutput);
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    return { answers, error };
  }

  for (const stream of [false, true]) {
    test(`the same command failing the same way in every answer is noted to the model, then stopped with ErrorLoopError (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await new ScriptedModelServer({
        script: () => ({
          shellRuns: [{ commands: ['npm test'], results: [{ stderr: 'FAIL src/cart.test.ts: expected 3, got 2', exitCode: 1 }] }],
          text: 'Let me run the tests once more.',
        }),
      }).start();
      const sessionId = `oa-hosted-shell-${stream}`;
      const { breaker, events, door } = responsesDoor(server, sessionId);

      const { answers, error } = await askRepeatedly(door, coder(server), sessionId, stream);

      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.deepEqual(answers, Array(4).fill('Let me run the tests once more.'));
      // Each run has happened by the time it is judged: the block, too, reaches the model as a note.
      assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
      assert.equal(server.requests[0]!.path, '/v1/responses');
      assert.deepEqual(server.requests[0]!.body['tools'], [{ type: 'shell', environment: { type: 'container_auto' } }]);
      // Each run is recorded as a local shell's is: the shell, its commands, what they printed.
      const state = await breaker.snapshot(sessionId);
      assert.equal(state.counters.toolCalls, 5);
      assert.doesNotMatch(JSON.stringify(server.requests[2]!.body.messages), /AgentBreaker/);
      assert.match(JSON.stringify(server.requests[3]!.body.messages), /\[AgentBreaker\] \\"shell\\" has failed 2 times/);
      assert.match(JSON.stringify(server.requests[4]!.body.messages), /\[AgentBreaker\] \\"shell\\" has failed 3 times/);
      assert.equal(server.requests.length, 5, 'no model request after the stop');
    });
  }

  test('a session that makes progress (new commands, each exiting 0) runs to the end untouched, each run recorded', async () => {
    const commands = ['git status', 'npm test -- cart', 'sed -n 1,40p src/cart.ts', 'npm test', 'npm run lint', 'git diff', 'npm run build', 'git log -1'];
    await using server = await new ScriptedModelServer({
      script: (_request, index) => ({ shellRuns: [{ commands: [commands[index]!], results: [{ stdout: `output of ${commands[index]}` }] }], text: 'Next.' }),
    }).start();
    const { breaker, events, door } = responsesDoor(server, 'oa-hosted-shell-progress');

    const { answers, error } = await askRepeatedly(door, coder(server), 'oa-hosted-shell-progress', false);

    assert.equal(error, undefined);
    assert.deepEqual(answers, Array(8).fill('Next.'));
    assert.deepEqual(escalations(events), []);
    for (const request of server.requests) assert.doesNotMatch(JSON.stringify(request.body), /AgentBreaker/, 'the model never hears from the breaker');
    assert.equal((await breaker.snapshot('oa-hosted-shell-progress')).counters.toolCalls, commands.length);
  });
});

describe('breakerForOpenAIAgents: bad arguments to governed.run', () => {
  test('a missing agent or an input that is neither text, items nor a state is a typed error naming the argument', async () => {
    await using server = await spiralServer();
    const { door } = governed(server);
    const agent = new Agent({ name: 'ops', model: server.modelId });
    await assert.rejects(door.run(undefined as never, 'Is build b-17 done?'), { name: 'InvalidOptionError', option: 'agent' });
    await assert.rejects(door.run({ name: 'ops' } as never, 'Is build b-17 done?'), { name: 'InvalidOptionError', option: 'agent' });
    await assert.rejects(door.run(agent, 42 as never), { name: 'InvalidOptionError', option: 'input' });
    await assert.rejects(door.run(agent, { role: 'user', content: 'hi' } as never), { name: 'InvalidOptionError', option: 'input' });
    assert.equal(server.requests.length, 0);
  });
});

describe('breakerForOpenAIAgents: an agent tool between the rounds of a lead whose context compounds', () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'run'}: its small prompts do not restart the lead's growth, token drift trips at the lead's 4th turn as without it`, async () => {
      await using server = await compoundingLeadServer('input');
      const sessionId = `oa-compounding-lead-${stream}`;
      const { breaker, events, door } = governed(server, {}, sessionId);
      const researcher = new Agent({ name: 'researcher', model: server.modelId });
      const lead = new Agent({
        name: 'lead',
        model: server.modelId,
        tools: door.tools([researcher.asTool({ toolName: 'research', toolDescription: 'Researches a task' })]),
      });
      const error = await rejection(
        (async () => {
          if (!stream) return door.run(lead, 'Prepare the weekly operations brief.', { maxTurns: 12 });
          for await (const _event of await door.run(lead, 'Prepare the weekly operations brief.', { maxTurns: 12, stream: true })) {
            // drained only to drive the run
          }
        })(),
      );
      await assertLeadDriftCaught(error, events, breaker, sessionId, (await breaker.snapshot(sessionId)).counters.toolCalls);
    });
  }
});

describe("breakerForOpenAIAgents: governed tools in the SDK's own run", () => {
  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: a stop ends the run with the SDK's ToolCallError holding the category's error, not at its turn limit`, async () => {
      await using server = await loopingModel('check_build', { buildId: 'b-17' });
      const { door, events } = governed(server);
      const { check, executions } = checkBuild();
      // The SDK's own Runner and model: only the tools are governed, so no model turn is gated.
      const runner = new Runner({
        modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false }),
        tracingDisabled: true,
      });
      const agent = new Agent({ name: 'ci', model: 'm', tools: door.tools([check]) });
      const error = await rejection(
        (async () => {
          if (!stream) return runner.run(agent, 'Is build b-17 done?', { maxTurns: 20 });
          const result = await runner.run(agent, 'Is build b-17 done?', { maxTurns: 20, stream: true });
          for await (const _event of result) {
            // drained only to drive the run
          }
          await result.completed;
          if (result.error !== null && result.error !== undefined) throw result.error;
          return result;
        })(),
      );
      // The SDK wraps what a tool step throws; governed.run throws the category's error itself.
      assert.ok(error instanceof ToolCallError, `expected the SDK's ToolCallError, got ${String(error)}`);
      assert.ok(ToolSpiralError.isInstance(error.error), String(error.error));
      assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
      assert.equal(executions.length, 3, 'the blocked and the stopped calls did not run');
      assert.equal(server.requests.length, 5, 'no model turn after the stop');
    });
  }
});

describe('breakerForOpenAIAgents: how a streamed run that fails ends', () => {
  /** A store that cannot be read, for a breaker that fails closed. */
  class DownStore extends InMemoryBreakerStore {
    override async read(): Promise<never> {
      throw new Error('connection refused');
    }
  }

  const endings = [
    { ended: 'the breaker stops it', expected: ToolSpiralError, options: {}, maxTurns: 30 },
    { ended: 'the store is down', expected: BreakerUnavailableError, options: { store: new DownStore(), onStoreError: 'fail-closed' }, maxTurns: 30 },
    { ended: 'its turns run out', expected: MaxTurnsExceededError, options: {}, maxTurns: 2 },
  ] as const;
  for (const { ended, expected, options, maxTurns } of endings) {
    test(`${ended}: completed, read but not awaited, is no unhandled rejection; awaited, it rejects as the stream did`, async () => {
      await using server = await spiralServer();
      const { door } = governed(server, options);
      const { check } = checkBuild();
      const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const result = await door.run(agent, 'Is build b-17 done?', { stream: true, maxTurns });
        // Read, as a caller that passes the result on does, and left to the stream to report.
        const { completed } = result;
        const failed = await rejection(
          (async () => {
            for await (const _event of result) {
              // drained only to drive the run
            }
          })(),
        );
        assert.ok(failed instanceof expected, `expected ${expected.name}, got ${String(failed)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(unhandled, [], 'nothing rejected unhandled');
        assert.equal(await rejection(completed), failed, 'completed, awaited, rejects as the stream did');
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  }
});

describe('breakerForOpenAIAgents: a stop decided on the last turn the run may take', () => {
  // The spiral is stopped at the 5th call: the 5th turn is the last of 5, so no model turn is left to throw the stop from.
  for (const stream of [false, true]) {
    test(`rejects with the stop, not the SDK's MaxTurnsExceededError, carrying the run's own state (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await new ScriptedModelServer({
        script: (_request, index) =>
          index < 5 ? { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] } : { text: 'b-17 is still running.' },
      }).start();
      const sessionId = `oa-last-turn-stop-${stream}`;
      const { breaker, door } = governed(server, {}, sessionId);
      const { check, executions } = checkBuild();
      const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([check]) });

      let streamed: { readonly completed: Promise<void>; readonly error: unknown } | undefined;
      const error = await rejection(
        (async () => {
          if (!stream) return door.run(agent, 'Is build b-17 done?', { maxTurns: 5 });
          const result = await door.run(agent, 'Is build b-17 done?', { maxTurns: 5, stream: true });
          streamed = result;
          for await (const _event of result) {
            // drained only to drive the run
          }
        })(),
      );

      assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
      assert.equal(server.requests.length, 5);
      assert.equal(executions.length, 3);
      if (streamed !== undefined) {
        assert.equal(await rejection(streamed.completed), error, 'completed rejects with the stop too');
        assert.equal(streamed.error, error, 'result.error is the stop');
      }
      // The SDK's own state, which holds the stopped call with its refusal (a rebuilt one ends with the model's answer).
      const { state } = error as GovernedRunStop;
      assert.ok(state !== undefined, 'the stop carries a state');
      const outputs = state.history.filter((item) => item.type === 'function_call_result');
      assert.equal(outputs.length, 5);
      assert.match(JSON.stringify(outputs[4]), /\[AgentBreaker\]/, 'the stopped call with the refusal');
      // The session stays open, as for any stop: the caller now knows why.
      await assert.rejects(door.run(agent, 'Is build b-17 done?'), (e: unknown) => BreakerOpenError.isInstance(e));
      // After a reset the state resumes in the stopped run's session, given turns to go on with.
      await breaker.reset(sessionId);
      const resumed = await door.run(agent, state, { maxTurns: 10 });
      assert.equal(resumed.finalOutput, 'b-17 is still running.');
    });
  }
});

describe('breakerForOpenAIAgents: an agent tool named in delegation.subAgentTools', () => {
  const TASKS = [
    'Find the 2024 revenue of ACME Corp.',
    "Look up ACME Corp's revenue for 2024.",
    "What was ACME Corp's 2024 revenue? Check the filings.",
    'Search the filings again for the ACME Corp 2024 revenue.',
    'ACME Corp 2024 revenue: try once more.',
    'Revenue of ACME Corp in 2024, please.',
  ];
  const ANSWER = 'I could not find the 2024 revenue of ACME Corp in the available filings.';

  /** A lead that re-asks its researcher the same task worded anew each turn; the researcher answers the same every time. */
  function reaskingServer(): Promise<ScriptedModelServer> {
    return new ScriptedModelServer({
      script: (request) => {
        const tools = ((request.body.tools ?? []) as { function?: { name?: string } }[]).map((t) => t.function?.name);
        if (!tools.includes('researcher')) return { text: ANSWER };
        const asked = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
        return asked < TASKS.length ? { toolCalls: [{ name: 'researcher', arguments: { input: TASKS[asked] } }] } : { text: 'No revenue found.' };
      },
    }).start();
  }

  for (const named of [true, false]) {
    test(`${named ? 'named' : 'not named'}: a reworded re-ask with the same answer ${named ? 'is a delegation loop' : 'is a plain tool call, never a loop'}`, async () => {
      await using server = await reaskingServer();
      const { events, door } = governed(server, named ? { delegation: { subAgentTools: ['researcher'] } } : {});
      const researcher = new Agent({ name: 'researcher', model: server.modelId });
      const lead = new Agent({
        name: 'lead',
        model: server.modelId,
        tools: door.tools([researcher.asTool({ toolName: 'researcher', toolDescription: 'Researches a task' })]),
      });

      const ended = await door.run(lead, 'What was ACME Corp revenue in 2024?', { maxTurns: 20 }).then(
        (result) => result.finalOutput,
        (error: unknown) => error,
      );

      if (!named) {
        assert.equal(ended, 'No revenue found.', 'every reworded ask ran');
        assert.deepEqual(escalations(events), []);
        return;
      }
      assert.ok(DelegationLoopError.isInstance(ended), `expected DelegationLoopError, got ${String(ended)}`);
      assert.deepEqual(escalations(events), ['delegation_loop:steer', 'delegation_loop:block', 'delegation_loop:stop']);
      const researcherRuns = server.requests.filter((r) => !JSON.stringify(r.body.tools ?? []).includes('"researcher"')).length;
      assert.equal(researcherRuns, 2, 'the 3rd ask was blocked and the 4th stopped before the researcher ran');
      assert.match(JSON.stringify(server.requests[4]!.body.messages[0]), /Sub-agent \\"researcher\\" gave the same answer/, 'the lead was steered');
      assert.match(
        lastToolResult(server.requests[5]),
        /^\[AgentBreaker\] This call was NOT executed\. You have given sub-agent "researcher" a similar task 3 times/,
      );
    });
  }
});

describe('breakerForOpenAIAgents: handoffs', () => {
  /** The names of the tools a request offers the model. */
  const toolNames = (request: RecordedRequest): string[] =>
    ((request.body.tools ?? []) as Array<{ function?: { name?: unknown } }>).flatMap((t) => (typeof t.function?.name === 'string' ? [t.function.name] : []));

  /**
   * Triage hands billing one invoice at a time; billing looks it up and hands back. `handedOver`: the
   * invoice goes in the handoff's input (an `inputType`), else nothing goes with the handoff but the
   * lookup billing makes is new every time.
   */
  function invoiceRounds(handedOver: boolean): Promise<ScriptedModelServer> {
    const ids = ['inv-1', 'inv-2', 'inv-3', 'inv-4', 'inv-5'];
    return new ScriptedModelServer({
      script: (request) => {
        const tools = toolNames(request);
        const done = request.body.messages.filter((m) => m.role === 'tool' && /EUR/.test(String(m.content))).length;
        if (tools.includes('get_invoice')) {
          const last = request.body.messages.at(-1);
          if (last?.role === 'tool' && /EUR/.test(String(last.content))) return { toolCalls: [{ name: 'transfer_to_triage', arguments: {} }] };
          return { toolCalls: [{ name: 'get_invoice', arguments: { id: ids[done]! } }] };
        }
        if (done < ids.length) return { toolCalls: [{ name: 'transfer_to_billing', arguments: handedOver ? { invoice: ids[done]! } : {} }] };
        return { text: `${done} invoices, 150 EUR in all.` };
      },
    }).start();
  }

  for (const handedOver of [true, false]) {
    test(`a back-and-forth that makes progress is no delegation loop (${handedOver ? 'each handoff hands over a new item' : 'each return brings new work'})`, async () => {
      await using server = await invoiceRounds(handedOver);
      const { events, door } = governed(server);
      const amounts: Record<string, number> = { 'inv-1': 10, 'inv-2': 20, 'inv-3': 30, 'inv-4': 40, 'inv-5': 50 };
      const getInvoice = door.tool({
        name: 'get_invoice',
        description: 'An invoice by id',
        parameters: z.object({ id: z.string() }),
        execute: async ({ id }) => `invoice ${id}: ${amounts[id]} EUR`,
      });
      const billing = new Agent({ name: 'billing', model: server.modelId, tools: [getInvoice] });
      const triage = new Agent({
        name: 'triage',
        model: server.modelId,
        handoffs: [handedOver ? handoff(billing, { inputType: z.object({ invoice: z.string() }), onHandoff: () => {} }) : billing],
      });
      billing.handoffs = [triage];
      const result = await door.run(triage, 'What do invoices inv-1 to inv-5 come to?', { maxTurns: 40 });
      assert.equal(result.finalOutput, '5 invoices, 150 EUR in all.');
      assert.deepEqual(escalations(events), []);
    });
  }

  test('a steer decided on a handoff reaches the agent that handed off, at its next turn, never the agent it handed to', async () => {
    await using server = await new ScriptedModelServer({
      script: (request) => ({ toolCalls: [{ name: toolNames(request).find((n) => n.startsWith('transfer_to_'))!, arguments: {} }] }),
    }).start();
    const { door, events } = governed(server);
    const billing = new Agent({ name: 'billing', model: server.modelId, instructions: 'You handle billing.' });
    const triage = new Agent({ name: 'triage', model: server.modelId, instructions: 'You route questions.', handoffs: [billing] });
    billing.handoffs = [triage];
    assert.ok(DelegationLoopError.isInstance(await rejection(door.run(triage, 'How much is inv-1?', { maxTurns: 30 }))));
    assert.ok(escalations(events).includes('delegation_loop:steer'), escalations(events).join(' '));
    const turns = server.requests.map((request) => ({
      agent: toolNames(request).includes('transfer_to_billing') ? 'triage' : 'billing',
      system: String(request.body.messages[0]?.content ?? ''),
    }));
    const noted = turns.filter((turn) => /sub-agent "\w+" a similar task/.test(turn.system));
    assert.ok(noted.length > 0, 'the steer reached a model turn');
    for (const turn of noted) {
      const about = /sub-agent "(\w+)"/.exec(turn.system)![1];
      assert.notEqual(about, turn.agent, `a note about handing off to ${about} went to ${about} itself`);
    }
  });

  test('a handoff ping-pong with nothing new between the handoffs is still stopped as a delegation loop', async () => {
    await using server = await new ScriptedModelServer({
      script: (request) => ({ toolCalls: [{ name: toolNames(request).find((n) => n.startsWith('transfer_to_'))!, arguments: {} }] }),
    }).start();
    const { door } = governed(server);
    const billing = new Agent({ name: 'billing', model: server.modelId });
    const triage = new Agent({ name: 'triage', model: server.modelId, handoffs: [billing] });
    billing.handoffs = [triage];
    assert.ok(DelegationLoopError.isInstance(await rejection(door.run(triage, 'How much is inv-1?', { maxTurns: 30 }))));
  });
});

describe("breakerForOpenAIAgents: the SDK's own retry of a model call", () => {
  /** The runner retries a model call itself on the model's advice; the client does not. */
  function retryingDoor(server: ScriptedModelServer, options: AgentBreakerOptions = {}) {
    const breaker = new AgentBreaker({ telemetry: false, ...options });
    const events: BreakerEventRecord[] = [];
    breaker.on((event) => events.push(event));
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 0 });
    const modelProvider = new OpenAIProvider({ openAIClient: client, useResponses: false });
    const door = breakerForOpenAIAgents(breaker, { runConfig: { modelProvider, tracingDisabled: true } });
    const modelSettings = { retry: { maxRetries: 2, backoff: { initialDelayMs: 5 }, policy: retryPolicies.providerSuggested() } };
    return { door, events, modelSettings };
  }

  for (const stream of [false, true]) {
    test(`a 503 the provider advises retrying is retried through the door, as by the SDK alone (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await new ScriptedModelServer({ script: [{ error: { status: 503 } }, { text: 'Paid.' }] }).start();
      const { door, modelSettings } = retryingDoor(server);
      const agent = new Agent({ name: 'billing', model: server.modelId, modelSettings });
      const result = stream ? await door.run(agent, 'Is inv-1 paid?', { stream: true }) : await door.run(agent, 'Is inv-1 paid?');
      if (stream) await (result as { completed: Promise<void> }).completed;
      assert.equal(result.finalOutput, 'Paid.');
      assert.equal(server.requests.length, 2);
    });
  }

  test('a steer waiting for the model turn still goes with the retry of a turn that failed', async () => {
    // The same answer at every user turn: text repetition queues a steer for the next turn, which first fails.
    let turn = 0;
    await using server = await new ScriptedModelServer({
      script: () => {
        turn += 1;
        if (turn === 4) return { error: { status: 503 } };
        return { text: turn === 5 ? 'Let me try a different approach.' : 'I cannot find that order. Please check the number.' };
      },
    }).start();
    const { door, events, modelSettings } = retryingDoor(server);
    const agent = new Agent({ name: 'helper', model: server.modelId, modelSettings });
    const session = new MemorySession();
    for (const text of ['Help me.', 'ok', 'ok']) await door.run(agent, text, { session });
    assert.ok(escalations(events).includes('text_repetition:steer'), escalations(events).join(' '));
    await door.run(agent, 'ok', { session });
    const system = (request: RecordedRequest | undefined) =>
      JSON.stringify(request?.body.messages.filter((m) => m.role === 'system' || m.role === 'developer'));
    assert.equal(server.requests.length, 5);
    assert.match(system(server.requests[3]), /\[AgentBreaker\]/, 'the attempt that failed carried the steer');
    assert.match(system(server.requests[4]), /\[AgentBreaker\]/, 'the retry the model answered carries it too');
  });
});

describe('breakerForOpenAIAgents: the cost budget', () => {
  /** A model that works a step each turn, each turn 100,000 prompt tokens (gpt-4.1: $0.20 of input a turn). */
  function costlyRounds(): Promise<ScriptedModelServer> {
    let step = 0;
    return new ScriptedModelServer({
      script: () => ({ toolCalls: [{ name: 'work', arguments: { step: step++ } }], usage: { promptTokens: 100_000, completionTokens: 1_000 } }),
    }).start();
  }

  function costlyAgent(door: ReturnType<typeof breakerForOpenAIAgents>, model: Agent['model'] | undefined): Agent {
    const work = door.tool({
      name: 'work',
      description: 'Works a step',
      parameters: z.object({ step: z.number() }),
      execute: async ({ step }) => `step ${step} done`,
    });
    return new Agent({ name: 'worker', ...(model === undefined ? {} : { model }), tools: [work] });
  }

  test('an agent given a Model instance named through governed.model(m, name) spends the budget: wrap-up, then BudgetExceededError', async () => {
    await using server = await costlyRounds();
    const { breaker, door } = governed(server, { budget: { maxCostUsd: 1 } });
    const model = new OpenAIChatCompletionsModel(new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL }), 'gpt-4.1');
    const error = await rejection(door.run(costlyAgent(door, door.model(model, 'gpt-4.1')), 'Work.', { maxTurns: 12 }));
    assert.ok(BudgetExceededError.isInstance(error), String(error));
    assert.ok(server.requests.length < 12, `stopped before the turns ran out (${server.requests.length} requests)`);
    assert.equal((await breaker.health()).costBudget, 'enforced');
  });

  test('without its name, a Model instance cannot be priced: the cost budget is reported as not enforceable, not silently off', async () => {
    await using server = await costlyRounds();
    const { breaker, events, door } = governed(server, { budget: { maxCostUsd: 1 } });
    const model = new OpenAIChatCompletionsModel(new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL }), 'gpt-4.1');
    const error = await rejection(door.run(costlyAgent(door, door.model(model)), 'Work.', { maxTurns: 4 }));
    assert.ok(error instanceof MaxTurnsExceededError, String(error));
    assert.equal((await breaker.health()).costBudget, 'not_enforceable');
    assert.equal(events.filter((e) => e.type === 'warning' && /maxCostUsd is not enforceable/.test(e.message ?? '')).length, 1);
    assert.throws(() => door.model(model, ''), { name: 'InvalidOptionError', option: 'name' });
  });

  test("an agent without a model is priced as the SDK's default model, which its provider sends", async () => {
    const before = process.env.OPENAI_DEFAULT_MODEL;
    process.env.OPENAI_DEFAULT_MODEL = 'gpt-4.1';
    try {
      await using server = await costlyRounds();
      const { breaker, door } = governed(server, { budget: { maxCostUsd: 1 } });
      const error = await rejection(door.run(costlyAgent(door, undefined), 'Work.', { maxTurns: 12 }));
      assert.equal(server.requests[0]?.body.model, getDefaultModel());
      assert.ok(BudgetExceededError.isInstance(error), String(error));
      assert.equal((await breaker.health()).costBudget, 'enforced');
    } finally {
      if (before === undefined) delete process.env.OPENAI_DEFAULT_MODEL;
      else process.env.OPENAI_DEFAULT_MODEL = before;
    }
  });
});
