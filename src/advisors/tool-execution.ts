import { asSchema, safeValidateTypes } from '@ai-sdk/provider-utils';
import type { ModelMessage, ToolResultPart } from 'ai';
import type { ToolResultOutput } from '@ai-sdk/provider-utils';
import type { GovernedToolSet } from '../chat/chat-client-request.ts';
import type { ToolCallRequest } from '../chat/chat-response.ts';
import type { ToolCallListener } from '../chat/tool-call-listener.ts';
import { runAsToolOf } from '../chat/tool-scope.ts';
import { observeToolCall, observeUnrunToolCall, type ToolCallOutcome, type ToolCallReporter } from '../chat/tool-call-observation.ts';
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
  /** True when the tool is return-direct and actually ran. */
  readonly returnDirect: boolean;
  /**
   * True when the tool's `execute` was called (its side effects may have
   * happened), whatever its outcome; absent for a call that was not run.
   */
  readonly ran?: boolean;
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
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs one tool call. Every failure the model can cause (unknown tool, bad
 * arguments, a throwing tool) becomes an error result the model can read and
 * act on, never an exception: the conversation must stay well-formed.
 * An abort is the one exception that propagates.
 */
export async function executeToolCall(call: ToolCallRequest, env: ToolExecutionEnvironment): Promise<ToolOutcome> {
  // Own keys only: a model calling `constructor` or `toString` must hear the tool is unknown.
  const tool = Object.hasOwn(env.tools, call.toolName) ? env.tools[call.toolName] : undefined;
  const notRun = async (message: string, outcome: Exclude<ToolCallOutcome, 'success' | 'error'>): Promise<ToolOutcome> => {
    await observeUnrunToolCall({ toolName: call.toolName, args: call.input, known: tool !== undefined, outcome, shown: message }, env);
    return { call, output: message, isError: true, returnDirect: false };
  };
  if (tool === undefined) {
    const names = Object.keys(env.tools);
    return notRun(`Unknown tool "${call.toolName}". Available tools: ${names.length > 0 ? names.join(', ') : '(none)'}.`, 'invalid');
  }
  if (call.intervention?.action === 'block') return notRun(`[${call.intervention.source}] ${call.intervention.message}`, 'blocked');
  if (typeof call.input === 'string' && jsonNestsDeeperThan(call.rawInput, DEFAULT_MAX_NESTING_DEPTH)) {
    return notRun(new NestingTooDeepError(`The arguments for tool "${call.toolName}"`, DEFAULT_MAX_NESTING_DEPTH).message, 'invalid');
  }
  if (typeof call.input === 'string' && call.rawInput.trim() !== '') {
    return notRun(`Invalid arguments for tool "${call.toolName}": not valid JSON: ${call.rawInput.slice(0, 200)}`, 'invalid');
  }
  const validated = await safeValidateTypes({ value: call.input, schema: asSchema(tool.inputSchema) });
  if (!validated.success) {
    return notRun(`Invalid arguments for tool "${call.toolName}": ${errorText(validated.error)}`, 'invalid');
  }
  if (typeof tool.execute !== 'function') {
    return notRun(`Tool "${call.toolName}" has no execute function and cannot be run here.`, 'invalid');
  }
  const execute = tool.execute;
  const observation = observeToolCall(
    { toolCallId: call.toolCallId, toolName: call.toolName, args: validated.value, sessionId: env.sessionId },
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
    let output = await observation.run(() =>
      runWithTimeout(
        async (abortSignal) =>
          runAsToolOf(env.breakers ?? [], env.sessionId, async () => {
            const returned: unknown = execute(validated.value as never, {
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
    let modelOutput = tool.toModelOutput === undefined ? undefined : await tool.toModelOutput({ toolCallId: call.toolCallId, input: validated.value, output });
    // Observed before the steering note is added: the note is not what the tool
    // returned, and counted as a new result it would hide the very repetition it points out.
    await observation.end(output);
    if (call.intervention?.action === 'steer') {
      const note = `[${call.intervention.source}] ${call.intervention.message}`;
      output = `${typeof output === 'string' ? output : JSON.stringify(output)}\n\n${note}`;
      if (modelOutput !== undefined) modelOutput = withNote(modelOutput, note);
    }
    return {
      call,
      output: output ?? null,
      ...(modelOutput === undefined ? {} : { modelOutput }),
      isError: false,
      returnDirect: tool.returnDirect === true,
      ran: true,
    };
  } catch (error) {
    const shown = ToolTimeoutError.isInstance(error) ? error.message : `Tool "${call.toolName}" failed: ${errorText(error)}`;
    await observation.fail(error, shown);
    if (env.abortSignal?.aborted) throw env.abortSignal.reason;
    return { call, output: shown, isError: true, returnDirect: false, ran: true };
  }
}

/** The tool message that answers a round's calls, in the order they were asked. */
export function toolResultMessage(outcomes: readonly ToolOutcome[]): ModelMessage {
  const content: ToolResultPart[] = outcomes.map((o) => ({
    type: 'tool-result',
    toolCallId: o.call.toolCallId,
    toolName: o.call.toolName,
    output: o.isError
      ? { type: 'error-text', value: String(o.output) }
      : o.modelOutput !== undefined
        ? o.modelOutput
        : typeof o.output === 'string'
          ? { type: 'text', value: o.output }
          : { type: 'json', value: (o.output ?? null) as never },
  }));
  return { role: 'tool', content };
}

/** A shaped output with a steering note after what the tool said. */
function withNote(output: ToolResultOutput, note: string): ToolResultOutput {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return { ...output, value: `${output.value}\n\n${note}` };
    case 'json':
    case 'error-json':
      return { type: output.type === 'json' ? 'text' : 'error-text', value: `${JSON.stringify(output.value)}\n\n${note}` };
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
