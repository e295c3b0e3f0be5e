import { asSchema, safeValidateTypes } from '@ai-sdk/provider-utils';
import type { ModelMessage, ToolResultPart } from 'ai';
import type { GovernedToolSet } from '../chat/chat-client-request.ts';
import type { ToolCallRequest } from '../chat/chat-response.ts';
import { notifyToolCallListeners, type ToolCallListener } from '../chat/tool-call-listener.ts';

/** The outcome of one tool call, as the model will see it. */
export interface ToolOutcome {
  readonly call: ToolCallRequest;
  readonly output: unknown;
  readonly isError: boolean;
  /** True when the tool is return-direct and actually ran. */
  readonly returnDirect: boolean;
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
  const fail = (message: string): ToolOutcome => ({ call, output: message, isError: true, returnDirect: false });
  const tool = env.tools[call.toolName];
  if (tool === undefined) {
    const names = Object.keys(env.tools);
    return fail(`Unknown tool "${call.toolName}". Available tools: ${names.length > 0 ? names.join(', ') : '(none)'}.`);
  }
  if (call.intervention?.action === 'block') return fail(`[${call.intervention.source}] ${call.intervention.message}`);
  if (typeof call.input === 'string' && call.rawInput.trim() !== '') {
    return fail(`Invalid arguments for tool "${call.toolName}": not valid JSON: ${call.rawInput.slice(0, 200)}`);
  }
  const validated = await safeValidateTypes({ value: call.input, schema: asSchema(tool.inputSchema) });
  if (!validated.success) {
    return fail(`Invalid arguments for tool "${call.toolName}": ${errorText(validated.error)}`);
  }
  if (typeof tool.execute !== 'function') {
    return fail(`Tool "${call.toolName}" has no execute function and cannot be run here.`);
  }
  const info = { toolCallId: call.toolCallId, toolName: call.toolName, args: validated.value, sessionId: env.sessionId };
  notifyToolCallListeners(env.listeners, 'onToolCallStart', info);
  const started = performance.now();
  try {
    env.abortSignal?.throwIfAborted();
    const returned: unknown = tool.execute(validated.value as never, {
      toolCallId: call.toolCallId,
      messages: [...env.messages],
      abortSignal: env.abortSignal,
      context: env.toolContext as never,
    });
    let output: unknown;
    if (returned !== null && typeof returned === 'object' && Symbol.asyncIterator in returned) {
      // A streaming tool: its last value is its result.
      for await (const value of returned as AsyncIterable<unknown>) output = value;
    } else {
      output = await returned;
    }
    if (call.intervention?.action === 'steer') {
      output = `${typeof output === 'string' ? output : JSON.stringify(output)}\n\n[${call.intervention.source}] ${call.intervention.message}`;
    }
    notifyToolCallListeners(env.listeners, 'onToolCallEnd', { ...info, result: output, durationMs: performance.now() - started });
    return { call, output: output ?? null, isError: false, returnDirect: tool.returnDirect === true };
  } catch (error) {
    notifyToolCallListeners(env.listeners, 'onToolCallError', { ...info, error, durationMs: performance.now() - started });
    if (env.abortSignal?.aborted) throw env.abortSignal.reason;
    return fail(`Tool "${call.toolName}" failed: ${errorText(error)}`);
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
      : typeof o.output === 'string'
        ? { type: 'text', value: o.output }
        : { type: 'json', value: (o.output ?? null) as never },
  }));
  return { role: 'tool', content };
}
