import type { LanguageModelV4Content, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { RetrievalEvent, ToolCallEvent } from './breaker-event.ts';
import { readShellOutput } from './shell-output.ts';

/*
 * A tool the model's provider runs itself (a hosted web or file search, a
 * page it opens or fetches, code it runs in the provider's sandbox) never
 * passes through the agent's tools, so nothing can gate it before it runs.
 * It can still be judged after: a search as a retrieval (an agent searching
 * the same thing over and over is caught by the RAG fixation detector), a
 * page opened or fetched as a read-only tool call (one reopened again and
 * again is a tool spiral; a fetch that keeps failing, an error loop), code
 * run as a tool call with what it printed (the same code failing the same
 * way again and again is an error loop; so are shell commands run in the
 * provider's container), and a remote MCP server's tool the provider called
 * for the model as the tool call it is.
 */

/** What a door observes of a call the model's provider ran itself. */
export type HostedEvent = RetrievalEvent | ToolCallEvent;

type Item = Readonly<Record<string, unknown>>;

function isItem(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The event, when there is a query to judge. */
function retrieval(queries: readonly string[], results: readonly string[] | undefined): RetrievalEvent | undefined {
  const asked = queries.filter((q) => q.trim() !== '');
  if (asked.length === 0) return undefined;
  return { kind: 'retrieval', query: asked.join('\n'), ...(results === undefined ? {} : { results }) };
}

/**
 * An OpenAI web search's action: a search (with the sources it found, when
 * reported), or a page it opened or searched (the API does not report what
 * the page held). The Responses API writes `open_page` / `find_in_page`, the
 * AI SDK `openPage` / `findInPage`.
 */
function webSearch(action: unknown, sources: unknown): HostedEvent | undefined {
  if (!isItem(action)) return undefined;
  const url = text(action['url']);
  switch (action['type']) {
    case 'search': {
      const queries = typeof action['query'] === 'string' && action['query'] !== '' ? [action['query']] : strings(action['queries']);
      return retrieval(queries, Array.isArray(sources) ? sources.filter(isItem).map((s) => String(s['url'] ?? '')) : undefined);
    }
    case 'open_page':
    case 'openPage':
      return url === undefined ? undefined : { kind: 'tool_call', tool: 'open_page', args: { url }, result: null };
    case 'find_in_page':
    case 'findInPage': {
      const pattern = typeof action['pattern'] === 'string' ? action['pattern'] : '';
      return url === undefined ? undefined : { kind: 'tool_call', tool: 'find_in_page', args: { url, pattern }, result: null };
    }
    default:
      return undefined;
  }
}

/** An OpenAI file search's queries and the passages it found (their text, else their file), when reported. */
function fileSearch(queries: unknown, found: unknown): RetrievalEvent | undefined {
  const results = Array.isArray(found) ? found.filter(isItem).map((r) => String(r['text'] ?? r['file_id'] ?? r['fileId'] ?? r['filename'] ?? '')) : undefined;
  return retrieval(strings(queries), results);
}

/** An Anthropic server tool call the server could not carry out: an error naming its code (`error_code`, `errorCode` in the AI SDK). */
function serverToolError(tool: string, args: unknown, result: Item): ToolCallEvent {
  return { kind: 'tool_call', tool, args, result: `${tool} failed: ${String(result['error_code'] ?? result['errorCode'] ?? 'error')}`, error: true };
}

/**
 * An Anthropic web fetch of `url` and its result, as the API writes it
 * (`web_fetch_result` with a `document`, or `web_fetch_tool_result_error`)
 * or as `@ai-sdk/anthropic` reports it (the same, camelCased). The page's
 * text is the result; a PDF's is its data; a failure is an error.
 */
function webFetch(url: unknown, result: unknown): ToolCallEvent | undefined {
  const address = text(url) ?? (isItem(result) ? text(result['url']) : undefined);
  if (address === undefined || !isItem(result)) return undefined;
  const args = { url: address };
  if (result['type'] === 'web_fetch_tool_result_error') return serverToolError('web_fetch', args, result);
  if (result['type'] !== 'web_fetch_result') return undefined;
  const document = isItem(result['content']) ? result['content'] : {};
  const source = isItem(document['source']) ? document['source'] : {};
  return { kind: 'tool_call', tool: 'web_fetch', args, result: typeof source['data'] === 'string' ? source['data'] : String(document['title'] ?? '') };
}

/** How a Python run that raised says so: the traceback's header, or its last line (`NameError: …`). */
const PYTHON_FAILURE = /Traceback \(most recent call last\)|^\w+(?:Error|Exception): /m;

/**
 * An OpenAI code interpreter run: its code, and the logs it printed (`null`
 * when the request did not include the outputs; an image counts as one, its
 * address left out, since it changes every run). A run whose logs hold a
 * Python traceback, or that failed, is an error.
 */
function codeInterpreter(code: unknown, outputs: unknown, failed: boolean): ToolCallEvent | undefined {
  const source = text(code);
  if (source === undefined) return undefined;
  const call = { kind: 'tool_call', tool: 'code_interpreter', args: { code: source } } as const;
  if (failed) return { ...call, result: 'code_interpreter failed', error: true };
  if (!Array.isArray(outputs)) return { ...call, result: null };
  const logs = outputs
    .filter(isItem)
    .map((output) => (output['type'] === 'logs' ? String(output['logs'] ?? '') : output['type'] === 'image' ? '[image]' : ''))
    .join('\n');
  return { ...call, result: logs, ...(PYTHON_FAILURE.test(logs) ? { error: true } : {}) };
}

/** The Anthropic server tools that run code, under the names its API gives their `server_tool_use`. */
const ANTHROPIC_CODE_TOOLS: ReadonlySet<unknown> = new Set(['code_execution', 'bash_code_execution', 'text_editor_code_execution']);

/**
 * An Anthropic code execution call and its result's content, as the API
 * writes it or as `@ai-sdk/anthropic` reports it: what the run printed
 * (stdout, then stderr; an encrypted stdout is left out), an exit code other
 * than 0 as an error with the code; what a file edit or view returned; a
 * call the server could not run as an error with its code.
 */
function codeExecution(tool: string, args: Item, result: unknown): ToolCallEvent | undefined {
  if (!isItem(result) || typeof result['type'] !== 'string') return undefined;
  const type = result['type'];
  const call = { kind: 'tool_call', tool, args } as const;
  if (type.endsWith('_tool_result_error')) return serverToolError(tool, args, result);
  if (type === 'code_execution_result' || type === 'bash_code_execution_result' || type === 'encrypted_code_execution_result') {
    const printed = [result['stdout'], result['stderr']].filter((out): out is string => typeof out === 'string' && out !== '').join('\n');
    const exit = typeof result['return_code'] === 'number' ? result['return_code'] : 0;
    return exit === 0 ? { ...call, result: printed } : { ...call, result: `exit code ${exit}\n${printed}`, error: true };
  }
  if (type.startsWith('text_editor_code_execution_')) {
    return { ...call, result: typeof result['content'] === 'string' ? result['content'] : JSON.stringify(result) };
  }
  return undefined;
}

/** Text of an MCP tool result as the API reports it: a string, or text blocks. */
function mcpText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (typeof part === 'string' ? part : isItem(part) && typeof part['text'] === 'string' ? part['text'] : '')).join('\n');
}

/** What an MCP error reports: a string, or an object with a message (a protocol or HTTP error) or content (the tool's own error). */
function mcpError(error: unknown): string | undefined {
  if (error === null || error === undefined) return undefined;
  if (typeof error === 'string') return error;
  if (!isItem(error)) return String(error);
  if (typeof error['message'] === 'string') return error['message'];
  return mcpText(error['content']) || JSON.stringify(error);
}

/**
 * A remote MCP server's tool the provider called for the model, under the
 * tool's own name: its arguments (an object, or JSON text), and its output
 * or its error.
 */
function mcpCall(name: unknown, args: unknown, output: string | null, error: string | undefined): ToolCallEvent | undefined {
  const tool = text(name);
  if (tool === undefined) return undefined;
  if (error !== undefined) return { kind: 'tool_call', tool, args: args ?? {}, result: error, error: true };
  return { kind: 'tool_call', tool, args: args ?? {}, result: output };
}

/** An Anthropic MCP connector call: its `mcp_tool_result` content is the output, or with `is_error` the error. */
function anthropicMcpCall(name: unknown, input: unknown, content: unknown, isError: boolean): ToolCallEvent | undefined {
  const said = mcpText(content);
  return mcpCall(name, input, said, isError ? said || 'MCP tool error' : undefined);
}

/**
 * A completed hosted call in an OpenAI Responses output item: a
 * `web_search_call` (a search as a retrieval with its sources, when the
 * request asked for them; a page opened or searched as an `open_page` /
 * `find_in_page` tool call), a `file_search_call` as a retrieval (with
 * its results, when included), a `code_interpreter_call` as a
 * `code_interpreter` tool call (a failed one as an error), or an `mcp_call`
 * as a call of its tool (its error, when it has one, as an error). Anything
 * else, a call not finished, or a search that failed: `undefined`.
 */
export function responsesItemCall(item: unknown): HostedEvent | undefined {
  if (!isItem(item)) return undefined;
  if (item['type'] === 'code_interpreter_call' && (item['status'] === 'completed' || item['status'] === 'failed')) {
    return codeInterpreter(item['code'], item['outputs'], item['status'] === 'failed');
  }
  if (item['type'] === 'mcp_call' && (item['output'] != null || item['error'] != null)) {
    return mcpCall(item['name'], item['arguments'], typeof item['output'] === 'string' ? item['output'] : null, mcpError(item['error']));
  }
  if (item['status'] !== 'completed') return undefined;
  if (item['type'] === 'web_search_call') return webSearch(item['action'], isItem(item['action']) ? item['action']['sources'] : undefined);
  if (item['type'] === 'file_search_call') return fileSearch(item['queries'], item['results']);
  return undefined;
}

/** A Responses item's call id: the API's `call_id`, or the OpenAI Agents SDK's `callId`. */
function callIdOf(item: Item): unknown {
  return item['call_id'] ?? item['callId'];
}

/**
 * A shell the provider ran in its own container (OpenAI's hosted shell): a
 * `shell_call` and the `shell_call_output` it was answered with, as the API
 * writes them or as the OpenAI Agents SDK converts them. Recorded as a local
 * shell's run is, so that a loop reads the same whichever runs it: a `shell`
 * tool call with its commands, and what they printed (a command that did not
 * exit 0, or timed out, fails: see {@link readShellOutput}). An output still
 * streaming, or a call without commands: `undefined`.
 */
export function responsesShellCall(call: unknown, output: unknown): ToolCallEvent | undefined {
  if (!isItem(call) || !isItem(output) || output['status'] === 'in_progress') return undefined;
  const commands = strings(isItem(call['action']) ? call['action']['commands'] : undefined);
  if (commands.length === 0) return undefined;
  const { text: printed, error } = readShellOutput(output['output']);
  return { kind: 'tool_call', tool: 'shell', args: { commands }, result: printed, ...(error ? { error: true } : {}) };
}

/**
 * The completed hosted calls among the output items of one OpenAI Responses
 * answer, in order: each item as {@link responsesItemCall} reads it, and each
 * `shell_call` answered by a `shell_call_output` among the same items as a
 * hosted shell's run (see {@link responsesShellCall}). A local shell's call
 * has no output there: the client runs it and sends the output itself.
 */
export function responsesItemCalls(items: readonly unknown[]): HostedEvent[] {
  const shellOutputs = new Map<unknown, Item>();
  for (const item of items) if (isItem(item) && item['type'] === 'shell_call_output') shellOutputs.set(callIdOf(item), item);
  const calls: HostedEvent[] = [];
  for (const item of items) {
    const call = isItem(item) && item['type'] === 'shell_call' ? responsesShellCall(item, shellOutputs.get(callIdOf(item))) : responsesItemCall(item);
    if (call !== undefined) calls.push(call);
  }
  return calls;
}

/** The result blocks of the Anthropic server tools judged here (`web_search`, `web_fetch`, code execution). */
const ANTHROPIC_RESULT_TYPES: ReadonlySet<unknown> = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'mcp_tool_result',
]);

/**
 * Whether an Anthropic content block of this type is part of a server tool
 * call judged here (its `server_tool_use` or its result): the blocks a
 * stream reader keeps for {@link anthropicBlockCalls}.
 */
export function isAnthropicServerToolBlock(type: unknown): boolean {
  return type === 'server_tool_use' || type === 'mcp_tool_use' || ANTHROPIC_RESULT_TYPES.has(type);
}

/**
 * The completed server tool calls among Anthropic Messages content blocks,
 * in order: each `server_tool_use` of `web_search` as a retrieval with the
 * addresses its `web_search_tool_result` found (left out when that is an
 * error, or missing), each of `web_fetch` as a `web_fetch` tool call with
 * its `web_fetch_tool_result` (a failed fetch as an error), each of
 * `code_execution`, `bash_code_execution` and `text_editor_code_execution`
 * as a tool call of that name with its input and what it printed or
 * returned; and each `mcp_tool_use` (the MCP connector calling a remote
 * server's tool) as a call of that tool with its `mcp_tool_result`.
 */
export function anthropicBlockCalls(blocks: readonly unknown[]): HostedEvent[] {
  const results = new Map<string, Item>();
  for (const block of blocks) {
    if (isItem(block) && ANTHROPIC_RESULT_TYPES.has(block['type'])) results.set(String(block['tool_use_id']), block);
  }
  const calls: HostedEvent[] = [];
  for (const block of blocks) {
    if (!isItem(block) || (block['type'] !== 'server_tool_use' && block['type'] !== 'mcp_tool_use') || !isItem(block['input'])) continue;
    const result = results.get(String(block['id']));
    if (result === undefined) continue;
    const input = block['input'];
    let call: HostedEvent | undefined;
    if (block['type'] === 'mcp_tool_use') {
      call = anthropicMcpCall(block['name'], input, result['content'], result['is_error'] === true);
    } else if (block['name'] === 'web_search' && Array.isArray(result['content']) && typeof input['query'] === 'string') {
      call = retrieval(
        [input['query']],
        result['content'].filter(isItem).map((r) => String(r['url'] ?? '')),
      );
    } else if (block['name'] === 'web_fetch') {
      call = webFetch(input['url'], result['content']);
    } else if (ANTHROPIC_CODE_TOOLS.has(block['name'])) {
      call = codeExecution(String(block['name']), input, result['content']);
    }
    if (call !== undefined) calls.push(call);
  }
  return calls;
}

function parsed(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A call an AI SDK provider ran itself (a provider-executed tool call and its
 * result, as `@ai-sdk/openai` and `@ai-sdk/anthropic` report them): an
 * OpenAI web search (its action and sources), an OpenAI file search (its
 * queries and results), an OpenAI code interpreter run (its code and
 * logs), an Anthropic web search (its query and the addresses found), web
 * fetch (its address and the page) or code execution (its input and what it
 * printed). Recognised by the result's shape, since the tool may be
 * registered under any name; anything else is `undefined`. A remote MCP
 * server's tool is told by its call (see {@link providerCalls}), except
 * OpenAI's, whose result names it.
 */
function providerExecutedCall(input: unknown, result: unknown): HostedEvent | undefined {
  if (isItem(result) && isItem(result['action'])) return webSearch(result['action'], result['sources']);
  // @ai-sdk/openai's report of a remote MCP tool call: the call's own item, camelCased.
  if (isItem(result) && result['type'] === 'call' && typeof result['serverLabel'] === 'string') {
    return mcpCall(result['name'], result['arguments'], typeof result['output'] === 'string' ? result['output'] : null, mcpError(result['error']));
  }
  if (isItem(result) && Array.isArray(result['queries'])) return fileSearch(result['queries'], result['results']);
  const args = parsed(input);
  // @ai-sdk/openai's report of a hosted shell's run: the call's action, and each command's output (`exitCode`).
  if (isItem(result) && Array.isArray(result['output']) && isItem(args) && isItem(args['action'])) {
    return responsesShellCall({ action: args['action'] }, { output: result['output'] });
  }
  if (isItem(result) && 'outputs' in result && isItem(args)) return codeInterpreter(args['code'], result['outputs'], false);
  if (isItem(result) && isItem(args) && typeof result['type'] === 'string' && /^(?:encrypted_|bash_|text_editor_)?code_execution_/.test(result['type'])) {
    // @ai-sdk/anthropic reports every code execution tool under one name, the API's name as the input's `type`.
    const { type, ...rest } = args;
    return codeExecution(ANTHROPIC_CODE_TOOLS.has(type) ? String(type) : 'code_execution', rest, result);
  }
  if (isItem(result) && (result['type'] === 'web_fetch_result' || result['type'] === 'web_fetch_tool_result_error')) {
    return webFetch(isItem(args) ? args['url'] : undefined, result);
  }
  if (Array.isArray(result) && result.every((r) => isItem(r) && typeof r['url'] === 'string') && isItem(args) && typeof args['query'] === 'string') {
    return retrieval(
      [args['query']],
      result.map((r: Item) => String(r['url'])),
    );
  }
  return undefined;
}

/** A part of an AI SDK model's answer, whole or streamed. */
export type ProviderPart = LanguageModelV4Content | LanguageModelV4StreamPart;

/** Whether `@ai-sdk/anthropic` marked a provider-executed call as the MCP connector's call of a remote tool. */
function isAnthropicMcpCall(part: Extract<ProviderPart, { type: 'tool-call' }>): boolean {
  const anthropic = part.providerMetadata?.['anthropic'];
  return isItem(anthropic) && anthropic['type'] === 'mcp-tool-use';
}

/**
 * The calls an AI SDK provider ran itself, in order (see
 * {@link providerExecutedCall}). Of those that failed, only the ones judged
 * as tool calls count (as errors): a failed search or page found nothing to judge.
 */
export function providerCalls(parts: readonly ProviderPart[]): HostedEvent[] {
  const started = new Map<string, Extract<ProviderPart, { type: 'tool-call' }>>();
  const calls: HostedEvent[] = [];
  for (const part of parts) {
    if (part.type === 'tool-call' && part.providerExecuted === true) started.set(part.toolCallId, part);
    if (part.type !== 'tool-result') continue;
    const start = started.get(part.toolCallId);
    if (start === undefined) continue;
    const call = isAnthropicMcpCall(start)
      ? anthropicMcpCall(start.toolName, start.input, part.result, part.isError === true)
      : providerExecutedCall(start.input, part.result);
    if (call !== undefined && (part.isError !== true || (call.kind === 'tool_call' && call.error === true))) calls.push(call);
  }
  return calls;
}
