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

/**
 * The output items of an answer: its hosted web searches, code runs and MCP tool calls, a
 * message when there is text (or nothing else), then one function call per tool call.
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
  if (answer.text.length > 0 || answer.toolCalls.length === 0) {
    items.push({
      type: 'message',
      id: `msg_${responseId(answer)}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: answer.text, annotations: [] }],
    });
  }
  for (const call of answer.toolCalls) {
    items.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' });
  }
  return items;
}

/** What a response takes from its request. */
export interface ResponsesEcho {
  /** The request's `store`: whether the API keeps the response for `previous_response_id`. @default true */
  readonly store?: boolean;
  /** Whether the request's `include` asks for `code_interpreter_call.outputs`: without it a code run's `outputs` are null. @default false */
  readonly codeOutputs?: boolean;
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
 * (its code in pieces), one per MCP tool call (its arguments in pieces), the message item (its text word by word), one function-call item per tool call (its
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
      const call = { id: item['call_id'], type: 'function', function: { name: item['name'], arguments: item['arguments'] } };
      const last = messages.at(-1);
      // Parallel calls are one assistant message in the chat format.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls) && last.content === null) last.tool_calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item['call_id'], content: partsText(item['output']) });
    }
  }
  return messages;
}
