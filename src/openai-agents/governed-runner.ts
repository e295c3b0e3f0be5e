// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> and Tool<any> (its generics are invariant); these mirror them so any agent fits.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import {
  getDefaultModel,
  OpenAIProvider,
  RunState,
  Runner,
  type Agent,
  type AgentInputItem,
  type FunctionTool,
  type MCPServer,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type NonStreamRunOptions,
  type RunConfig,
  type RunResult,
  type Shell,
  type ShellTool,
  type StreamedRunResult,
  type StreamRunOptions,
  type Tool,
  type ToolGuardrailFunctionOutput,
  tool as sdkTool,
} from '@openai/agents';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import type { ObservingBreaker } from '../breaker/ai-sdk-adapter.ts';
import { assertObservingBreaker, blockedResult, resultText, steeredResult, steerNote } from '../breaker/door-session.ts';
import { agentOfTool, copyAgentOfTool } from './agent-tools.ts';
import { governApplyPatchTool, governComputerTool, governShellTool, type RunJudged } from './built-in-tools.ts';
import { governedStream } from './governed-stream.ts';
import { governMcpServer } from './mcp-servers.ts';
import { handoffTask } from './handoff-task.ts';
import { RunSession } from './run-session.ts';
import { keepSession, sessionOfState } from './state-session.ts';
import { responsesItemCalls, type HostedEvent } from '../breaker/hosted-calls.ts';
import { thrownText } from '../breaker/thrown-text.ts';
import { AgentBreakerError, BreakerUnavailableError, ToolCallBlockedError } from '../breaker/breaker-errors.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/**
 * What the SDK hands the model, and the output guardrail, in place of a tool
 * that threw (its default `errorFunction`, which it does not export): the
 * throw itself never reaches a guardrail, nor anything else outside the tool
 * the SDK built. Read as a failure, so that a tool failing again and again is
 * judged as an error loop; what failed is known only for a tool built by
 * `governed.tool`, whose `execute` the door wraps, and for an agent tool
 * whose nested run failed where the door sees it. A tool with an
 * `errorFunction` of its own is judged by its text (one that opens with
 * "Error" reads as a failure).
 */
const SDK_TOOL_ERROR_TEXT = 'An error occurred while running the tool. Please try again.';

/**
 * Whether a tool's output is one of the texts the SDK puts in place of a
 * failure: its default error text, or its default timeout text ("Tool 'x'
 * timed out after 500ms."), which the breaker reads as an outage.
 */
function isSdkFailureText(text: string, tool: string): boolean {
  if (text === SDK_TOOL_ERROR_TEXT) return true;
  const timeout = `Tool '${tool}' timed out after `;
  return text.startsWith(timeout) && /^\d+ms\.$/.test(text.slice(timeout.length));
}

/**
 * What ended a nested run (an `agent.asTool()` call's) as far as the door saw
 * it: the last throw of its model, or of a `governed.tool` tool, that nothing
 * answered or outlived. The SDK answers a nested run that failed with its
 * default text alone, as for any tool that threw.
 */
interface NestedRun {
  failure?: { readonly text: string; readonly callId?: string | undefined } | undefined;
}

/** Options of {@link breakerForOpenAIAgents}. */
export interface OpenAIAgentsBreakerOptions {
  /**
   * The breaker session every run belongs to.
   * @default for `governed.run`, the run's `conversationId`, else its `session`'s id, else a
   * fresh id per run; for the SDK's own `run` (or a `Runner` of yours) with governed tools or
   * models, which shows the door no run boundary, one id the door makes, shared by all of them
   */
  readonly sessionId?: string;
  /**
   * Configuration of the governed {@link Runner} (model provider, tracing, …).
   * Its model provider is wrapped so that every model it hands out is governed.
   * @default the SDK's defaults
   */
  readonly runConfig?: Partial<RunConfig>;
}

/** Run options the governed runner reads (the rest is passed on to the SDK untouched). */
interface RunOptionsRead {
  readonly conversationId?: string | undefined;
  readonly session?: { getSessionId(): Promise<string> } | undefined;
  /** The run's own context, which a state rebuilt for a stop keeps. */
  readonly context?: unknown;
  readonly maxTurns?: number | undefined;
}

/**
 * What a stop rejects `governed.run` (or its stream) with: the category's
 * error (`ToolSpiralError`, `BudgetExceededError`, …, or `BreakerOpenError`),
 * carrying the stopped run's state as the SDK's own errors do
 * (`MaxTurnsExceededError.state`), so its conversation can be read
 * (`state.history`), saved or, after `breaker.reset`, resumed
 * (`governed.run(agent, error.state)`, also once saved and restored: it stays
 * in the stopped run's session). A streamed run's, or a resumed one's, is the
 * run's own state, as is that of a run the SDK ended with an error of its own
 * after the stop (its turns running out on the turn the stop was decided on,
 * which the stop is rejected with instead: resume it with a larger
 * `maxTurns`); for a run the SDK keeps its state to itself until it returns,
 * a state rebuilt from the conversation its model was last sent and what it
 * answered. Not enumerable, so logging the error's fields does not print the
 * conversation.
 */
export type GovernedRunStop = (BreakerStop | BreakerUnavailableError) & { readonly state?: RunState<any, Agent<any, any>> };

/**
 * An `AgentBreakerError`, one member per code: narrowing a stop further with a
 * category's `isInstance` (`ToolSpiralError.isInstance(error)`) then keeps `state`.
 */
type BreakerStop = { [C in AgentBreakerError['code']]: AgentBreakerError & { readonly code: C } }[AgentBreakerError['code']];

/**
 * Tells a {@link GovernedRunStop} from any other error, across copies of the
 * package as every Governor error's `isInstance` does:
 * `if (GovernedRunStop.isInstance(error) && error.state) await governed.run(agent, error.state)`.
 */
export const GovernedRunStop = Object.freeze({
  /** True when `error` is a breaker stop (`AgentBreakerError` or, failing closed, `BreakerUnavailableError`); `state` is there when a governed run stopped. */
  isInstance(error: unknown): error is GovernedRunStop {
    return AgentBreakerError.isInstance(error) || BreakerUnavailableError.isInstance(error);
  },
});

/** The Agents SDK side of a governed session. */
export interface OpenAIAgentsBreaker {
  /** The runner whose model provider hands out governed models; handoffs are reported from its hooks. Prefer {@link run}. */
  readonly runner: Runner;
  /**
   * Runs an agent like the SDK's `run`, as one breaker session: every model turn
   * is gated and recorded with its usage, handoffs are recorded as delegations,
   * and a stop rejects with the category's error (`ToolSpiralError`, …; see
   * {@link GovernedRunStop}). `input` may be a run's `result.state` (after
   * approving or rejecting its interruptions): the resumed run goes on in the
   * session of the run it resumes, also when the state was saved
   * (`state.toString()`) and restored (`RunState.fromString`) in another
   * request or process, as a state saved with a run's stop is refused there
   * while that session is open. A saved state records the session's id (and
   * nothing else) in its model responses' `providerData.agentGovernor`, which
   * the model is never sent. A door given a `sessionId` runs every state in
   * it; a state that records none (saved by an earlier version, or stopped
   * before its model's first answer) runs in the session a new run would.
   */
  run<TAgent extends Agent<any, any>, TContext = undefined>(
    agent: TAgent,
    input: string | AgentInputItem[] | RunState<TContext, TAgent>,
    options?: NonStreamRunOptions<TContext, TAgent>,
  ): Promise<RunResult<TContext, TAgent>>;
  run<TAgent extends Agent<any, any>, TContext = undefined>(
    agent: TAgent,
    input: string | AgentInputItem[] | RunState<TContext, TAgent>,
    options?: StreamRunOptions<TContext, TAgent>,
  ): Promise<StreamedRunResult<TContext, TAgent>>;
  /**
   * The tools with the breaker's input guardrail (judges each call before it
   * runs: a blocked call is answered with the explanation instead of running)
   * and output guardrail (records the result; a steer is appended to it).
   * A local shell tool's shell and a patch tool's editor are wrapped the same
   * way: each command run or edit is judged before it runs and recorded with
   * its output. Tools the API runs itself (web search, code interpreter, hosted
   * MCP, a hosted shell) are returned unchanged and judged from the model's
   * answer: a hosted shell's run as a `shell` call with its commands and what
   * they printed, as a local one's is. A computer tool's computer is
   * wrapped too: each action (a click, typed text, a scroll, …) is judged
   * before it runs and recorded with the screenshot after it, by identity,
   * so the same action on a screen that does not change is a repeat; a
   * refused action does not run, and the model is told why with its next
   * turn (a screenshot has no room for the note). An
   * `agent.asTool()` tool is governed like a function tool; the tools of the
   * agent it runs must be governed too (`governed.run` checks them). A call
   * whose nested run fails is recorded with what failed in it: the nested
   * model's error, or the throw of a {@link tool} tool that ended the run (a
   * 503 is an outage); other failures (its turns running out) by the SDK's
   * default text. A
   * function tool that throws is judged by what the SDK answers the model
   * with, which by default does not say what failed: build the tool with
   * {@link tool} for the breaker to read the error itself.
   */
  // The SDK's own signatures use Agent<any, any> / Tool<any>: its generics are invariant.
  tools<T extends readonly Tool<any>[]>(tools: T): T;
  /**
   * MCP servers (an agent's `mcpServers`) whose tool calls are judged: each
   * call is judged before it goes to the server (a blocked one is answered
   * with the explanation as an error result, and never sent) and recorded with
   * the server's answer (an `isError` result, or a call that failed, with its
   * own error: an outage's 503 gets the allowance for transient errors); a
   * steer joins the result's text. Each returned server forwards everything
   * else to the one given: connect and close either.
   */
  mcpServers<T extends readonly MCPServer[]>(servers: T): T;
  /**
   * A model governed like the ones the runner's provider hands out, for
   * agents given a `Model` instance. `name`: the model's id (`gpt-4.1`),
   * which prices its turns for `budget.maxCostUsd`; a `Model` does not say
   * it, and without it a cost cap is not enforceable (a warning says so).
   */
  model(model: Model, name?: string): Model;
  /**
   * The SDK's `tool()`, its tool governed as {@link tools} governs one, and
   * a call whose `execute` throws recorded with the error thrown, as the AI
   * SDK and LangChain doors record it: an outage (503, 429, a timeout) gets
   * the allowance for transient errors, a rejection (`invoice not found`)
   * does not. The model still gets what the SDK answers a throw with (its
   * default text, or the tool's `errorFunction`'s). A tool built by the SDK's
   * own `tool()` is judged by that answer alone: the SDK keeps the error to
   * itself, and its default text does not say what failed.
   */
  readonly tool: typeof sdkTool;
}

const OPENAI_AGENTS_BREAKER_RULES: OptionRules<OpenAIAgentsBreakerOptions> = {
  sessionId: is.string({ nonEmpty: true }),
  runConfig: is.object(),
};

/** What `execute` is handed as its third argument (the SDK does not export the type). */
interface ExecuteDetails {
  readonly toolCall?: { readonly callId: string };
  readonly signal?: AbortSignal;
}

/** A shell tool that runs commands here (a hosted one runs them in the API's container). */
function isLocalShell(tool: Tool<any>): tool is ShellTool & { shell: Shell } {
  return tool.type === 'shell' && 'shell' in tool && tool.shell !== undefined;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function textOfOutput(output: ModelResponse['output']): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) if (part.type === 'output_text') text += part.text;
  }
  return text;
}

/**
 * The calls the API ran itself in a turn (hosted web or file search, pages
 * opened, code run, commands its hosted shell ran), in order. A hosted
 * shell's call and output are items of their own (`shell_call`,
 * `shell_call_output`); a local shell's output is never in the model's answer.
 */
function hostedCallsOf(output: ModelResponse['output']): HostedEvent[] {
  return responsesItemCalls(
    output.map((item) =>
      // The SDK keeps the API's item as providerData, its status and (for an MCP call) its output apart.
      item.type === 'hosted_tool_call' ? { type: item.name, output: item.output, ...item.providerData, status: item.status } : item,
    ),
  );
}

/** The user's message that ends a model turn's input (a run's first turn), with its place; undefined mid-run. */
function userTurnOf(input: ModelRequest['input']): { position: number; text: string } | undefined {
  if (typeof input === 'string') return { position: 0, text: input };
  const last = input.at(-1);
  if (last === undefined || !('role' in last) || last.role !== 'user') return undefined;
  const content = (last as { content: unknown }).content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: { type?: unknown; text?: unknown }) => (part.type === 'input_text' && typeof part.text === 'string' ? part.text : '')).join('')
        : '';
  return { position: input.length - 1, text };
}

function withSteers(request: ModelRequest, steers: string[]): ModelRequest {
  if (steers.length === 0) return request;
  const text = steerNote(steers);
  return { ...request, systemInstructions: request.systemInstructions ? `${request.systemInstructions}\n\n${text}` : text };
}

/**
 * Puts a breaker on OpenAI Agents SDK runs:
 *
 * ```ts
 * const governed = breakerForOpenAIAgents(breaker);
 * const agent = new Agent({ name: 'ops', model: 'gpt-4.1', tools: governed.tools([checkBuild]) });
 * const result = await governed.run(agent, 'Is build b-17 done?', { conversationId });
 * ```
 */
export function breakerForOpenAIAgents(breaker: ObservingBreaker, options: OpenAIAgentsBreakerOptions = {}): OpenAIAgentsBreaker {
  assertObservingBreaker(breaker);
  validateOptions('breakerForOpenAIAgents', options, OPENAI_AGENTS_BREAKER_RULES);
  const current = new AsyncLocalStorage<RunSession>();
  // Outside governed.run (the SDK's own run with governed tools or models) everything is one session.
  const outside = new RunSession(breaker, options.sessionId ?? randomUUID());
  const sessionNow = (): RunSession => current.getStore() ?? outside;

  const nestedRuns = new AsyncLocalStorage<NestedRun>();
  /** Notes, for the agent tool whose nested run this is (if it is one), what failed last, or that the run went on. */
  const nestedFailure = (failure: NestedRun['failure']): void => {
    const nested = nestedRuns.getStore();
    if (nested !== undefined) nested.failure = failure;
  };

  const governedModels = new WeakSet<Model>();
  const model = (inner: Model, name?: string): Model => {
    if (typeof inner !== 'object' || inner === null || typeof inner.getResponse !== 'function' || typeof inner.getStreamedResponse !== 'function') {
      throw new InvalidOptionError('model', 'must be an Agents SDK Model (with getResponse and getStreamedResponse), e.g. from a model provider');
    }
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw new InvalidOptionError('name', `must be the model's id, a non-empty string such as 'gpt-4.1'; got ${describeValue(name)}`);
    }
    const wrapped = governModel(inner, name);
    governedModels.add(wrapped);
    return wrapped;
  };
  /** The gate of a model turn, after the user turn its input ends with (if it does; see `DoorSession.noteUserTurn`). */
  const gate = async (session: RunSession, request: ModelRequest): Promise<void> => {
    session.noteConversation(request.input);
    await session.settle();
    const turn = userTurnOf(request.input);
    if (turn !== undefined) await session.noteUserTurn(turn.position, turn.text);
    await session.gateModelCall();
  };
  /** `name`: the model's id as the provider was asked for it, which prices its turns (budget.maxCostUsd). */
  const governModel = (inner: Model, name?: string): Model => ({
    // What the SDK's runner reads of a model besides its two calls: its retry advice (retryPolicies.providerSuggested)
    // and whether a stored prompt may choose it.
    ...(typeof inner.getRetryAdvice === 'function' ? { getRetryAdvice: inner.getRetryAdvice.bind(inner) } : {}),
    ...(inner.supportsPromptModelSelection === undefined ? {} : { supportsPromptModelSelection: inner.supportsPromptModelSelection }),
    async getResponse(request) {
      const session = sessionNow();
      await gate(session, request);
      let response: ModelResponse;
      const steers = session.takeSteers();
      try {
        response = await inner.getResponse(withSteers(request, steers));
      } catch (error) {
        // Not answered: the runner's retry of this call (modelSettings.retry) must carry them still.
        session.returnSteers(steers);
        nestedFailure({ text: thrownText(error) });
        throw error;
      }
      // Answered after all (the SDK's own retry of a model call): a failure before it did not end the run.
      nestedFailure(undefined);
      session.noteConversation(request.input, response.output);
      session.noteResponse(response);
      await recordTurn(session, response.usage, response.output, name);
      return response;
    },
    async *getStreamedResponse(request) {
      const session = sessionNow();
      await gate(session, request);
      const steers = session.takeSteers();
      let answering = false;
      try {
        for await (const event of inner.getStreamedResponse(withSteers(request, steers))) {
          answering = true;
          if (event.type === 'response_done') {
            nestedFailure(undefined);
            const output = event.response.output as ModelResponse['output'];
            session.noteConversation(request.input, output);
            await recordTurn(session, event.response.usage, output, name);
          }
          yield event;
        }
      } catch (error) {
        // Failed before the model said anything: a retry of this call must carry them still.
        if (!answering) session.returnSteers(steers);
        nestedFailure({ text: thrownText(error) });
        throw error;
      }
    },
  });

  /**
   * An agent whose model or tools the breaker cannot see would run ungoverned
   * without a word: refuse it, saying what to wrap. The agents checked are
   * the one run, those it can hand off to, and those its agent tools run.
   */
  const checkGoverned = (start: Agent<any, any>): void => {
    const seen = new Set<Agent<any, any>>();
    const queue = [start];
    for (let agent = queue.pop(); agent !== undefined; agent = queue.pop()) {
      if (seen.has(agent)) continue;
      seen.add(agent);
      if (typeof agent.model === 'object' && agent.model !== null && !governedModels.has(agent.model)) {
        throw new InvalidOptionError(
          `agent "${agent.name}".model`,
          'is a Model instance the breaker cannot see: pass it through governed.model(), or give a model name',
        );
      }
      for (const tool of agent.tools) {
        const governed =
          tool.type === 'function'
            ? tool.inputGuardrails?.includes(inputGuardrail) === true
            : isLocalShell(tool) || tool.type === 'apply_patch' || tool.type === 'computer'
              ? governedBuiltIns.has(tool)
              : true;
        if (!governed) throw new InvalidOptionError(`agent "${agent.name}".tools["${tool.name}"]`, 'is not governed: pass the tools through governed.tools()');
        const runs = agentOfTool(tool);
        if (runs === null) {
          throw new InvalidOptionError(
            `agent "${agent.name}".tools["${tool.name}"]`,
            "is an agent tool (agent.asTool()) whose agent's tools the breaker cannot see in this installation of @openai/agents: wrap the agent in a function tool whose execute runs it with governed.run",
          );
        }
        if (runs !== undefined) queue.push(runs);
      }
      for (const server of agent.mcpServers ?? []) {
        if (!governedServers.has(server)) {
          throw new InvalidOptionError(`agent "${agent.name}".mcpServers["${server.name}"]`, 'is not governed: pass the servers through governed.mcpServers()');
        }
      }
      for (const next of agent.handoffs) queue.push('agent' in next && !('handoffs' in next) ? next.agent : (next as Agent<any, any>));
    }
  };

  const recordTurn = async (
    session: RunSession,
    usage: { inputTokens?: number; outputTokens?: number } | undefined,
    output: ModelResponse['output'],
    modelName: string | undefined,
  ): Promise<void> => {
    const decision = await session.noteRound(
      {
        kind: 'model',
        promptTokens: usage?.inputTokens ?? null,
        completionTokens: usage?.outputTokens ?? null,
        text: textOfOutput(output),
        ...(modelName === undefined ? {} : { model: modelName }),
      },
      hostedCallsOf(output),
    );
    // A model-level verdict (budget wrap-up, token drift) reaches the model on its next turn.
    session.queueSteer(decision);
  };

  /**
   * Notes a stop decided in a tool guardrail. In `governed.run` the next model
   * turn throws it, with the run's state. In the SDK's own run no model turn
   * may be gated (its model is not governed): there it is thrown now, which
   * the SDK lets out of a guardrail, so the run ends with it rather than at
   * its turn limit, every call answered that the breaker is open.
   */
  const stopHere = (session: RunSession, decision: BreakerDecision): void => {
    if (current.getStore() === undefined) session.stopIf(decision);
    else session.noteStop(decision);
  };

  const inputGuardrail = {
    type: 'tool_input' as const,
    name: 'AgentBreaker',
    run: async ({ toolCall }: { toolCall: { name: string; arguments: string; callId: string } }): Promise<ToolGuardrailFunctionOutput> => {
      const session = sessionNow();
      const decision = await breaker.checkToolCall(session.sessionId, { tool: toolCall.name, args: parseArgs(toolCall.arguments) });
      // The SDK turns errors in a tool step into tool results: a stop is thrown at the next model turn.
      stopHere(session, decision);
      if (decision.action === 'block' || decision.action === 'stop') return { behavior: { type: 'rejectContent', message: blockedResult(decision) } };
      if (decision.action === 'steer') session.verdicts.set(toolCall.callId, decision);
      return { behavior: { type: 'allow' } };
    },
  };

  const outputGuardrail = {
    type: 'tool_output' as const,
    name: 'AgentBreaker',
    run: async ({
      toolCall,
      output,
    }: {
      toolCall: { name: string; arguments: string; callId: string };
      output: unknown;
    }): Promise<ToolGuardrailFunctionOutput> => {
      const session = sessionNow();
      const text = resultText(output);
      // The SDK's answer to a throw stands in for the error; the error itself is recorded where the door saw it.
      const thrown = session.takeThrown(toolCall.callId);
      // Answered, the throw did not end the nested run this call may be part of.
      if (thrown !== undefined && nestedRuns.getStore()?.failure?.callId === toolCall.callId) nestedFailure(undefined);
      stopHere(
        session,
        await session.observe({
          kind: 'tool_call',
          tool: toolCall.name,
          args: parseArgs(toolCall.arguments),
          result: thrown ?? text,
          error: thrown !== undefined || isSdkFailureText(text, toolCall.name),
        }),
      );
      const steer = session.verdicts.get(toolCall.callId);
      session.verdicts.delete(toolCall.callId);
      if (steer === undefined) return { behavior: { type: 'allow' } };
      return { behavior: { type: 'rejectContent', message: steeredResult(text, steer) } };
    },
  };

  const runJudged: RunJudged = async (call) => {
    const session = sessionNow();
    const decision = await breaker.checkToolCall(session.sessionId, { tool: call.tool, args: call.args });
    session.noteStop(decision);
    if (decision.action === 'block' || decision.action === 'stop') {
      if (call.refused !== undefined) return call.refused(blockedResult(decision));
      session.deferSteer(decision);
      throw new ToolCallBlockedError(blockedResult(decision));
    }
    const observe = async (result: string, error: boolean) =>
      session.noteStop(await session.observe({ kind: 'tool_call', tool: call.tool, args: call.args, result, error }));
    let result: Awaited<ReturnType<typeof call.run>>;
    try {
      result = await call.run();
    } catch (error) {
      // The SDK answers the model with the throw's message (or its own text): the same failure.
      await observe(error instanceof Error ? error.message : String(error), true);
      // Thrown, the call has no result of its own to carry the steer: it goes with the next model turn.
      if (decision.action === 'steer') session.deferSteer(decision);
      throw error;
    }
    const { text, error } = call.read(result);
    await observe(text, error);
    if (decision.action !== 'steer') return result;
    const noted = call.noted(result, steerNote([decision.message ?? '']));
    if (noted === undefined) session.deferSteer(decision);
    return noted ?? result;
  };

  /**
   * An agent tool's `invoke`, its nested run watched: when the run fails, the
   * SDK answers with its default text alone, and the call is recorded with
   * what failed in it instead (a 503 of the nested model is an outage, as
   * for {@link tool}). Other failures of the nested run (its turns running
   * out, a guardrail tripping) are seen by no wrapper and keep that text.
   */
  const delegating =
    (invoke: FunctionTool<any>['invoke']): FunctionTool<any>['invoke'] =>
    async (runContext, input, details) => {
      const nested: NestedRun = {};
      const output = await nestedRuns.run(nested, () => sessionNow().runTool(() => invoke(runContext, input, details)));
      const callId = details?.toolCall?.callId;
      if (nested.failure !== undefined && callId !== undefined && output === SDK_TOOL_ERROR_TEXT) sessionNow().noteThrown(callId, nested.failure.text);
      return output;
    };

  /** The shell, patch and computer tools wrapped here, which {@link checkGoverned} accepts. */
  const governedBuiltIns = new WeakSet<object>();
  const governTool = (tool: Tool<any>): Tool<any> => {
    if (governedBuiltIns.has(tool)) return tool;
    if (tool.type === 'function') {
      if (tool.inputGuardrails?.includes(inputGuardrail) === true) return tool;
      const governed = {
        ...tool,
        inputGuardrails: [...(tool.inputGuardrails ?? []), inputGuardrail],
        outputGuardrails: [...(tool.outputGuardrails ?? []), outputGuardrail],
        ...(agentOfTool(tool) === undefined ? {} : { invoke: delegating(tool.invoke) }),
      };
      copyAgentOfTool(tool, governed);
      return governed;
    }
    const governed = isLocalShell(tool)
      ? governShellTool(tool, runJudged)
      : tool.type === 'apply_patch'
        ? governApplyPatchTool(tool, runJudged)
        : tool.type === 'computer'
          ? governComputerTool(tool, runJudged)
          : tool;
    if (governed !== tool) governedBuiltIns.add(governed);
    return governed;
  };

  const tool = ((toolOptions: { execute?: unknown }) => {
    const execute = toolOptions?.execute;
    if (typeof execute !== 'function') {
      throw new InvalidOptionError('execute', `must be the function the tool runs, as for the SDK's tool(); got ${describeValue(execute)}`);
    }
    const run = async (input: unknown, context: unknown, details?: ExecuteDetails): Promise<unknown> => {
      try {
        return await sessionNow().runTool(() => execute.call(toolOptions, input, context, details));
      } catch (error) {
        // An aborted call (its timeout, the run cancelled) is answered by the SDK without a result of its own to record.
        const callId = details?.toolCall?.callId;
        if (callId !== undefined && details?.signal?.aborted !== true) {
          const text = thrownText(error);
          sessionNow().noteThrown(callId, text);
          nestedFailure({ text, callId });
        }
        throw error;
      }
    };
    // The SDK names a tool given no name after its execute function.
    Object.defineProperty(run, 'name', { value: execute.name });
    return governTool(sdkTool({ ...toolOptions, execute: run } as Parameters<typeof sdkTool>[0]));
  }) as typeof sdkTool;

  const tools = <T extends readonly Tool<any>[]>(list: T): T => {
    if (!Array.isArray(list)) throw new InvalidOptionError('tools', `must be an array of the SDK's tools, such as [checkBuild]; got ${describeValue(list)}`);
    return list.map((tool: unknown, i) => {
      if (typeof tool !== 'object' || tool === null || typeof (tool as { type?: unknown }).type !== 'string') {
        throw new InvalidOptionError(`tools[${i}]`, `must be an Agents SDK tool, such as tool({ name, parameters, execute }); got ${describeValue(tool)}`);
      }
      return governTool(tool as Tool<any>);
    }) as unknown as T;
  };

  /** The MCP servers wrapped here, which {@link checkGoverned} accepts. */
  const governedServers = new WeakSet<MCPServer>();
  const mcpServers = <T extends readonly MCPServer[]>(list: T): T => {
    if (!Array.isArray(list)) {
      throw new InvalidOptionError('mcpServers', `must be an array of the SDK's MCP servers, such as [new MCPServerStdio({ … })]; got ${describeValue(list)}`);
    }
    return list.map((server: unknown, i) => {
      const candidate = server as Partial<MCPServer> | null;
      if (typeof candidate !== 'object' || candidate === null || typeof candidate.callTool !== 'function' || typeof candidate.listTools !== 'function') {
        throw new InvalidOptionError(`mcpServers[${i}]`, `must be an Agents SDK MCP server, such as new MCPServerStdio({ … }); got ${describeValue(server)}`);
      }
      if (governedServers.has(server as MCPServer)) return server;
      const governed = governMcpServer(server as MCPServer, runJudged);
      governedServers.add(governed);
      return governed;
    }) as unknown as T;
  };

  const given = options.runConfig?.modelProvider as unknown;
  // Checked here: the SDK would only fail when the first turn asks it for a model.
  if (given !== undefined && typeof (given as { getModel?: unknown } | null)?.getModel !== 'function') {
    throw new InvalidOptionError(
      'runConfig.modelProvider',
      `must be an Agents SDK ModelProvider (with getModel), such as new OpenAIProvider(); got ${describeValue(given)}`,
    );
  }
  const base = new Runner(options.runConfig);
  const provider: ModelProvider = base.config.modelProvider;
  // An agent without a model gets the provider's default: the SDK's, which prices its turns, when the provider is the SDK's own.
  const pricedName = (name: string | undefined): string | undefined => (name ? name : provider instanceof OpenAIProvider ? getDefaultModel() : undefined);
  const runner = new Runner({
    ...options.runConfig,
    modelProvider: { getModel: async (name) => governModel(await provider.getModel(name), pricedName(name)) },
  });
  // The run's context and current agent, for the state a stop carries.
  runner.on('agent_start', (context, agent) => sessionNow().noteAgent(context, agent));
  runner.on('agent_handoff', (_context, from, to) => {
    const session = sessionNow();
    const turn = session.lastTurn;
    const task = turn === undefined ? '' : handoffTask(turn.input, turn.output, from, to);
    const input = task === '' ? `handoff from ${from.name}` : `handoff from ${from.name}\n${task}`;
    session.track(
      session.observe({ kind: 'delegation', agent: to.name, input, output: '' }).then((decision) => {
        session.noteStop(decision);
        // The next turn is the receiving agent's: the steer is for the agent that handed off, at its own next turn.
        session.holdSteerFor(from.name, decision);
      }),
    );
  });

  /**
   * A run resumed from a state goes on in the session the state belongs to
   * (the object's, else the one its saved text recorded), unless this door
   * was given its own; a state saved where none was recorded falls back to
   * what a new run would use.
   */
  const sessionIdFor = async (runOptions: RunOptionsRead | undefined, resumed: RunState<any, Agent<any, any>> | undefined): Promise<string> => {
    if (options.sessionId !== undefined) return options.sessionId;
    const kept = resumed === undefined ? undefined : sessionOfState(resumed);
    if (kept !== undefined) return kept;
    if (typeof runOptions?.conversationId === 'string' && runOptions.conversationId !== '') return runOptions.conversationId;
    if (runOptions?.session !== undefined) return runOptions.session.getSessionId();
    return randomUUID();
  };

  async function run(agent: unknown, input: unknown, runOptions?: RunOptionsRead): Promise<unknown> {
    checkRunArguments(agent, input);
    checkGoverned(agent);
    const resumed = input instanceof RunState ? (input as RunState<any, Agent<any, any>>) : undefined;
    const sessionId = await sessionIdFor(runOptions, resumed);
    const adopt = (state: RunState<any, Agent<any, any>>) => keepSession(state, sessionId);
    if (resumed !== undefined) adopt(resumed);
    const session = new RunSession(breaker, sessionId, {
      agent: resumed?.currentAgent ?? agent,
      context: runOptions?.context,
      maxTurns: runOptions?.maxTurns,
      adopt,
    });
    session.runState = resumed;
    const stopAfter = async (): Promise<void> => {
      await session.settle();
      session.rethrowStop();
    };
    /**
     * What a run that failed rejects with: a stop decided on the turn its
     * turns ran out on (or before anything else ended it) was only noted, for
     * a next model turn that never came, and it is why the session is open.
     */
    const stopOr = async (error: unknown): Promise<unknown> => {
      await session.settle();
      const stop = session.stopped;
      if (stop === undefined || stop === error) return error;
      // The SDK hands its state out with its own errors: the run's own state, which the stop carries then.
      const state = (error as { state?: unknown } | null)?.state;
      if (session.runState === undefined && state instanceof RunState) {
        session.runState = state as RunState<any, Agent<any, any>>;
        adopt(session.runState);
      }
      return stop;
    };
    return current.run(session, async () => {
      let result: RunResult<unknown, Agent<any, any>> | StreamedRunResult<unknown, Agent<any, any>>;
      try {
        result = (await runner.run(
          agent,
          input as string | AgentInputItem[] | RunState<unknown, Agent<any, any>>,
          runOptions as NonStreamRunOptions<unknown>,
        )) as RunResult<unknown, Agent<any, any>> | StreamedRunResult<unknown, Agent<any, any>>;
      } catch (error) {
        throw await stopOr(error);
      }
      session.runState = result.state;
      adopt(result.state);
      // A stop decided on the last tool step (toolUseBehavior 'stop_on_first_tool') has no next model turn to surface on.
      if ('completed' in result) return governedStream(result, stopAfter, stopOr, () => session.stopped);
      await stopAfter();
      return result;
    });
  }

  return { runner, run: run as unknown as OpenAIAgentsBreaker['run'], tools, tool, mcpServers, model };
}

/**
 * Refuses, as a typed error naming the argument, what the SDK would fail on
 * with a bare TypeError from deep inside a run.
 */
function checkRunArguments(agent: unknown, input: unknown): asserts agent is Agent<any, any> {
  const candidate = agent as Partial<Agent<any, any>> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.name !== 'string' ||
    !Array.isArray(candidate.tools) ||
    !Array.isArray(candidate.handoffs)
  ) {
    throw new InvalidOptionError('agent', `must be an Agents SDK Agent, such as new Agent({ name, instructions, tools }); got ${describeValue(agent)}`);
  }
  if (typeof input !== 'string' && !Array.isArray(input) && !(input instanceof RunState)) {
    throw new InvalidOptionError(
      'input',
      `must be the task as a string, a list of input items, or a run's state to resume (result.state); got ${describeValue(input)}`,
    );
  }
}
