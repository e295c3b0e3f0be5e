import { readShellOutput } from './shell-output.ts';
import type { LanguageModelV4, LanguageModelV4Middleware, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { asSchema, safeValidateTypes } from '@ai-sdk/provider-utils';
import { wrapLanguageModel, type Tool, type ToolSet } from 'ai';
import { fromProviderUsage } from '../model/usage.ts';
import { resolveModel, type SupportedLanguageModel } from '../model/resolve-model.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { BreakerDecision } from './breaker-decision.ts';
import { ToolCallBlockedError } from './breaker-errors.ts';
import type { BreakerEvent, ProposedToolCall } from './breaker-event.ts';
import { assertObservingBreaker, blockedResult, DoorSession, resultText, steeredResult, steerNote } from './door-session.ts';
import { providerCalls, type ProviderPart } from './hosted-calls.ts';
import { thrownText } from './thrown-text.ts';
import { currentToolOf } from '../chat/tool-scope.ts';

/** What the adapter needs of a breaker (an {@link AgentBreaker} has it). */
export interface ObservingBreaker {
  checkModelCall(sessionId: string): Promise<BreakerDecision>;
  checkToolCall(sessionId: string, call: ProposedToolCall): Promise<BreakerDecision>;
  /** `options.steerHere`: the event is the reporting agent's own (see `ObserveOptions`); the doors always say so. */
  observe(sessionId: string, event: BreakerEvent, options?: { readonly steerHere?: boolean }): Promise<BreakerDecision>;
  /** Steering messages waiting for the next model round where the code runs (see `AgentBreaker.takeSteers`). */
  takeSteers?(sessionId: string): string[];
}

/** Options of {@link breakerForAiSdk}. */
export interface AiSdkBreakerOptions {
  /** The session (conversation) the calls belong to. */
  readonly sessionId: string;
}

const AI_SDK_BREAKER_RULES: OptionRules<AiSdkBreakerOptions> = { sessionId: is.string({ nonEmpty: true }) };

/** The AI SDK side of a governed session: wrap the model and the tools. */
export interface AiSdkBreaker {
  /** A model middleware: gates every model call and records every round. */
  readonly middleware: LanguageModelV4Middleware;
  /** The model wrapped with {@link AiSdkBreaker.middleware}. */
  model(model: SupportedLanguageModel): LanguageModelV4;
  /** The tools wrapped so that each call is judged before it runs and its result recorded after. */
  tools<T extends ToolSet>(tools: T): T;
  /**
   * A stop condition for `stopWhen` that rethrows the breaker's stop. The AI SDK
   * turns an error thrown by a tool into a tool-error result, so a stop decided
   * on a tool call in the last allowed step would otherwise go unnoticed.
   * In `streamText` (and `ToolLoopAgent.stream`) it throws nothing: the AI SDK
   * runs stop conditions outside its error handling there, so a throw would
   * break the stream off. The next step's gate reports the stop instead, as an
   * `error` part; it ends the loop (returns true) when the stream has that
   * part already. A stop in the last step the caller's own conditions allow
   * is then only in {@link AiSdkBreaker.stopped}.
   */
  readonly stopWhen: () => boolean;
  /** The stop that ended the session, if any. */
  readonly stopped: Error | undefined;
}

function textOfContent(content: ReadonlyArray<{ type: string; text?: string }>): string {
  return content.map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

/** How the latest model step ran where the door's code runs (see `stopWhen`). */
interface StepMode {
  /** The step's model call was streamed. */
  streaming: boolean;
  /** Its stream carries the stop as an error part already. */
  reported: boolean;
}

/** How the breaker reads one tool's calls: what it fingerprints, and the result it records. */
interface ToolReading {
  args(input: unknown): unknown;
  result(output: unknown): { text: string; error: boolean };
}

const PLAIN_TOOL: ToolReading = { args: (input) => input, result: (output) => ({ text: resultText(output), error: false }) };

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * OpenAI's client-run shell and patch tools report failure in their output
 * rather than by throwing: a command that did not exit 0 (or timed out) and a
 * patch that did not apply are failures, read as the other doors read them. A
 * patch is judged by its operation alone: its input's `callId` is new on
 * every call and would make every repeat look new.
 */
const OPENAI_TOOLS: Readonly<Record<string, ToolReading>> = {
  'openai.shell': { args: (input) => input, result: (output) => readShellOutput(field(output, 'output')) },
  'openai.apply_patch': {
    args: (input) => field(input, 'operation') ?? input,
    result: (output) => {
      const text = field(output, 'output');
      return { text: typeof text === 'string' ? text : '', error: field(output, 'status') === 'failed' };
    },
  },
};

/** How many tool call ids a door remembers (calls its tools ran, failures it judged): a few steps' worth. */
const REMEMBERED_CALLS = 256;

/** Adds an id to a set that keeps the newest {@link REMEMBERED_CALLS}. */
function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  if (ids.size > REMEMBERED_CALLS) ids.delete(ids.values().next().value as string);
}

/**
 * The calls of the prompt's last step that failed without running: the AI SDK
 * answers a call with invalid input or of a tool it does not have with an
 * error result, and never calls the tool. Each with its arguments and error.
 */
function failedUnrun(prompt: LanguageModelV4Prompt, ran: ReadonlySet<string>): { id: string; tool: string; args: unknown; error: string }[] {
  const at = prompt.findLastIndex((message) => message.role === 'assistant');
  const step = prompt[at];
  if (step?.role !== 'assistant') return [];
  const calls = new Map<string, unknown>();
  for (const part of step.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part.input);
  const failed: { id: string; tool: string; args: unknown; error: string }[] = [];
  for (const message of prompt.slice(at + 1)) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || ran.has(part.toolCallId) || !calls.has(part.toolCallId)) continue;
      const { output } = part;
      if (output.type === 'error-text') failed.push({ id: part.toolCallId, tool: part.toolName, args: calls.get(part.toolCallId), error: output.value });
      else if (output.type === 'error-json')
        failed.push({ id: part.toolCallId, tool: part.toolName, args: calls.get(part.toolCallId), error: resultText(output.value) });
    }
  }
  return failed;
}

/**
 * The prompt with each steer kept for a call that threw appended to that
 * call's error result, where the model reads it with the call (the AI SDK
 * writes that result itself, from the error); steers whose call has a result
 * of another kind are named apart (by call id), for the message after the prompt.
 */
function withFailureSteers(prompt: LanguageModelV4Prompt, steers: ReadonlyMap<string, BreakerDecision>): { prompt: LanguageModelV4Prompt; apart: string[] } {
  if (steers.size === 0) return { prompt, apart: [] };
  const apart: string[] = [];
  const steered = prompt.map((message) => {
    if (message.role !== 'tool') return message;
    const content = message.content.map((part) => {
      const decision = part.type === 'tool-result' ? steers.get(part.toolCallId) : undefined;
      if (decision === undefined || part.type !== 'tool-result') return part;
      if (part.output.type === 'error-text') return { ...part, output: { ...part.output, value: steeredResult(part.output.value, decision) } };
      apart.push(part.toolCallId);
      return part;
    });
    return { ...message, content };
  });
  return { prompt: steered, apart };
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function';
}

/** The last value of an async iterable, as the AI SDK takes a streaming tool's result. */
async function lastOutput(outputs: AsyncIterable<unknown>): Promise<unknown> {
  let last: unknown;
  for await (const output of outputs) last = output;
  return last;
}

/** Whether an abort reason is a time limit running out (`AbortSignal.timeout`, the AI SDK's tool timeout) rather than a cancel. */
function isTimeout(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}

function toolReading(tool: { type?: unknown; id?: unknown }): ToolReading {
  return (tool.type === 'provider' && typeof tool.id === 'string' ? OPENAI_TOOLS[tool.id] : undefined) ?? PLAIN_TOOL;
}

/**
 * Puts a breaker on plain AI SDK `generateText` / `streamText` / `ToolLoopAgent`:
 *
 * ```ts
 * const governed = breakerForAiSdk(breaker, { sessionId: 'c-42' });
 * await generateText({ model: governed.model(openai('gpt-4o')), tools: governed.tools({ search }),
 *   stopWhen: [isStepCount(20), governed.stopWhen], prompt });
 * ```
 *
 * The middleware sees every step's model call (a stop throws the typed
 * `AgentBreakerError` out of `generateText`); the tool wrapper judges each call
 * before it runs — a blocked call is answered with the breaker's explanation
 * instead of running, a steered one runs with the explanation appended.
 */
export function breakerForAiSdk(breaker: ObservingBreaker, options: AiSdkBreakerOptions): AiSdkBreaker {
  assertObservingBreaker(breaker);
  validateOptions('breakerForAiSdk', options, AI_SDK_BREAKER_RULES, { required: ['sessionId'] });
  const { sessionId } = options;
  // The first stop's error, with its category and numbers, is the one the caller gets,
  // whichever layer notices it (tool wrapper, middleware, stop condition).
  const door = new DoorSession(breaker, sessionId);
  // The model's id prices the round (budget.maxCostUsd).
  const record = async (model: string, text: string, usage: ReturnType<typeof fromProviderUsage>, parts: readonly ProviderPart[]): Promise<void> => {
    await door.noteRound(
      { kind: 'model', promptTokens: usage.inputTokens ?? null, completionTokens: usage.outputTokens ?? null, text, model },
      providerCalls(parts),
    );
  };

  /**
   * How the latest step ran, where its code runs: the lead's steps, and each
   * governed tool call's (a sub-agent may run `generateText` on this door
   * inside a step of the lead's `streamText`), apart.
   */
  const leadSteps: StepMode = { streaming: false, reported: false };
  const toolSteps = new WeakMap<object, StepMode>();
  const stepsHere = (): StepMode => {
    const call = currentToolOf(breaker, sessionId);
    if (call === undefined) return leadSteps;
    let mode = toolSteps.get(call);
    if (mode === undefined) toolSteps.set(call, (mode = { streaming: false, reported: false }));
    return mode;
  };
  /** Calls the wrapped tools ran, and failed calls that never ran that were judged from a prompt, by id. */
  const ran = new Set<string>();
  /** The tools this door runs, by name (see `tools`). */
  const runs = new Map<string, Tool>();
  /**
   * Whether a failed call in the prompt ran on a tool this door runs: one whose
   * input its schema takes, since the AI SDK runs every such call. Its
   * wrapper recorded the failure when it threw, maybe on another door of the
   * session (a chat route makes one per request), which this one's `ran`
   * does not know.
   */
  const ranOnATool = async (call: { tool: string; args: unknown }): Promise<boolean> => {
    const tool = runs.get(call.tool);
    if (tool === undefined) return false;
    return (await safeValidateTypes({ value: call.args, schema: asSchema(tool.inputSchema) })).success;
  };
  /** Steers decided for calls that threw, by call id: each rides on its call's error result in every later prompt. */
  const failureSteers = new Map<string, BreakerDecision>();
  const middleware: LanguageModelV4Middleware = {
    specificationVersion: 'v4',
    // Steers decided on observed events (a tool's result, a round without tool calls) reach the next step's prompt.
    transformParams: async ({ params }) => {
      // A model that keeps calling a tool with input it rejects (or a tool it does not have) is an error loop too.
      for (const call of failedUnrun(params.prompt, ran)) {
        remember(ran, call.id);
        if (await ranOnATool(call)) continue;
        door.stopIf(await door.observe({ kind: 'tool_call', tool: call.tool, args: call.args, result: call.error, error: true }));
      }
      // A prompt that ends with the user's message starts a turn (later steps end with tool results).
      const last = params.prompt.at(-1);
      if (last?.role === 'user') await door.noteUserTurn(params.prompt.length - 1, textOfContent(last.content));
      const { prompt, apart } = withFailureSteers(params.prompt, failureSteers);
      // A steer whose call's result is not error text is delivered once, with the other steers.
      const steers = apart.flatMap((id) => {
        const message = failureSteers.get(id)?.message;
        failureSteers.delete(id);
        return message ? [message] : [];
      });
      steers.push(...door.takeSteers());
      if (steers.length === 0) return prompt === params.prompt ? params : { ...params, prompt };
      return { ...params, prompt: [...prompt, { role: 'user', content: [{ type: 'text', text: steerNote(steers) }] }] };
    },
    wrapGenerate: async ({ doGenerate, model }) => {
      const mode = stepsHere();
      mode.streaming = false;
      mode.reported = false;
      await door.gateModelCall();
      const result = await doGenerate();
      await record(model.modelId, textOfContent(result.content), fromProviderUsage(result.usage), result.content);
      return result;
    },
    wrapStream: async ({ doStream, model }) => {
      const mode = stepsHere();
      mode.streaming = true;
      mode.reported = false;
      await door.gateModelCall();
      const result = await doStream();
      let text = '';
      const hosted: ProviderPart[] = [];
      const judge = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        async transform(part, controller) {
          if (part.type === 'text-delta') text += part.delta;
          if ((part.type === 'tool-call' && part.providerExecuted === true) || part.type === 'tool-result') hosted.push(part);
          if (part.type === 'finish') {
            try {
              await record(model.modelId, text, fromProviderUsage(part.usage), hosted);
            } catch (error) {
              controller.enqueue({ type: 'error', error });
              // The stream has its error part: the AI SDK still answers this round's calls (each refused), and
              // `stopWhen` then ends the loop rather than let a next step's gate report the stop again.
              mode.reported = true;
            }
          }
          controller.enqueue(part);
        },
      });
      return { ...result, stream: result.stream.pipeThrough(judge) };
    },
  };

  const tools = <T extends ToolSet>(set: T): T => {
    // A Map (or any other collection) has no own entries to wrap: it would come back empty.
    if (typeof set !== 'object' || set === null || Array.isArray(set) || set instanceof Map) {
      throw new InvalidOptionError('tools', `must be a ToolSet, an object of tools by name such as { search }; got ${describeValue(set)}`);
    }
    const wrapped: Record<string, unknown> = {};
    for (const [name, tool] of Object.entries(set)) {
      if (typeof tool !== 'object' || tool === null) {
        throw new InvalidOptionError(
          `tools.${name}`,
          `must be an AI SDK tool, such as tool({ description, inputSchema, execute }); got ${describeValue(tool)}`,
        );
      }
      const execute = tool.execute;
      if (typeof execute !== 'function') {
        wrapped[name] = tool;
        continue;
      }
      runs.set(name, tool);
      // An output of a type of its own cannot carry the breaker's text: a block is then an error, a steer goes in the next prompt.
      const typedOutput = tool.outputSchema !== undefined || tool.toModelOutput !== undefined;
      const reading = toolReading(tool);
      type ExecOptions = Parameters<typeof execute>[1];
      /** Judges the call before it runs: the verdict, or what the model gets in place of a blocked call. */
      const before = async (input: unknown, execOptions: ExecOptions) => {
        if (typeof execOptions?.toolCallId === 'string') remember(ran, execOptions.toolCallId);
        const args = reading.args(input);
        const decision = await breaker.checkToolCall(sessionId, { tool: name, args });
        door.stopIf(decision);
        if (decision.action === 'block' && typedOutput) throw new ToolCallBlockedError(blockedResult(decision));
        return { args, decision, blocked: decision.action === 'block' ? { value: blockedResult(decision) } : undefined };
      };
      /**
       * Records a call that threw and throws it on: the AI SDK answers the model with its message.
       * That answer is the SDK's to write, so a steer is added to it in the next step's prompt.
       */
      const failed = async (args: unknown, decision: BreakerDecision, execOptions: ExecOptions, error: unknown): Promise<never> => {
        // A call the caller cancelled has no outcome of its own: taken for a failure, a user who cancels a slow
        // tool a few times would have the session stopped as an error loop. A time limit (the AI SDK's
        // `timeout: { toolMs }`, an `AbortSignal.timeout`) is no cancel: the tool failed to answer in time.
        if (execOptions?.abortSignal?.aborted === true && !isTimeout(execOptions.abortSignal.reason)) throw error;
        door.noteStop(await door.observe({ kind: 'tool_call', tool: name, args, result: thrownText(error), error: true }));
        if (decision.action === 'steer') {
          const id = execOptions?.toolCallId;
          if (typeof id === 'string') {
            failureSteers.set(id, decision);
            if (failureSteers.size > REMEMBERED_CALLS) failureSteers.delete(failureSteers.keys().next().value as string);
          } else door.deferSteer(decision);
        }
        throw error;
      };
      /**
       * Records the result; what the model gets for it (a steer appended, where the output's type allows). The
       * call has run: a stop decided on its result (or a store that failed closed while recording it) is thrown
       * at the next gate, and the result stays what the call returned, so a conversation saved from the run does
       * not tell the model that a call which happened (a refund made) failed.
       */
      const after = async (args: unknown, decision: BreakerDecision, result: unknown): Promise<unknown> => {
        const { text, error } = reading.result(result);
        door.noteStop(await door.observe({ kind: 'tool_call', tool: name, args, result: text, error }));
        if (decision.action !== 'steer') return result;
        if (!typedOutput) return steeredResult(text, decision);
        door.deferSteer(decision);
        return result;
      };
      wrapped[name] = {
        ...tool,
        // A streaming tool (`async *execute`) stays one: its outputs pass as they come, the last is its result.
        execute: isAsyncGeneratorFunction(execute)
          ? async function* (input: unknown, execOptions: ExecOptions) {
              const { args, decision, blocked } = await before(input, execOptions);
              if (blocked !== undefined) {
                yield blocked.value;
                return;
              }
              let last: unknown;
              try {
                // A generator's body runs in the context of each `next()`, not of its creation: each runs in the one call.
                const inCall = door.toolCall();
                const outputs = (execute(input as never, execOptions) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
                let ended = false;
                try {
                  for (;;) {
                    const step = await inCall(() => outputs.next());
                    ended = step.done === true;
                    if (ended) break;
                    last = step.value;
                    yield step.value;
                  }
                } finally {
                  // Closed early (its consumer stopped reading): the tool's generator is closed too, as `for await` would.
                  if (!ended) await inCall(() => outputs.return?.());
                }
              } catch (error) {
                await failed(args, decision, execOptions, error);
              }
              const final = await after(args, decision, last);
              if (final !== last) yield final;
            }
          : async (input: unknown, execOptions: ExecOptions) => {
              const { args, decision, blocked } = await before(input, execOptions);
              if (blocked !== undefined) return blocked.value;
              let result: unknown;
              try {
                result = await door.runTool(async () => {
                  const returned: unknown = await execute(input as never, execOptions);
                  // A function that returns an async iterable without being written as `async *execute` (an arrow
                  // returning a generator; an `async *` compiled to an older target): run whole, its last output the result.
                  return isAsyncIterable(returned) ? await lastOutput(returned) : returned;
                });
              } catch (error) {
                return failed(args, decision, execOptions, error);
              }
              return after(args, decision, result);
            },
      };
    }
    return wrapped as T;
  };

  return {
    middleware,
    model: (model: SupportedLanguageModel) => wrapLanguageModel({ model: resolveModel(model), middleware }),
    tools,
    stopWhen: () => {
      // streamText evaluates stop conditions outside its error handling: a throw there breaks the stream off mid-body
      // (and rejects, unhandled, in the helpers that pipe it to an HTTP response, which ends a Node server). A stream
      // goes on to its next step instead, whose gate throws the stop where streamText turns it into an error part,
      // unless the stream has that part already.
      const mode = stepsHere();
      if (!mode.streaming) door.rethrowStop();
      return mode.reported;
    },
    get stopped() {
      return door.stopped;
    },
  };
}
