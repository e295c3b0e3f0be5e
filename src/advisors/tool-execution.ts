import { asSchema, safeValidateTypes, stringifyWithBigIntAndCycles } from '@ai-sdk/provider-utils';
import type { JSONValue } from '@ai-sdk/provider';
import { InvalidToolInputError, NoSuchToolError, type ModelMessage, type ToolResultPart } from 'ai';
import type { ToolResultOutput } from '@ai-sdk/provider-utils';
import type { GovernedTool, GovernedToolSet } from '../chat/chat-client-request.ts';
import type { ToolCallRequest } from '../chat/chat-response.ts';
import { jsonText } from '../chat/json-text.ts';
import { notifyToolCallListeners, type ToolCallListener } from '../chat/tool-call-listener.ts';
import { runAsToolOf } from '../chat/tool-scope.ts';
import { observeToolCall, observeUnrunToolCall, type ToolCallReporter } from '../chat/tool-call-observation.ts';
import type { TelemetrySettings } from '../telemetry/telemetry-options.ts';
import { DEFAULT_TOOL_TIMEOUT_MS, runWithTimeout, ToolTimeoutError } from './tool-timeout.ts';
import { DEFAULT_MAX_NESTING_DEPTH, jsonNestsDeeperThan, NestingTooDeepError } from '../errors/nesting-depth.ts';

/** The outcome of one tool call, as the model will see it. */
export interface ToolOutcome {
  readonly call: ToolCallRequest;
  readonly output: unknown;
  readonly isError: boolean;
  /** What the model is sent instead of `output`, when the tool shapes it with `toModelOutput` (an image, say). */
  readonly modelOutput?: ToolResultOutput;
  /** True for a call the caller denied when asked to approve it: it did not run. */
  readonly denied?: boolean;
  /** True when the tool is return-direct and actually ran. */
  readonly returnDirect: boolean;
  /**
   * True when the tool's `execute` was called (its side effects may have
   * happened), whatever its outcome; absent for a call that was not run.
   */
  readonly ran?: boolean;
  /** For a failed call, what failed it, where there is such a value (see {@link InvalidToolCall.error}, and what a tool threw). */
  readonly error?: unknown;
}

/** What the tool loop hands to each execution. */
export interface ToolExecutionEnvironment {
  readonly tools: GovernedToolSet;
  /** Messages sent to the model for the round that asked for these calls. */
  readonly messages: readonly ModelMessage[];
  readonly abortSignal: AbortSignal | undefined;
  /** Passed to the tool as its `context`. */
  readonly toolContext: unknown;
  readonly sessionId: string;
  readonly listeners: readonly ToolCallListener[];
  /** Telemetry settings of the request. */
  readonly telemetry: TelemetrySettings;
  /** Feeds the session's observation sinks (the AgentBreaker). */
  readonly report: ToolCallReporter;
  /**
   * The session's observation sinks (its breakers): the tool runs as a tool
   * call they govern (see `runAsToolOf`), so a sub-agent it runs in the same
   * session does not report its task as a user turn, nor take the steers
   * waiting for this agent's next round. @default none
   */
  readonly breakers?: readonly object[];
  /** Time limit of a call of the named tool. @default {@link DEFAULT_TOOL_TIMEOUT_MS} */
  readonly toolTimeoutMs?: (toolName: string) => number;
  /** Hears each value a streaming tool (`async *execute`) yields, as it comes (a stream shows them). @default none */
  readonly onPreliminary?: (call: ToolCallRequest, output: unknown) => void;
}

/** Longest JSON text of a thrown non-Error value the model is shown. */
const MAX_THROWN_JSON = 1000;

/**
 * What the model is told a tool threw: an error's message, a string as it
 * is, any other value as (bounded) JSON text, as the AI SDK shows it, since
 * `[object Object]` tells the model nothing.
 */
function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  const text = jsonText(error);
  return text.length > MAX_THROWN_JSON ? `${text.slice(0, MAX_THROWN_JSON)}…` : text;
}

/** A call whose tool exists and whose arguments its schema accepts: ready to be approved and run. */
export interface ValidToolCall {
  readonly ok: true;
  readonly call: ToolCallRequest;
  readonly tool: GovernedTool;
  /** The arguments as the schema parsed them (defaults applied): what the tool's callbacks get. */
  readonly input: unknown;
}

/** A call that cannot run: what the model is told, and how the call is counted. */
export interface InvalidToolCall {
  readonly ok: false;
  readonly call: ToolCallRequest;
  readonly message: string;
  readonly outcome: 'invalid' | 'blocked';
  /**
   * The AI SDK's error for the call, as `streamText` has it: `NoSuchToolError`
   * for an unknown tool, `InvalidToolInputError` for arguments that do not
   * parse or pass the schema; each with `message` as its message. None for a blocked call.
   */
  readonly error?: NoSuchToolError | InvalidToolInputError;
}

/**
 * Checks a call before anything is decided about it, as the AI SDK parses a
 * call before it asks for approval: the tool must exist, the call must not be
 * blocked, and its arguments must pass the tool's schema (once: the parsed
 * input is what approval, `onInputAvailable` and `execute` get).
 */
export async function checkToolCall(call: ToolCallRequest, tools: GovernedToolSet): Promise<ValidToolCall | InvalidToolCall> {
  // Own keys only: a model calling `constructor` or `toString` must hear the tool is unknown.
  const tool = Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined;
  const { toolName, rawInput } = call;
  if (tool === undefined) {
    const names = Object.keys(tools);
    const message = `Unknown tool "${toolName}". Available tools: ${names.length > 0 ? names.join(', ') : '(none)'}.`;
    return { ok: false, call, message, outcome: 'invalid', error: new NoSuchToolError({ toolName, availableTools: names, message }) };
  }
  if (call.intervention?.action === 'block')
    return { ok: false, call, message: `[${call.intervention.source}] ${call.intervention.message}`, outcome: 'blocked' };
  const invalidInput = (message: string, cause: unknown): InvalidToolCall => ({
    ok: false,
    call,
    message,
    outcome: 'invalid',
    error: new InvalidToolInputError({ toolName, toolInput: rawInput, cause, message }),
  });
  if (typeof call.input === 'string' && jsonNestsDeeperThan(rawInput, DEFAULT_MAX_NESTING_DEPTH)) {
    const tooDeep = new NestingTooDeepError(`The arguments for tool "${toolName}"`, DEFAULT_MAX_NESTING_DEPTH);
    return invalidInput(tooDeep.message, tooDeep);
  }
  if (typeof call.input === 'string' && rawInput.trim() !== '') {
    return invalidInput(`Invalid arguments for tool "${toolName}": not valid JSON: ${rawInput.slice(0, 200)}`, undefined);
  }
  const validated = await safeValidateTypes({ value: call.input, schema: asSchema(tool.inputSchema) });
  if (!validated.success) return invalidInput(`Invalid arguments for tool "${toolName}": ${errorText(validated.error)}`, validated.error);
  return { ok: true, call, tool, input: validated.value };
}

/** A checked call of a tool with `execute`, which the loop runs. */
export type ExecutableToolCall = ValidToolCall & { readonly tool: GovernedTool & { readonly execute: NonNullable<GovernedTool['execute']> } };

/**
 * Whether the loop runs the call: a tool without `execute` is client-side,
 * the caller runs it and sends its result back.
 */
export function isExecutable(checked: ValidToolCall): checked is ExecutableToolCall {
  return typeof checked.tool.execute === 'function';
}

/**
 * The error result of a call that cannot run. It is observed as not run: a
 * failed call for the breaker, since the model may keep repeating it.
 */
export async function refuseToolCall(refused: InvalidToolCall, env: ToolExecutionEnvironment): Promise<ToolOutcome> {
  const { call, message, outcome, error } = refused;
  if (outcome === 'invalid') {
    notifyToolCallListeners(env.listeners, 'onToolCallRefused', {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.input,
      sessionId: env.sessionId,
      message,
      error,
    });
  }
  await observeUnrunToolCall({ toolName: call.toolName, args: call.input, known: Object.hasOwn(env.tools, call.toolName), outcome, shown: message }, env);
  return { call, output: message, isError: true, returnDirect: false, ...(error === undefined ? {} : { error }) };
}

/**
 * Tells a tool that a call's input is complete and valid (its
 * `onInputAvailable`), as the AI SDK does before approval or execution, also
 * for a tool without `execute`. What it throws ends the request, as there.
 * `started`: whether its `onInputStart` was called as the input streamed in;
 * for a round that was not streamed it is called here first, as
 * `generateText` calls it.
 */
export async function announceInput({ call, tool, input }: ValidToolCall, env: ToolExecutionEnvironment, started: boolean): Promise<void> {
  if (!started) {
    await tool.onInputStart?.({ toolCallId: call.toolCallId, messages: [...env.messages], abortSignal: env.abortSignal, context: env.toolContext as never });
  }
  await tool.onInputAvailable?.({
    input: input as never,
    toolCallId: call.toolCallId,
    messages: [...env.messages],
    abortSignal: env.abortSignal,
    context: env.toolContext as never,
  });
}

/**
 * Runs a checked call of a tool with `execute`. A throwing tool becomes an
 * error result the model can read and act on, never an exception: the
 * conversation must stay well-formed. An abort is the one exception that
 * propagates.
 */
export async function runToolCall({ call, tool, input }: ExecutableToolCall, env: ToolExecutionEnvironment): Promise<ToolOutcome> {
  const { execute } = tool;
  const observation = observeToolCall(
    { toolCallId: call.toolCallId, toolName: call.toolName, args: input, sessionId: env.sessionId },
    {
      listeners: env.listeners,
      telemetry: env.telemetry,
      report: env.report,
      intervention: call.intervention?.action,
      description: typeof tool.description === 'string' ? tool.description : undefined,
    },
  );
  try {
    env.abortSignal?.throwIfAborted();
    const timeoutMs = env.toolTimeoutMs?.(call.toolName) ?? DEFAULT_TOOL_TIMEOUT_MS;
    // Raced, not awaited: a tool that ignores its signal must not hold the loop past an abort or its time limit.
    const output = await observation.run(() =>
      runWithTimeout(
        async (abortSignal) =>
          runAsToolOf(env.breakers ?? [], env.sessionId, async () => {
            const returned: unknown = execute(input as never, {
              toolCallId: call.toolCallId,
              messages: [...env.messages],
              abortSignal,
              context: env.toolContext as never,
            });
            if (returned !== null && typeof returned === 'object' && Symbol.asyncIterator in returned) {
              // A streaming tool: its last value is its result.
              let last: unknown;
              for await (const value of returned as AsyncIterable<unknown>) {
                abortSignal.throwIfAborted();
                env.onPreliminary?.(call, value);
                last = value;
              }
              return last;
            }
            return await returned;
          }),
        { toolName: call.toolName, timeoutMs, abortSignal: env.abortSignal },
      ),
    );
    // Shaped as the AI SDK shapes it, and before the call is observed: a
    // `toModelOutput` that throws fails the call as a throwing tool would.
    // An output that cannot be sent (a getter or toJSON that throws) fails here too: the tool ran, and the
    // round it ran in must be kept, well-formed, so that a retry does not run it again.
    let modelOutput = tool.toModelOutput === undefined ? plainModelOutput(output) : await tool.toModelOutput({ toolCallId: call.toolCallId, input, output });
    // Observed before the steering note is added: the note is not what the tool
    // returned, and counted as a new result it would hide the very repetition it points out.
    await observation.end(output);
    if (call.intervention?.action === 'steer') {
      // For the model only: listeners, `tool-result` events and a return-direct answer keep what the tool returned.
      const note = `[${call.intervention.source}] ${call.intervention.message}`;
      modelOutput = withNote(modelOutput, note);
    }
    return {
      call,
      output: output ?? null,
      modelOutput,
      isError: false,
      returnDirect: tool.returnDirect === true,
      ran: true,
    };
  } catch (error) {
    const shown = ToolTimeoutError.isInstance(error) ? error.message : `Tool "${call.toolName}" failed: ${errorText(error)}`;
    const cancelled = env.abortSignal?.aborted === true;
    await observation.fail(error, shown, cancelled);
    if (cancelled) throw env.abortSignal?.reason;
    return { call, output: shown, isError: true, returnDirect: false, ran: true, error };
  }
}

/**
 * A tool's output as plain JSON, as the AI SDK's providers send it (`toJSON`
 * applied, a `Date` as its text, `undefined` and functions left out, `NaN` as
 * `null`, a BigInt as its decimal text, a cycle as `"[Circular]"`), so the
 * messages hold what the model reads and a store keeps.
 */
function jsonValue(output: unknown): JSONValue {
  if (output === undefined) return null;
  let text: string | undefined;
  try {
    text = stringifyWithBigIntAndCycles(output);
  } catch (error) {
    // A getter or toJSON that throws: no provider could send it either.
    throw new Error(`its result cannot be sent as JSON (${errorText(error)})`, { cause: error });
  }
  return text === undefined ? null : (JSON.parse(text) as JSONValue);
}

/** The tool message that answers a round's calls, in the order they were asked. */
export function toolResultMessage(outcomes: readonly ToolOutcome[]): ModelMessage {
  const content: ToolResultPart[] = outcomes.map((o) => ({
    type: 'tool-result',
    toolCallId: o.call.toolCallId,
    toolName: o.call.toolName,
    output: o.isError ? { type: 'error-text', value: String(o.output) } : (o.modelOutput ?? plainModelOutput(o.output)),
  }));
  return { role: 'tool', content };
}

/** What the model is sent for a tool's own output, as the AI SDK sends it: a string as text, anything else as JSON. */
function plainModelOutput(output: unknown): ToolResultOutput {
  return typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: jsonValue(output) };
}

/** A shaped output with a steering note after what the tool said. */
function withNote(output: ToolResultOutput, note: string): ToolResultOutput {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return { ...output, value: `${output.value}\n\n${note}` };
    case 'json':
    case 'error-json':
      return { type: output.type === 'json' ? 'text' : 'error-text', value: `${jsonText(output.value)}\n\n${note}` };
    case 'content':
      return { ...output, value: [...output.value, { type: 'text', text: note }] };
    default:
      return output;
  }
}

/**
 * What a result of {@link toolResultMessage} holds: a text or JSON output is
 * the tool's own, content (a shaped output) the text it holds; any other (an
 * error, a denial) is an error result.
 */
export function resultOutput(part: ToolResultPart): { readonly output: unknown; readonly isError: boolean } {
  const { output } = part;
  if (output.type === 'text' || output.type === 'json') return { output: output.value, isError: false };
  if (output.type === 'content') return { output: output.value.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n'), isError: false };
  return { output: 'value' in output ? output.value : output, isError: true };
}

/**
 * The outcome of a call that ran in an earlier request, from its result:
 * return-direct as its tool is, when it did not fail.
 */
export function outcomeOfResult(call: ToolCallRequest, part: ToolResultPart, tools: GovernedToolSet): ToolOutcome {
  const { output, isError } = resultOutput(part);
  const tool = Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined;
  return { call, output, isError, returnDirect: !isError && tool?.returnDirect === true };
}
