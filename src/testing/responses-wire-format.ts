/**
 * JSON shapes of the OpenAI Responses API wire format (`POST /v1/responses`),
 * as the scripted stand-in model emits them, and the reading of a Responses
 * request's `input` as chat messages. Field names follow what the `openai`
 * client and `@ai-sdk/openai` parse.
 */
import type { NamedEvent } from './anthropic-wire-format.ts';
import { splitIntoPieces, splitTextIntoPieces, type WireAnswer } from './openai-wire-format.ts';
import type { ChatCompletionMessage } from './recorded-request.ts';

/** How many pieces streamed tool arguments are cut into, so clients must reassemble deltas. */
const ARGUMENT_PIECES = 3;

function responseId(answer: WireAnswer): string {
  return answer.id.replace(/^chatcmpl-/, 'resp_');
}

function usage(answer: WireAnswer): Record<string, unknown> {
  return {
    input_tokens: answer.usage.promptTokens,
    input_tokens_details: { cached_tokens: answer.usage.cachedTokens ?? 0 },
    output_tokens: answer.usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: answer.usage.promptTokens + answer.usage.completionTokens,
  };
}

/** The container the stand-in's code interpreter runs in. */
const CONTAINER_ID = 'cntr_scripted';

/** The API's client-run built-in tools the stand-in answers with their own call items, by the tool's `type`. */
const BUILT_IN_CALLS: Readonly<Record<string, (call: { id: string; arguments: string }) => Record<string, unknown>>> = {
  // A shell call's arguments are its action: `{ commands, timeout_ms?, max_output_length? }`.
  shell: (call) => ({ type: 'shell_call', action: parseObject(call.arguments), environment: { type: 'local' } }),
  // A patch's arguments are its operation: `{ type: 'update_file', path, diff }`, …
  apply_patch: (call) => ({ type: 'apply_patch_call', operation: parseObject(call.arguments) }),
};

function parseObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** The built-in tools a request's `tools` declare that the stand-in answers with their own call items. */
export function builtInToolsOf(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: unknown) => {
    const type = typeof tool === 'object' && tool !== null ? (tool as { type?: unknown }).type : undefined;
    return typeof type === 'string' && type in BUILT_IN_CALLS ? [type] : [];
  });
}

/** The call item of a tool call: a built-in tool's own item when the request declares that tool, else a function call. */
function callItem(call: { id: string; name: string; arguments: string }, echo: ResponsesEcho): Record<string, unknown> {
  const builtIn = echo.builtInTools?.includes(call.name) === true ? BUILT_IN_CALLS[call.name] : undefined;
  if (builtIn !== undefined) return { ...builtIn(call), id: `fc_${call.id}`, call_id: call.id, status: 'completed' };
  return { type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' };
}

/**
 * The output items of an answer: its hosted web searches, code runs, MCP tool calls and shell runs, a
 * message when there is text (or nothing else), then one call item per tool call.
 */
function outputItems(answer: WireAnswer, echo: ResponsesEcho): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = answer.webSearches.map((search) => ({
    type: 'web_search_call',
    id: search.id,
    status: 'completed',
    action:
      'page' in search
        ? { type: 'open_page', url: search.page.url }
        : {
            type: 'search',
            query: search.query,
            ...(search.sources === undefined ? {} : { sources: search.sources.map((url) => ({ type: 'url', url })) }),
          },
  }));
  for (const run of answer.codeRuns) {
    items.push({
      type: 'code_interpreter_call',
      id: run.id,
      status: 'completed',
      code: run.code,
      container_id: CONTAINER_ID,
      outputs: echo.codeOutputs === true ? (run.output === '' ? [] : [{ type: 'logs', logs: run.output }]) : null,
    });
  }
  for (const call of answer.mcpCalls) {
    items.push({
      type: 'mcp_call',
      id: call.id,
      status: call.error === undefined ? 'completed' : 'failed',
      server_label: call.server,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      output: call.error === undefined ? call.output : null,
      error: call.error === undefined ? null : { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: call.error }] },
    });
  }
  for (const run of answer.shellRuns) {
    // A hosted shell: its call runs in the API's container, and its output comes in the same answer.
    const call_id = `call_${run.id}`;
    items.push({
      type: 'shell_call',
      id: run.id,
      call_id,
      status: 'completed',
      action: { commands: run.commands, timeout_ms: null, max_output_length: null },
      environment: { type: 'container_reference', container_id: CONTAINER_ID },
    });
    items.push({
      type: 'shell_call_output',
      id: `${run.id}_output`,
      call_id,
      status: 'completed',
      max_output_length: null,
      output: run.results.map(({ stdout, stderr, exitCode }) => ({
        stdout,
        stderr,
        outcome: exitCode === undefined ? { type: 'timeout' } : { type: 'exit', exit_code: exitCode },
      })),
    });
  }
  if (answer.text.length > 0 || answer.toolCalls.length === 0) {
    items.push({
      type: 'message',
      id: `msg_${responseId(answer)}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: answer.text, annotations: [] }],
    });
  }
  for (const call of answer.toolCalls) items.push(callItem(call, echo));
  return items;
}

/** What a response takes from its request. */
export interface ResponsesEcho {
  /** The request's `store`: whether the API keeps the response for `previous_response_id`. @default true */
  readonly store?: boolean;
  /** Whether the request's `include` asks for `code_interpreter_call.outputs`: without it a code run's `outputs` are null. @default false */
  readonly codeOutputs?: boolean;
  /**
   * The client-run built-in tools the request declares (`shell`, `apply_patch`): a scripted
   * tool call named after one comes as that tool's call item (`shell_call`, `apply_patch_call`),
   * its arguments the action or operation. @default none
   */
  readonly builtInTools?: readonly string[];
}

function responseShell(
  answer: WireAnswer,
  status: 'in_progress' | 'completed',
  output: Record<string, unknown>[],
  echo: ResponsesEcho,
): Record<string, unknown> {
  return {
    id: responseId(answer),
    object: 'response',
    created_at: answer.created,
    status,
    error: null,
    incomplete_details: null,
    model: answer.model,
    output,
    parallel_tool_calls: true,
    store: echo.store ?? true,
    tool_choice: 'auto',
    tools: [],
    usage: status === 'completed' ? usage(answer) : null,
  };
}

/** Body of a non-streaming Responses API response. */
export function responsesObject(answer: WireAnswer, echo: ResponsesEcho = {}): Record<string, unknown> {
  return responseShell(answer, 'completed', outputItems(answer, echo), echo);
}

/**
 * The events of a streamed Responses API response, in order: `response.created`,
 * `response.in_progress`, one item per hosted web search, one per code run
 * (its code in pieces), one per MCP tool call (its arguments in pieces), two per hosted shell run
 * (its call, its commands one by one; its output), the message item (its text word by word), one function-call item per tool call (its
 * arguments in pieces), `response.completed`.
 */
export function responsesEvents(answer: WireAnswer, echo: ResponsesEcho = {}): NamedEvent[] {
  const events: NamedEvent[] = [];
  const push = (type: string, fields: Record<string, unknown>): void => {
    events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  };
  push('response.created', { response: responseShell(answer, 'in_progress', [], echo) });
  push('response.in_progress', { response: responseShell(answer, 'in_progress', [], echo) });
  const items = outputItems(answer, echo);
  items.forEach((item, output_index) => {
    if (item['type'] === 'message') {
      const item_id = item['id'];
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const delta of splitTextIntoPieces(answer.text))
        push('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
      push('response.output_text.done', { item_id, output_index, content_index: 0, text: answer.text, logprobs: [] });
      push('response.content_part.done', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: answer.text, annotations: [] } });
      push('response.output_item.done', { output_index, item });
      return;
    }
    const item_id = item['id'];
    if (item['type'] === 'web_search_call') {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', action: { type: 'search' } } });
      for (const stage of ['in_progress', 'searching', 'completed']) push(`response.web_search_call.${stage}`, { item_id, output_index });
      push('response.output_item.done', { output_index, item });
      return;
    }
    // A call whose code or arguments arrive in pieces: added without them (and without its outcome), the stage events before and after the pieces, done.
    const stream = (field: string, events: string, pending: Record<string, unknown>, before: string[] = [], after: string[] = []) => {
      const value = String(item[field]);
      push('response.output_item.added', { output_index, item: { ...item, ...pending, status: 'in_progress', [field]: '' } });
      for (const stage of before) push(stage, { item_id, output_index });
      for (const delta of splitIntoPieces(value, ARGUMENT_PIECES)) push(`${events}.delta`, { item_id, output_index, delta });
      push(`${events}.done`, { item_id, output_index, [field]: value });
      for (const stage of after) push(stage, { item_id, output_index });
      push('response.output_item.done', { output_index, item });
    };
    if (item['type'] === 'code_interpreter_call') {
      const stage = 'response.code_interpreter_call';
      stream('code', `${stage}_code`, { outputs: null }, [`${stage}.in_progress`], [`${stage}.interpreting`, `${stage}.completed`]);
    } else if (item['type'] === 'shell_call' && (item['environment'] as { type: string }).type === 'container_reference') {
      // A hosted shell's call: added before its commands, each command streamed, done.
      const commands = (item['action'] as { commands: string[] }).commands;
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', action: { ...(item['action'] as object), commands: [] } } });
      commands.forEach((command, command_index) => {
        push('response.shell_call_command.added', { output_index, command_index, command: '' });
        push('response.shell_call_command.done', { output_index, command_index, command });
      });
      push('response.output_item.done', { output_index, item });
    } else if (item['type'] === 'shell_call_output') {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', output: [] } });
      push('response.output_item.done', { output_index, item });
    } else if (String(item['type']) in BUILT_IN_OUTPUTS) {
      // Its action or operation arrives whole.
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress' } });
      push('response.output_item.done', { output_index, item });
    } else if (item['type'] === 'mcp_call') {
      stream(
        'arguments',
        'response.mcp_call_arguments',
        { output: null, error: null },
        ['response.mcp_call.in_progress'],
        [`response.mcp_call.${String(item['status'])}`],
      );
    } else {
      stream('arguments', 'response.function_call_arguments', {});
    }
  });
  push('response.completed', { response: responseShell(answer, 'completed', items, echo) });
  return events;
}

/** The built-in call items the stand-in writes, and the input items that answer them. */
const BUILT_IN_OUTPUTS: Readonly<Record<string, string>> = { shell_call: 'shell_call_output', apply_patch_call: 'apply_patch_call_output' };

/** Parallel calls are one assistant message in the chat format. */
function pushCall(messages: ChatCompletionMessage[], call: Record<string, unknown>): void {
  const last = messages.at(-1);
  if (last?.role === 'assistant' && Array.isArray(last.tool_calls) && last.content === null) last.tool_calls.push(call);
  else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/** A shell's output (what each command printed: stdout, then stderr) or a patch's output text. */
function builtInOutputText(output: unknown): string {
  if (!Array.isArray(output)) return typeof output === 'string' ? output : '';
  return output
    .flatMap((entry: unknown) => {
      const run = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
      return [run['stdout'], run['stderr']].filter((out): out is string => typeof out === 'string' && out !== '');
    })
    .join('\n');
}

/** Text of a Responses content value: a string, or parts with `text`. */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '',
    )
    .join('');
}

/**
 * A Responses request's `instructions` and `input` read as chat messages
 * (instructions a system message, a string input one user message, function
 * calls assistant tool calls, their outputs tool messages), so that one script
 * and the token estimate serve every API the stand-in speaks. Items of other
 * kinds (reasoning, references) are left out.
 */
export function responsesInputAsMessages(body: Record<string, unknown>): ChatCompletionMessage[] {
  const messages: ChatCompletionMessage[] = [];
  if (typeof body['instructions'] === 'string' && body['instructions'] !== '') messages.push({ role: 'system', content: body['instructions'] });
  const input = body['input'];
  if (typeof input === 'string') return [...messages, { role: 'user', content: input }];
  for (const raw of Array.isArray(input) ? input : []) {
    if (typeof raw !== 'object' || raw === null) continue;
    const item = raw as Record<string, unknown>;
    const type = item['type'] ?? 'message';
    if (type === 'message' && typeof item['role'] === 'string') {
      messages.push({ role: item['role'], content: partsText(item['content']) });
    } else if (type === 'function_call') {
      pushCall(messages, { id: item['call_id'], type: 'function', function: { name: item['name'], arguments: item['arguments'] } });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item['call_id'], content: partsText(item['output']) });
    } else if (typeof type === 'string' && type in BUILT_IN_OUTPUTS) {
      pushCall(messages, {
        id: item['call_id'],
        type: 'function',
        function: { name: type.replace(/_call$/, ''), arguments: JSON.stringify(item['action'] ?? item['operation'] ?? {}) },
      });
    } else if (typeof type === 'string' && Object.values(BUILT_IN_OUTPUTS).includes(type)) {
      messages.push({ role: 'tool', tool_call_id: item['call_id'], content: builtInOutputText(item['output']) });
    }
  }
  return messages;
}
