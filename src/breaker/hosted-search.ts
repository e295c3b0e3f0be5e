import type { LanguageModelV4Content, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { RetrievalEvent } from './breaker-event.ts';

/*
 * A search the model's provider runs itself (a hosted web or file search
 * tool) never passes through the agent's tools, so nothing can gate it before
 * it runs. It is still a retrieval, and observed as one it is judged like
 * any other: an agent searching the same thing over and over is caught by
 * the RAG fixation detector.
 */

type Item = Readonly<Record<string, unknown>>;

function isItem(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The event, when there is a query to judge. */
function retrieval(queries: readonly string[], results: readonly string[] | undefined): RetrievalEvent | undefined {
  const asked = queries.filter((q) => q.trim() !== '');
  if (asked.length === 0) return undefined;
  return { kind: 'retrieval', query: asked.join('\n'), ...(results === undefined ? {} : { results }) };
}

/** An OpenAI web search's action (only a search: not a page opened or searched) and the sources it found, when reported. */
function webSearch(action: unknown, sources: unknown): RetrievalEvent | undefined {
  if (!isItem(action) || action['type'] !== 'search') return undefined;
  const queries = typeof action['query'] === 'string' && action['query'] !== '' ? [action['query']] : strings(action['queries']);
  return retrieval(queries, Array.isArray(sources) ? sources.filter(isItem).map((s) => String(s['url'] ?? '')) : undefined);
}

/** An OpenAI file search's queries and the passages it found (their text, else their file), when reported. */
function fileSearch(queries: unknown, found: unknown): RetrievalEvent | undefined {
  const results = Array.isArray(found) ? found.filter(isItem).map((r) => String(r['text'] ?? r['file_id'] ?? r['fileId'] ?? r['filename'] ?? '')) : undefined;
  return retrieval(strings(queries), results);
}

/**
 * A completed hosted search in an OpenAI Responses output item, as a
 * retrieval: a `web_search_call` whose action is a search (its sources are
 * the results, when the request asked for them), or a `file_search_call`
 * (its results, when included). Anything else, a search that failed, or a
 * web search that opened or searched a page: `undefined`.
 */
export function responsesItemSearch(item: unknown): RetrievalEvent | undefined {
  if (!isItem(item) || item['status'] !== 'completed') return undefined;
  if (item['type'] === 'web_search_call') return webSearch(item['action'], isItem(item['action']) ? item['action']['sources'] : undefined);
  if (item['type'] === 'file_search_call') return fileSearch(item['queries'], item['results']);
  return undefined;
}

/**
 * The completed hosted web searches among Anthropic Messages content blocks,
 * in order, as retrievals: each `server_tool_use` of `web_search` with the
 * addresses its `web_search_tool_result` found. A search whose result is an
 * error, or missing, is left out.
 */
export function anthropicBlockSearches(blocks: readonly unknown[]): RetrievalEvent[] {
  const found = new Map<string, string[]>();
  for (const block of blocks) {
    if (isItem(block) && block['type'] === 'web_search_tool_result' && Array.isArray(block['content'])) {
      found.set(
        String(block['tool_use_id']),
        block['content'].filter(isItem).map((r) => String(r['url'] ?? '')),
      );
    }
  }
  const searches: RetrievalEvent[] = [];
  for (const block of blocks) {
    if (!isItem(block) || block['type'] !== 'server_tool_use' || block['name'] !== 'web_search' || !isItem(block['input'])) continue;
    const results = found.get(String(block['id']));
    const query = block['input']['query'];
    const event = results === undefined || typeof query !== 'string' ? undefined : retrieval([query], results);
    if (event !== undefined) searches.push(event);
  }
  return searches;
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
 * A search an AI SDK provider ran itself (a provider-executed tool call and
 * its result, as `@ai-sdk/openai` and `@ai-sdk/anthropic` report them), as a
 * retrieval: an OpenAI web search (its action and sources), an OpenAI file
 * search (its queries and results) or an Anthropic web search (its query and
 * the addresses found). Recognised by the result's shape, since the tool may
 * be registered under any name; anything else is `undefined`.
 */
function providerExecutedSearch(input: unknown, result: unknown): RetrievalEvent | undefined {
  if (isItem(result) && isItem(result['action'])) return webSearch(result['action'], result['sources']);
  if (isItem(result) && Array.isArray(result['queries'])) return fileSearch(result['queries'], result['results']);
  const args = parsed(input);
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

/** The searches among the tool calls an AI SDK provider ran itself, in order (see {@link providerExecutedSearch}). */
export function providerSearches(parts: readonly ProviderPart[]): RetrievalEvent[] {
  const inputs = new Map<string, string>();
  const searches: RetrievalEvent[] = [];
  for (const part of parts) {
    if (part.type === 'tool-call' && part.providerExecuted === true) inputs.set(part.toolCallId, part.input);
    if (part.type !== 'tool-result' || part.isError === true || !inputs.has(part.toolCallId)) continue;
    const search = providerExecutedSearch(inputs.get(part.toolCallId), part.result);
    if (search !== undefined) searches.push(search);
  }
  return searches;
}
