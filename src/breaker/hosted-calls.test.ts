import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { anthropicBlockCalls, providerCalls, responsesItemCall } from './hosted-calls.ts';

/** What the provider reports for one call it ran: the call, then its result. */
function providerExecuted(input: string, result: unknown, isError?: boolean) {
  const parts = [
    { type: 'tool-call', toolCallId: 'ws_1', toolName: 'any_name', input, providerExecuted: true },
    { type: 'tool-result', toolCallId: 'ws_1', toolName: 'any_name', result, ...(isError === undefined ? {} : { isError }) },
  ] as Parameters<typeof providerCalls>[0];
  const [call, ...rest] = providerCalls(parts);
  assert.equal(rest.length, 0);
  return call;
}

describe('hosted searches as retrievals', () => {
  test('an AI SDK provider-executed search is read by the shape of its result, whatever the tool is called', () => {
    // @ai-sdk/openai web search: the query is in the result's action, the input is empty.
    assert.deepEqual(providerExecuted('{}', { action: { type: 'search', query: 'oslo fares' }, sources: [{ type: 'url', url: 'https://a.example' }] }), {
      kind: 'retrieval',
      query: 'oslo fares',
      results: ['https://a.example'],
    });
    assert.deepEqual(providerExecuted('{}', { action: { type: 'search', queries: ['a', 'b'] } }), { kind: 'retrieval', query: 'a\nb' });
    // @ai-sdk/openai file search: queries and passages (null when not included).
    assert.deepEqual(providerExecuted('{}', { queries: ['refund policy'], results: [{ fileId: 'f1', text: 'Refunds within 30 days.' }] }), {
      kind: 'retrieval',
      query: 'refund policy',
      results: ['Refunds within 30 days.'],
    });
    assert.deepEqual(providerExecuted('{}', { queries: ['refund policy'], results: null }), { kind: 'retrieval', query: 'refund policy' });
    // @ai-sdk/anthropic web search: the query is the input, the result the pages found.
    assert.deepEqual(providerExecuted('{"query":"oslo fares"}', [{ type: 'web_search_result', url: 'https://a.example', title: 'A' }]), {
      kind: 'retrieval',
      query: 'oslo fares',
      results: ['https://a.example'],
    });
  });

  test('anything that is not a search with a query is left out', () => {
    for (const [input, result] of [
      ['{}', { action: { type: 'openPage' } }],
      ['{}', { action: { type: 'search' } }],
      ['{"code":"print(1)"}', { type: 'code_execution_result', stdout: '1' }],
      ['{"query":"x"}', [{ type: 'other' }]],
      ['not json', [{ url: 'https://a.example' }]],
      ['{"query":"  "}', [{ url: 'https://a.example' }]],
    ] as const) {
      assert.equal(providerExecuted(input, result), undefined, JSON.stringify(result));
    }
    assert.equal(responsesItemCall({ type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'x' } }), undefined);
    assert.equal(responsesItemCall({ type: 'code_interpreter_call', status: 'completed', code: 'print(1)' }), undefined);
    assert.equal(responsesItemCall('web_search_call'), undefined);
    assert.deepEqual(anthropicBlockCalls([{ type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'x' } }]), [], 'no result yet');
  });
});

describe('pages a provider opened or fetched as read-only tool calls', () => {
  test('an OpenAI page opened or searched, from the Responses API or the AI SDK: the address (and pattern) are the arguments, the page is not reported', () => {
    const opened = { kind: 'tool_call', tool: 'open_page', args: { url: 'https://a.example/fares' }, result: null };
    const found = { kind: 'tool_call', tool: 'find_in_page', args: { url: 'https://a.example/fares', pattern: 'Oslo' }, result: null };
    assert.deepEqual(
      responsesItemCall({ type: 'web_search_call', status: 'completed', action: { type: 'open_page', url: 'https://a.example/fares' } }),
      opened,
    );
    assert.deepEqual(
      responsesItemCall({ type: 'web_search_call', status: 'completed', action: { type: 'find_in_page', url: 'https://a.example/fares', pattern: 'Oslo' } }),
      found,
    );
    assert.deepEqual(providerExecuted('{}', { action: { type: 'openPage', url: 'https://a.example/fares' } }), opened);
    assert.deepEqual(providerExecuted('{}', { action: { type: 'findInPage', url: 'https://a.example/fares', pattern: 'Oslo' } }), found);
    assert.equal(providerExecuted('{}', { action: { type: 'openPage', url: 'https://a.example/fares' } }, true), undefined, 'a page that failed to open');
  });

  test('an Anthropic web fetch from the AI SDK: the page text is the result; a failed fetch is an error', () => {
    const page = {
      type: 'web_fetch_result',
      url: 'https://a.example/fares',
      retrievedAt: null,
      content: { type: 'document', title: 'Fares', source: { type: 'text', mediaType: 'text/plain', data: 'Oslo from 49 EUR.' } },
    };
    assert.deepEqual(providerExecuted('{"url":"https://a.example/fares"}', page), {
      kind: 'tool_call',
      tool: 'web_fetch',
      args: { url: 'https://a.example/fares' },
      result: 'Oslo from 49 EUR.',
    });
    // The address comes from the result when the input does not carry it.
    assert.deepEqual(providerExecuted('{}', page), {
      kind: 'tool_call',
      tool: 'web_fetch',
      args: { url: 'https://a.example/fares' },
      result: 'Oslo from 49 EUR.',
    });
    assert.deepEqual(providerExecuted('{"url":"https://b.example"}', { type: 'web_fetch_tool_result_error', errorCode: 'url_not_accessible' }, true), {
      kind: 'tool_call',
      tool: 'web_fetch',
      args: { url: 'https://b.example' },
      result: 'web_fetch failed: url_not_accessible',
      error: true,
    });
    assert.equal(providerExecuted('{}', { type: 'web_fetch_tool_result_error', errorCode: 'url_not_accessible' }, true), undefined, 'no address');
  });

  test('calls and results are paired by id, in the order of the calls', () => {
    const calls = anthropicBlockCalls([
      { type: 'server_tool_use', id: 'b', name: 'web_fetch', input: { url: 'https://b.example' } },
      { type: 'server_tool_use', id: 'a', name: 'web_search', input: { query: 'oslo fares' } },
      { type: 'web_search_tool_result', tool_use_id: 'a', content: [{ type: 'web_search_result', url: 'https://a.example' }] },
      {
        type: 'web_fetch_tool_result',
        tool_use_id: 'b',
        content: {
          type: 'web_fetch_result',
          url: 'https://b.example',
          content: { type: 'document', title: 'B', source: { type: 'base64', data: 'JVBERi0x' } },
        },
      },
    ]);
    assert.deepEqual(calls, [
      { kind: 'tool_call', tool: 'web_fetch', args: { url: 'https://b.example' }, result: 'JVBERi0x' },
      { kind: 'retrieval', query: 'oslo fares', results: ['https://a.example'] },
    ]);
  });
});
