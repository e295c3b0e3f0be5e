import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { anthropicBlockSearches, providerSearches, responsesItemSearch } from './hosted-search.ts';

/** What the provider reports for one search it ran: its call, then its result. */
function providerExecutedSearch(input: string, result: unknown) {
  const parts = [
    { type: 'tool-call', toolCallId: 'ws_1', toolName: 'any_name', input, providerExecuted: true },
    { type: 'tool-result', toolCallId: 'ws_1', toolName: 'any_name', result },
  ] as Parameters<typeof providerSearches>[0];
  const [search, ...rest] = providerSearches(parts);
  assert.equal(rest.length, 0);
  return search;
}

describe('hosted searches as retrievals', () => {
  test('an AI SDK provider-executed search is read by the shape of its result, whatever the tool is called', () => {
    // @ai-sdk/openai web search: the query is in the result's action, the input is empty.
    assert.deepEqual(providerExecutedSearch('{}', { action: { type: 'search', query: 'oslo fares' }, sources: [{ type: 'url', url: 'https://a.example' }] }), {
      kind: 'retrieval',
      query: 'oslo fares',
      results: ['https://a.example'],
    });
    assert.deepEqual(providerExecutedSearch('{}', { action: { type: 'search', queries: ['a', 'b'] } }), { kind: 'retrieval', query: 'a\nb' });
    // @ai-sdk/openai file search: queries and passages (null when not included).
    assert.deepEqual(providerExecutedSearch('{}', { queries: ['refund policy'], results: [{ fileId: 'f1', text: 'Refunds within 30 days.' }] }), {
      kind: 'retrieval',
      query: 'refund policy',
      results: ['Refunds within 30 days.'],
    });
    assert.deepEqual(providerExecutedSearch('{}', { queries: ['refund policy'], results: null }), { kind: 'retrieval', query: 'refund policy' });
    // @ai-sdk/anthropic web search: the query is the input, the result the pages found.
    assert.deepEqual(providerExecutedSearch('{"query":"oslo fares"}', [{ type: 'web_search_result', url: 'https://a.example', title: 'A' }]), {
      kind: 'retrieval',
      query: 'oslo fares',
      results: ['https://a.example'],
    });
  });

  test('anything that is not a search with a query is left out', () => {
    for (const [input, result] of [
      ['{}', { action: { type: 'openPage', url: 'https://a.example' } }],
      ['{}', { action: { type: 'search' } }],
      ['{"code":"print(1)"}', { type: 'code_execution_result', stdout: '1' }],
      ['{"query":"x"}', [{ type: 'other' }]],
      ['not json', [{ url: 'https://a.example' }]],
      ['{"query":"  "}', [{ url: 'https://a.example' }]],
    ] as const) {
      assert.equal(providerExecutedSearch(input, result), undefined, JSON.stringify(result));
    }
    assert.equal(responsesItemSearch({ type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'x' } }), undefined);
    assert.equal(responsesItemSearch({ type: 'code_interpreter_call', status: 'completed', code: 'print(1)' }), undefined);
    assert.equal(responsesItemSearch('web_search_call'), undefined);
    assert.deepEqual(anthropicBlockSearches([{ type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'x' } }]), [], 'no result yet');
  });
});
