import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';
import { z } from 'zod';
import type { ObservingBreaker } from '../breaker/ai-sdk-adapter.ts';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import { assertObservingBreaker, blockedResult, DoorSessions, resultText, steeredResult, steerNote, type DoorSession } from '../breaker/door-session.ts';
import { anthropicBlockCalls, responsesItemCalls, type HostedEvent } from '../breaker/hosted-calls.ts';
import { thrownText } from '../breaker/thrown-text.ts';
import { insideToolOf } from '../chat/tool-scope.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link governorMiddleware}. */
export interface GovernorMiddlewareOptions {
  /**
   * The breaker session every run of the agent belongs to.
   * @default LangGraph's `thread_id` from the run config (`configurable.thread_id`), else a fresh id per `invoke`/`stream`
   */
  readonly sessionId?: string;
  /**
   * Answer the model for a tool that throws, as LangChain's tool node does
   * when no middleware is there (`<error>\n Please fix your mistakes.`), so
   * that adding the breaker does not make tool errors end runs: LangChain
   * re-raises an error that comes out of a `wrapToolCall` middleware. `false`
   * records the failure and throws the error on as the tool threw it, for
   * LangChain middleware that handles tool errors itself
   * (`toolRetryMiddleware`, `toolErrorMiddleware`, your own): placed before
   * the breaker in `middleware`, they get the error, as without it, and a
   * steer decided for the call goes into the next model call instead.
   * @default true
   */
  readonly handleToolErrors?: boolean;
}

/** State key holding the per-invocation session id when there is neither a `sessionId` option nor a `thread_id`. */
const GOVERNOR_MIDDLEWARE_RULES: OptionRules<GovernorMiddlewareOptions> = { sessionId: is.string({ nonEmpty: true }), handleToolErrors: is.boolean() };

const SESSION_KEY = 'governorSessionId';

interface RunConfigLike {
  readonly configurable?: { readonly thread_id?: unknown } | undefined;
}

function textOf(content: BaseMessage['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? part['text'] : '')).join('');
}

/**
 * The calls the model's API ran itself in a reply (hosted web or file
 * search, pages opened or fetched, code run, commands its hosted shell ran),
 * in order: `ChatOpenAI` on the Responses API keeps those items in
 * `additional_kwargs.tool_outputs`, and the whole answer's output items in
 * `response_metadata.output`; `ChatAnthropic` keeps its server tool blocks in
 * the content.
 */
function hostedCallsOf(reply: AIMessage): HostedEvent[] {
  // A streamed reply's tool_outputs leave a hosted shell's output out; its output items hold it, as ChatOpenAI itself prefers them.
  const output = reply.response_metadata?.['output'];
  const outputs = Array.isArray(output) && output.length > 0 ? output : reply.additional_kwargs['tool_outputs'];
  const calls = Array.isArray(outputs) ? responsesItemCalls(outputs) : [];
  return Array.isArray(reply.content) ? [...calls, ...anthropicBlockCalls(reply.content)] : calls;
}

/** The tool message for a call, with the steer appended where the model reads it. */
function withSteer(message: ToolMessage, decision: BreakerDecision): ToolMessage {
  const content =
    typeof message.content === 'string'
      ? steeredResult(message.content, decision)
      : [...message.content, { type: 'text' as const, text: steeredResult('', decision) }];
  return new ToolMessage({ ...message, content, tool_call_id: message.tool_call_id });
}

/**
 * A LangGraph `Command` a tool returned to update the graph's state (told by
 * its `lg_name`, as LangGraph's own `isCommand` does: this package does not
 * depend on @langchain/langgraph).
 */
interface CommandLike {
  readonly lg_name: 'Command';
  readonly update?: unknown;
  readonly resume?: unknown;
  readonly graph?: unknown;
  readonly goto?: unknown;
}

function isCommand(value: unknown): value is CommandLike {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype !== Object.prototype && prototype !== null && (value as { lg_name?: unknown }).lg_name === 'Command';
}

/** The messages a command's update writes: its `messages` key, or its `messages` channel (the update as `[channel, value]` pairs). */
function commandMessages(update: unknown): unknown[] | undefined {
  if (Array.isArray(update)) {
    const channel = update.find((pair: unknown) => Array.isArray(pair) && pair[0] === 'messages') as [string, unknown] | undefined;
    return Array.isArray(channel?.[1]) ? channel[1] : undefined;
  }
  const messages = typeof update === 'object' && update !== null ? (update as { messages?: unknown }).messages : undefined;
  return Array.isArray(messages) ? messages : undefined;
}

/** The update with its messages replaced, in the form it came in. */
function withCommandMessages(update: unknown, messages: unknown[]): unknown {
  if (Array.isArray(update)) return update.map((pair: unknown) => (Array.isArray(pair) && pair[0] === 'messages' ? ['messages', messages] : pair));
  return { ...(update as object), messages };
}

/**
 * What a tool that returned a command answered a call with, as the breaker
 * records it: the command's tool message for the call (the result the model
 * reads), else what the update writes (the state it changes is the result).
 */
function commandResult(command: CommandLike, callId: string | undefined): { message: ToolMessage | undefined; text: string; error: boolean } {
  const message = commandMessages(command.update)?.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === callId);
  if (message !== undefined)
    return { message, text: typeof message.content === 'string' ? message.content : resultText(message.content), error: message.status === 'error' };
  return { message, text: resultText(command.update ?? null), error: false };
}

/** The command with the steer appended to the tool message the model reads; unchanged when it has none. */
function commandWithSteer(command: CommandLike, message: ToolMessage | undefined, decision: BreakerDecision): CommandLike {
  const messages = commandMessages(command.update);
  if (message === undefined || messages === undefined) return command;
  const update = withCommandMessages(
    command.update,
    messages.map((m) => (m === message ? withSteer(message, decision) : m)),
  );
  const Command = command.constructor as new (args: Omit<CommandLike, 'lg_name'>) => CommandLike;
  return new Command({ update, resume: command.resume, graph: command.graph, goto: command.goto });
}

/** What the model reads for a call its run ended before (a stop thrown after the model answered, with a checkpointer keeping the thread). */
const NOT_RUN = steerNote(['This call was not run: the run ended before it.']);

/**
 * The messages with every tool call answered: a stop is thrown after the
 * model's answer is in the thread, so with a checkpointer the thread keeps
 * calls no tool answered, which the provider's API refuses on the next
 * request. Each gets an error result right after its call's other results,
 * in the request only (the thread is left as it is).
 */
function withEveryCallAnswered(messages: BaseMessage[]): BaseMessage[] {
  const answered = new Set(messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.tool_call_id));
  const out: BaseMessage[] = [];
  let added = false;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    out.push(message);
    if (!AIMessage.isInstance(message) || !message.tool_calls?.length) continue;
    while (i + 1 < messages.length && ToolMessage.isInstance(messages[i + 1])) out.push(messages[++i]!);
    for (const call of message.tool_calls) {
      if (call.id === undefined || answered.has(call.id)) continue;
      out.push(new ToolMessage({ content: NOT_RUN, tool_call_id: call.id, name: call.name, status: 'error' }));
      added = true;
    }
  }
  return added ? out : messages;
}

/**
 * The door sessions of each breaker, shared by every middleware made for it:
 * a server that builds its agent per request resumes a run paused for human
 * approval with another middleware than the one that judged the paused
 * round's calls, and those verdicts must reach the calls it runs.
 */
const doorSessions = new WeakMap<ObservingBreaker, DoorSessions>();

function doorSessionsOf(breaker: ObservingBreaker): DoorSessions {
  let sessions = doorSessions.get(breaker);
  if (sessions === undefined) doorSessions.set(breaker, (sessions = new DoorSessions(breaker)));
  return sessions;
}

/** Whether a tool call was paused by LangGraph's `interrupt()` (to be run again, from the start, when the thread resumes). */
function isInterrupt(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return (error as { is_bubble_up?: unknown } | null)?.is_bubble_up === true && (name === 'GraphInterrupt' || name === 'NodeInterrupt');
}

/**
 * The AgentBreaker as LangChain v1 agent middleware, for `createAgent({ middleware })`:
 *
 * ```ts
 * const agent = createAgent({ model, tools, middleware: [governorMiddleware(breaker)] });
 * await agent.invoke({ messages }, { configurable: { thread_id: 'c-42' } });
 * ```
 *
 * - before each model call the session is gated (`beforeModel`): a stop throws;
 * - pending steer messages are added to the system message of the next model call (`wrapModelCall`);
 * - after each model call the round is recorded with its token usage, and each tool
 *   call it asks for is judged before any runs (`afterModel`), as in the ChatClient;
 * - `wrapToolCall` answers a blocked call with a `ToolMessage` carrying the
 *   breaker's explanation (the tool does not run), appends the steer to a steered
 *   call's result, and records every result.
 *
 * A call paused for human approval (`interrupt()` in the tool, or
 * `humanInTheLoopMiddleware`) is judged once: the verdict waits for the resumed
 * call, also in an agent built anew for the resume over the same breaker, in
 * this process. A call of a run cancelled through its `signal` is not recorded.
 *
 * A stop throws the category's error (`ToolSpiralError`, `BudgetExceededError`, …)
 * out of `invoke`/`stream`: it is thrown from `beforeModel`/`afterModel`, which
 * LangChain does not wrap, never from inside a tool call.
 */
export function governorMiddleware(breaker: ObservingBreaker, options: GovernorMiddlewareOptions = {}) {
  assertObservingBreaker(breaker);
  validateOptions('governorMiddleware', options, GOVERNOR_MIDDLEWARE_RULES);
  const sessions = doorSessionsOf(breaker);

  const sessionIdOf = (state: Record<string, unknown>, runtime: RunConfigLike): string => {
    if (options.sessionId !== undefined) return options.sessionId;
    const thread = runtime.configurable?.thread_id;
    if (typeof thread === 'string' && thread !== '') return thread;
    const own = state[SESSION_KEY];
    // beforeAgent always sets it; a graph that skips beforeAgent still gets a session, just not a shared one.
    return typeof own === 'string' && own !== '' ? own : randomUUID();
  };
  const sessionOf = (state: Record<string, unknown>, runtime: RunConfigLike): DoorSession => sessions.get(sessionIdOf(state, runtime));

  return createMiddleware({
    name: 'AgentBreaker',
    stateSchema: z.object({ [SESSION_KEY]: z.string().optional() }),

    beforeAgent: (_state, runtime) => {
      const thread = (runtime as RunConfigLike).configurable?.thread_id;
      const shared = options.sessionId ?? (typeof thread === 'string' && thread !== '' ? thread : undefined);
      if (shared === undefined) return { [SESSION_KEY]: randomUUID() };
      // A new invocation asks the breaker afresh: after a reset the session may run again. An agent invoked inside a
      // tool call of the session is a sub-agent of a run still going: its lead's stop and steers stay.
      if (!insideToolOf(breaker, shared)) sessions.delete(shared);
      return undefined;
    },

    beforeModel: async (state, runtime) => {
      const session = sessionOf(state, runtime as RunConfigLike);
      // Messages that end with the user's start a turn (within one, they end with tool results).
      const last = state.messages.at(-1);
      if (last !== undefined && HumanMessage.isInstance(last)) await session.noteUserTurn(state.messages.length - 1, textOf(last.content));
      await session.gateModelCall();
      return undefined;
    },

    wrapModelCall: async (request, handler) => {
      const session = sessionOf(request.state, request.runtime as RunConfigLike);
      const steers = session.takeSteers();
      const messages = withEveryCallAnswered(request.messages);
      const separator = request.systemMessage.text === '' ? '' : '\n\n';
      try {
        if (steers.length === 0) return await handler(messages === request.messages ? request : { ...request, messages });
        return await handler({ ...request, messages, systemMessage: request.systemMessage.concat(`${separator}${steerNote(steers)}`) });
      } catch (error) {
        // Not answered: a retry from above (modelRetryMiddleware before this one) must carry them still.
        session.returnSteers(steers);
        throw error;
      }
    },

    afterModel: async (state, runtime) => {
      const session = sessionOf(state, runtime as RunConfigLike);
      const reply = [...state.messages].reverse().find((m) => AIMessage.isInstance(m));
      if (reply === undefined) return undefined;
      const usage = reply.usage_metadata;
      // The model that answered prices the round (budget.maxCostUsd); providers name it in the reply's metadata.
      const named = reply.response_metadata?.['model_name'] ?? reply.response_metadata?.['model'];
      const model = await session.noteRound(
        {
          kind: 'model',
          promptTokens: usage?.input_tokens ?? null,
          completionTokens: usage?.output_tokens ?? null,
          text: textOf(reply.content),
          ...(typeof named === 'string' && named !== '' ? { model: named } : {}),
        },
        hostedCallsOf(reply),
      );
      const calls = reply.tool_calls ?? [];
      if (calls.length === 0) {
        session.queueSteer(model);
        return undefined;
      }
      for (const call of calls) {
        let decision = await breaker.checkToolCall(session.sessionId, { tool: call.name, args: call.args });
        session.stopIf(decision);
        // A model-level verdict (budget wrap-up, token drift) applies to every call of the round.
        if (decision.action === 'allow' && (model.action === 'block' || model.action === 'steer')) decision = model;
        if (call.id !== undefined) session.verdicts.set(call.id, decision);
      }
      return undefined;
    },

    wrapToolCall: async (request, handler) => {
      const session = sessionOf(request.state, request.runtime as RunConfigLike);
      const { toolCall } = request;
      let decision = toolCall.id === undefined ? undefined : session.verdicts.get(toolCall.id);
      // A call another middleware added after the round was judged is judged here.
      decision ??= await breaker.checkToolCall(session.sessionId, { tool: toolCall.name, args: toolCall.args });
      // Kept until the call is over: a call paused by interrupt() runs again when its thread resumes, as the same call.
      const over = (): void => {
        if (toolCall.id !== undefined) session.verdicts.delete(toolCall.id);
      };
      if (decision.action === 'block' || decision.action === 'stop') over();
      else if (toolCall.id !== undefined) session.verdicts.set(toolCall.id, decision);
      session.stopIf(decision);
      if (decision.action === 'block') {
        return new ToolMessage({ content: blockedResult(decision), tool_call_id: toolCall.id ?? '', name: toolCall.name, status: 'error' });
      }
      let result: Awaited<ReturnType<typeof handler>>;
      try {
        result = await session.runTool(() => handler(request));
      } catch (error) {
        if (!isInterrupt(error)) over();
        // Interrupts (human in the loop) are control flow, not failures; a cancelled run's call has no result of its
        // own (LangChain lets the abort out of the run, as here).
        if ((error as { is_bubble_up?: unknown } | null)?.is_bubble_up === true || request.runtime.signal?.aborted === true) throw error;
        const message = error instanceof Error ? error.message : String(error);
        session.noteStop(await session.observe({ kind: 'tool_call', tool: toolCall.name, args: toolCall.args, result: thrownText(error), error: true }));
        if (options.handleToolErrors === false) {
          // Whatever answers the model for the call writes its text: the steer goes with the next model call.
          if (decision.action === 'steer') session.deferSteer(decision);
          throw error;
        }
        // LangChain re-raises any error coming out of a wrapToolCall middleware; answer the model
        // the way its tool node does without middleware, so adding the breaker does not end runs.
        const invalidInput = (error as { '~brand'?: unknown })['~brand'] === 'ToolInvocationError';
        const content = invalidInput ? message : `${String(error)}\n Please fix your mistakes.`;
        // The error result is what the model reads of this call: a steer rides on it as on any result.
        return new ToolMessage({
          content: decision.action === 'steer' ? steeredResult(content, decision) : content,
          tool_call_id: toolCall.id ?? '',
          name: toolCall.name,
          status: 'error',
        });
      }
      over();
      if (isCommand(result)) {
        // A tool that updates the graph's state (a handoff, a state write) answers the call inside its command.
        const answer = commandResult(result, toolCall.id);
        session.noteStop(await session.observe({ kind: 'tool_call', tool: toolCall.name, args: toolCall.args, result: answer.text, error: answer.error }));
        if (decision.action !== 'steer') return result;
        const steered = commandWithSteer(result, answer.message, decision);
        // No tool message to carry it: the steer goes with the next model call.
        if (steered === result) session.deferSteer(decision);
        return steered as typeof result;
      }
      if (!ToolMessage.isInstance(result)) return result;
      const text = typeof result.content === 'string' ? result.content : resultText(result.content);
      // A stop decided on a result is thrown at the next model gate: thrown here, LangChain would wrap it.
      session.noteStop(
        await session.observe({
          kind: 'tool_call',
          tool: toolCall.name,
          args: toolCall.args,
          result: text,
          error: result.status === 'error',
        }),
      );
      return decision.action === 'steer' ? withSteer(result, decision) : result;
    },

    afterAgent: (state, runtime) => {
      const sessionId = sessionIdOf(state, runtime as RunConfigLike);
      if (!insideToolOf(breaker, sessionId)) sessions.delete(sessionId);
      return undefined;
    },
  });
}
