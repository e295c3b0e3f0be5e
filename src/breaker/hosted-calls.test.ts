import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { anthropicBlockCalls, providerCalls, responsesItemCall, responsesItemCalls } from './hosted-calls.ts';

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
      ['{"code":"print(1)"}', { type: 'image_generation_result' }],
      ['"print(1)"', { type: 'code_execution_result', stdout: '1' }],
      ['{}', { outputs: [] }],
      ['{"query":"x"}', [{ type: 'other' }]],
      ['not json', [{ url: 'https://a.example' }]],
      ['{"query":"  "}', [{ url: 'https://a.example' }]],
    ] as const) {
      assert.equal(providerExecuted(input, result), undefined, JSON.stringify(result));
    }
    assert.equal(responsesItemCall({ type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'x' } }), undefined);
    assert.equal(responsesItemCall({ type: 'code_interpreter_call', status: 'interpreting', code: 'print(1)' }), undefined);
    assert.equal(responsesItemCall({ type: 'code_interpreter_call', status: 'completed', code: '' }), undefined);
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

describe('code a provider ran as tool calls', () => {
  const traceback =
    'ZeroDivisionError                         Traceback (most recent call last)\nCell In[1], line 1\n----> 1 1/0\n\nZeroDivisionError: division by zero';

  test('an OpenAI code interpreter run, from the Responses API or the AI SDK: the code is the argument, its logs the result, a traceback an error', () => {
    const ran = { kind: 'tool_call', tool: 'code_interpreter', args: { code: 'print(6 * 7)' }, result: '42\n' };
    const logs = [{ type: 'logs', logs: '42\n' }];
    assert.deepEqual(responsesItemCall({ type: 'code_interpreter_call', status: 'completed', code: 'print(6 * 7)', container_id: 'c1', outputs: logs }), ran);
    assert.deepEqual(providerExecuted('{"code":"print(6 * 7)","containerId":"c1"}', { outputs: logs }), ran);
    assert.deepEqual(responsesItemCall({ type: 'code_interpreter_call', status: 'completed', code: '1/0', outputs: [{ type: 'logs', logs: traceback }] }), {
      kind: 'tool_call',
      tool: 'code_interpreter',
      args: { code: '1/0' },
      result: traceback,
      error: true,
    });
    // Outputs are reported only when the request includes them; an image's address changes every run.
    assert.deepEqual(providerExecuted('{"code":"plot()"}', { outputs: null }), {
      kind: 'tool_call',
      tool: 'code_interpreter',
      args: { code: 'plot()' },
      result: null,
    });
    assert.deepEqual(
      responsesItemCall({
        type: 'code_interpreter_call',
        status: 'completed',
        code: 'plot()',
        outputs: [{ type: 'image', url: 'https://files.example/1.png' }],
      }),
      { kind: 'tool_call', tool: 'code_interpreter', args: { code: 'plot()' }, result: '[image]' },
    );
    assert.deepEqual(responsesItemCall({ type: 'code_interpreter_call', status: 'failed', code: 'while True: pass', outputs: null }), {
      kind: 'tool_call',
      tool: 'code_interpreter',
      args: { code: 'while True: pass' },
      result: 'code_interpreter failed',
      error: true,
    });
  });

  test('an Anthropic code execution, from the Messages API or the AI SDK: under the API tool name, its input as arguments, an exit code other than 0 an error', () => {
    const failed = { type: 'bash_code_execution_result', stdout: '', stderr: 'cat: data.csv: No such file or directory', return_code: 1, content: [] };
    const expected = {
      kind: 'tool_call',
      tool: 'bash_code_execution',
      args: { command: 'cat data.csv' },
      result: 'exit code 1\ncat: data.csv: No such file or directory',
      error: true,
    };
    assert.deepEqual(
      anthropicBlockCalls([
        { type: 'server_tool_use', id: 's1', name: 'bash_code_execution', input: { command: 'cat data.csv' } },
        { type: 'bash_code_execution_tool_result', tool_use_id: 's1', content: failed },
      ]),
      [expected],
    );
    // @ai-sdk/anthropic reports every code execution tool as one, the API's tool name as the input's type.
    assert.deepEqual(providerExecuted('{"type":"bash_code_execution","command":"cat data.csv"}', failed), expected);
    assert.deepEqual(
      providerExecuted('{"type":"programmatic-tool-call","code":"print(1)"}', {
        type: 'code_execution_result',
        stdout: '1\n',
        stderr: '',
        return_code: 0,
        content: [],
      }),
      {
        kind: 'tool_call',
        tool: 'code_execution',
        args: { code: 'print(1)' },
        result: '1\n',
      },
    );
    assert.deepEqual(
      providerExecuted('{"type":"text_editor_code_execution","command":"view","path":"/tmp/a.py"}', {
        type: 'text_editor_code_execution_view_result',
        content: 'x = 1',
        file_type: 'text',
        num_lines: 1,
        start_line: 1,
        total_lines: 1,
      }),
      { kind: 'tool_call', tool: 'text_editor_code_execution', args: { command: 'view', path: '/tmp/a.py' }, result: 'x = 1' },
    );
    assert.deepEqual(providerExecuted('{"code":"print(1)"}', { type: 'code_execution_tool_result_error', errorCode: 'execution_time_exceeded' }, true), {
      kind: 'tool_call',
      tool: 'code_execution',
      args: { code: 'print(1)' },
      result: 'code_execution failed: execution_time_exceeded',
      error: true,
    });
    // An encrypted stdout cannot be compared: what is left is stderr and the exit code.
    assert.deepEqual(
      anthropicBlockCalls([
        { type: 'server_tool_use', id: 's2', name: 'code_execution', input: { code: 'print(1)' } },
        {
          type: 'code_execution_tool_result',
          tool_use_id: 's2',
          content: { type: 'encrypted_code_execution_result', encrypted_stdout: 'AbC=', stderr: '', return_code: 0 },
        },
      ]),
      [{ kind: 'tool_call', tool: 'code_execution', args: { code: 'print(1)' }, result: '' }],
    );
  });
});

describe('remote MCP tools a provider called as tool calls', () => {
  test('an OpenAI mcp_call, from the Responses API or the AI SDK: under the tool name, its arguments, its output or its error', () => {
    const item = { type: 'mcp_call', id: 'mcp_1', status: 'completed', server_label: 'tracker', name: 'get_issue', arguments: '{"id":"ENG-42"}' };
    const expected = { kind: 'tool_call', tool: 'get_issue', args: '{"id":"ENG-42"}', result: 'ENG-42: open' };
    assert.deepEqual(responsesItemCall({ ...item, output: 'ENG-42: open', error: null }), expected);
    assert.deepEqual(
      providerExecuted('{"id":"ENG-42"}', { type: 'call', serverLabel: 'tracker', name: 'get_issue', arguments: '{"id":"ENG-42"}', output: 'ENG-42: open' }),
      expected,
    );
    const failed = { kind: 'tool_call', tool: 'get_issue', args: '{"id":"ENG-42"}', result: 'Issue not found', error: true };
    assert.deepEqual(
      responsesItemCall({
        ...item,
        status: 'failed',
        output: null,
        error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'Issue not found' }] },
      }),
      failed,
    );
    assert.deepEqual(responsesItemCall({ ...item, status: 'failed', error: { type: 'http_error', code: 502, message: 'Issue not found' } }), failed);
    assert.deepEqual(
      providerExecuted('{}', { type: 'call', serverLabel: 'tracker', name: 'get_issue', arguments: '{"id":"ENG-42"}', error: 'Issue not found' }),
      failed,
    );
    assert.equal(responsesItemCall({ ...item, status: 'calling' }), undefined, 'not finished');
  });

  test('an Anthropic MCP connector call, from the Messages API or the AI SDK: under the tool name, its input, its text or its error', () => {
    assert.deepEqual(
      anthropicBlockCalls([
        { type: 'mcp_tool_use', id: 'm1', name: 'get_issue', server_name: 'tracker', input: { id: 'ENG-42' } },
        { type: 'mcp_tool_result', tool_use_id: 'm1', is_error: false, content: [{ type: 'text', text: 'ENG-42: open' }] },
        { type: 'mcp_tool_use', id: 'm2', name: 'get_issue', server_name: 'tracker', input: { id: 'ENG-43' } },
        { type: 'mcp_tool_result', tool_use_id: 'm2', is_error: true, content: 'Issue not found' },
      ]),
      [
        { kind: 'tool_call', tool: 'get_issue', args: { id: 'ENG-42' }, result: 'ENG-42: open' },
        { kind: 'tool_call', tool: 'get_issue', args: { id: 'ENG-43' }, result: 'Issue not found', error: true },
      ],
    );
    // @ai-sdk/anthropic marks the call in its provider metadata; its result is the blocks as the API sent them.
    const parts = [
      {
        type: 'tool-call',
        toolCallId: 'm1',
        toolName: 'get_issue',
        input: '{"id":"ENG-42"}',
        providerExecuted: true,
        dynamic: true,
        providerMetadata: { anthropic: { type: 'mcp-tool-use', serverName: 'tracker' } },
      },
      { type: 'tool-result', toolCallId: 'm1', toolName: 'get_issue', isError: true, result: [{ type: 'text', text: 'Issue not found' }], dynamic: true },
    ] as Parameters<typeof providerCalls>[0];
    assert.deepEqual(providerCalls(parts), [{ kind: 'tool_call', tool: 'get_issue', args: '{"id":"ENG-42"}', result: 'Issue not found', error: true }]);
  });
});

describe('shell commands a provider ran in its own container as tool calls', () => {
  test('an OpenAI hosted shell, from the Responses API or the Agents SDK: a shell_call paired by its call id with the shell_call_output in the same answer', () => {
    const call = { type: 'shell_call', id: 'sh_1', call_id: 'c1', status: 'completed', action: { commands: ['npm test'], timeout_ms: null } };
    const output = {
      type: 'shell_call_output',
      call_id: 'c1',
      status: 'completed',
      output: [{ stdout: '', stderr: 'FAIL cart', outcome: { type: 'exit', exit_code: 1 } }],
    };
    const failed = { kind: 'tool_call', tool: 'shell', args: { commands: ['npm test'] }, result: 'exit code 1\nFAIL cart', error: true };
    // Recorded at the call's place, among the other hosted calls.
    const search = { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'vitest config' } };
    assert.deepEqual(responsesItemCalls([search, call, output]), [{ kind: 'retrieval', query: 'vitest config' }, failed]);
    // The Agents SDK's items: camelCased, its exit code `exitCode`.
    const sdkCall = { type: 'shell_call', callId: 'c2', status: 'completed', action: { commands: ['ls', 'npm test'] } };
    const sdkOutput = {
      type: 'shell_call_output',
      callId: 'c2',
      output: [
        { stdout: 'src', stderr: '', outcome: { type: 'exit', exitCode: 0 } },
        { stdout: '', stderr: '', outcome: { type: 'timeout' } },
      ],
    };
    assert.deepEqual(responsesItemCalls([sdkOutput, sdkCall]), [
      { kind: 'tool_call', tool: 'shell', args: { commands: ['ls', 'npm test'] }, result: 'src\ntimed out', error: true },
    ]);
    const passed = { ...output, output: [{ stdout: '3 passed', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] };
    assert.deepEqual(responsesItemCalls([call, passed]), [{ kind: 'tool_call', tool: 'shell', args: { commands: ['npm test'] }, result: '3 passed' }]);
  });

  test('a shell call whose output is not in the answer (a local shell, the client runs it), or still streaming, is left out', () => {
    const call = { type: 'shell_call', call_id: 'c1', status: 'completed', action: { commands: ['npm test'] } };
    assert.deepEqual(responsesItemCalls([call]), []);
    assert.deepEqual(responsesItemCalls([call, { type: 'shell_call_output', call_id: 'c2', output: [] }]), [], 'another call id');
    assert.deepEqual(responsesItemCalls([call, { type: 'shell_call_output', call_id: 'c1', status: 'in_progress', output: [] }]), []);
    assert.deepEqual(
      responsesItemCalls([
        { ...call, action: { commands: [] } },
        { type: 'shell_call_output', call_id: 'c1', output: [] },
      ]),
      [],
    );
    assert.equal(responsesItemCall(call), undefined, 'an item alone cannot tell');
  });
});
