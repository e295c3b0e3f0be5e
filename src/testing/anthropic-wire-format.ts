/**
 * JSON shapes of the Anthropic Messages wire format, as the scripted stand-in
 * model emits them for `POST /v1/messages`. Field names follow what
 * `@ai-sdk/anthropic` and the Anthropic API reference use.
 */
import { splitIntoPieces, splitTextIntoPieces, type WireAnswer } from './openai-wire-format.ts';

/** How many pieces streamed tool input is cut into, so clients must reassemble deltas. */
const INPUT_PIECES = 3;

/** A named server-sent event. */
export interface NamedEvent {
  event: string;
  data: Record<string, unknown>;
}

function usage(answer: WireAnswer): Record<string, unknown> {
  return {
    input_tokens: answer.usage.promptTokens - (answer.usage.cachedTokens ?? 0),
    output_tokens: answer.usage.completionTokens,
    ...(answer.usage.cachedTokens === undefined ? {} : { cache_read_input_tokens: answer.usage.cachedTokens }),
  };
}

function input(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return {};
  }
}

function stopReason(answer: WireAnswer): 'tool_use' | 'end_turn' {
  return answer.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

/** A hosted web search (or page fetch) as its two blocks: the server's tool use, then its result. */
function searchBlocks(search: WireAnswer['webSearches'][number]): [Record<string, unknown>, Record<string, unknown>] {
  const id = search.id.replace(/^ws_/, 'srvtoolu_');
  if ('page' in search) {
    const { url, text } = search.page;
    return [
      { type: 'server_tool_use', id, name: 'web_fetch', input: { url } },
      {
        type: 'web_fetch_tool_result',
        tool_use_id: id,
        content: {
          type: 'web_fetch_result',
          url,
          // A date, not null: providers before @ai-sdk/anthropic 4.0.46 refuse a null.
          retrieved_at: new Date(0).toISOString(),
          content: { type: 'document', title: url, source: { type: 'text', media_type: 'text/plain', data: text } },
        },
      },
    ];
  }
  return [
    { type: 'server_tool_use', id, name: 'web_search', input: { query: search.query } },
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: (search.sources ?? []).map((url) => ({ type: 'web_search_result', url, title: url, encrypted_content: '', page_age: null })),
    },
  ];
}

/** A hosted code run as its two blocks: a `bash_code_execution` server tool use, then its result (the output as stderr when the run failed). */
function codeBlocks(run: WireAnswer['codeRuns'][number]): [Record<string, unknown>, Record<string, unknown>] {
  const id = run.id.replace(/^ci_/, 'srvtoolu_code_');
  const failed = run.exitCode !== 0;
  return [
    { type: 'server_tool_use', id, name: 'bash_code_execution', input: { command: run.code } },
    {
      type: 'bash_code_execution_tool_result',
      tool_use_id: id,
      content: {
        type: 'bash_code_execution_result',
        stdout: failed ? '' : run.output,
        stderr: failed ? run.output : '',
        return_code: run.exitCode,
        content: [],
      },
    },
  ];
}

/** A remote MCP tool call through the MCP connector as its two blocks: the tool use, then its result. */
function mcpBlocks(call: WireAnswer['mcpCalls'][number]): [Record<string, unknown>, Record<string, unknown>] {
  const id = call.id.replace(/^mcp_/, 'mcptoolu_');
  return [
    { type: 'mcp_tool_use', id, name: call.name, server_name: call.server, input: call.arguments },
    { type: 'mcp_tool_result', tool_use_id: id, is_error: call.error !== undefined, content: [{ type: 'text', text: call.error ?? call.output }] },
  ];
}

/** The server tool blocks of an answer, in pairs: its searches (and pages fetched), its code runs, then its MCP tool calls. */
function serverToolBlocks(answer: WireAnswer): [Record<string, unknown>, Record<string, unknown>][] {
  return [...answer.webSearches.map(searchBlocks), ...answer.codeRuns.map(codeBlocks), ...answer.mcpCalls.map(mcpBlocks)];
}

/** Body of a non-streaming Messages response. */
export function anthropicMessage(answer: WireAnswer): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (answer.reasoning !== undefined) content.push({ type: 'thinking', thinking: answer.reasoning.text, signature: answer.reasoning.signature });
  content.push(...serverToolBlocks(answer).flat());
  if (answer.text.length > 0 || answer.toolCalls.length === 0) content.push({ type: 'text', text: answer.text });
  for (const call of answer.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: input(call.arguments) });
  return {
    id: answer.id.replace(/^chatcmpl-/, 'msg_'),
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stopReason(answer),
    stop_sequence: null,
    usage: usage(answer),
  };
}

/**
 * The events of a streamed Messages response, in order: `message_start`, a
 * thinking block (its text in pieces, then its signature), each
 * hosted web search's, code run's and MCP tool call's two blocks, a text block streamed word by word, one
 * `tool_use` block per call with its input in pieces, `message_delta` with the
 * stop reason and output tokens, `message_stop`.
 */
export function anthropicEvents(answer: WireAnswer): NamedEvent[] {
  const message = anthropicMessage(answer);
  const events: NamedEvent[] = [
    {
      event: 'message_start',
      data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage(answer), output_tokens: 1 } } },
    },
  ];
  let index = 0;
  if (answer.reasoning !== undefined) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } } });
    for (const piece of splitTextIntoPieces(answer.reasoning.text)) {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } } });
    }
    events.push({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: answer.reasoning.signature } },
    });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index += 1;
  }
  for (const [use, result] of serverToolBlocks(answer)) {
    // A server tool's input streams in pieces; an MCP tool use starts whole, as @ai-sdk/anthropic reads it.
    const whole = use['type'] === 'mcp_tool_use';
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: whole ? use : { ...use, input: {} } } });
    for (const piece of whole ? [] : splitIntoPieces(JSON.stringify(use['input']), INPUT_PIECES)) {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index: index + 1, content_block: result } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: index + 1 } });
    index += 2;
  }
  if (answer.text.length > 0 || answer.toolCalls.length === 0) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    for (const piece of splitTextIntoPieces(answer.text)) {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index += 1;
  }
  for (const call of answer.toolCalls) {
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } },
    });
    for (const piece of splitIntoPieces(call.arguments, INPUT_PIECES)) {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index += 1;
  }
  events.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: stopReason(answer), stop_sequence: null }, usage: { output_tokens: answer.usage.completionTokens } },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** Anthropic-style error body. */
export function anthropicErrorBody(message: string, status: number): Record<string, unknown> {
  const type =
    status === 429
      ? 'rate_limit_error'
      : status === 529
        ? 'overloaded_error'
        : status >= 500
          ? 'api_error'
          : status === 404
            ? 'not_found_error'
            : 'invalid_request_error';
  return { type: 'error', error: { type, message } };
}
