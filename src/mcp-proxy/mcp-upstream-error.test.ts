import assert from 'node:assert/strict';
import { test } from 'node:test';
import { McpUpstreamError } from './mcp-upstream-error.ts';

/** As fetch fails: "fetch failed", with why in its cause. */
function fetchFailure(cause: Error): TypeError {
  return new TypeError('fetch failed', { cause });
}

test('McpUpstreamError says why fetch failed: the network code of its cause, or the cause in words when it has none', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4000'), { code: 'ECONNREFUSED' });
  assert.equal(
    new McpUpstreamError('http://127.0.0.1:4000', fetchFailure(refused)).message,
    'could not connect to the MCP server http://127.0.0.1:4000: fetch failed (ECONNREFUSED)',
  );
  // fetch refuses some ports itself (1, 25, 6000, …): its cause has words only.
  assert.equal(
    new McpUpstreamError('http://127.0.0.1:1', fetchFailure(new Error('bad port'))).message,
    'could not connect to the MCP server http://127.0.0.1:1: fetch failed (bad port)',
  );
});

test('McpUpstreamError: an HTTP status comes before the cause; a cause already in the message is not repeated; the cause is concealed too', () => {
  const answered = Object.assign(new Error('Streamable HTTP error: Service Unavailable', { cause: new Error('upstream down') }), { code: 503 });
  assert.match(new McpUpstreamError('http://h', answered).message, /Service Unavailable \(HTTP 503\)$/);
  assert.equal(
    new McpUpstreamError('http://h', new Error('socket hang up', { cause: new Error('socket hang up') })).message,
    'could not connect to the MCP server http://h: socket hang up',
  );
  const echoed = new McpUpstreamError('http://h', fetchFailure(new Error('redirected to /s/secret-path/mcp')), undefined, (text) =>
    text.replaceAll('/s/secret-path/mcp', '/…'),
  );
  assert.equal(echoed.message, 'could not connect to the MCP server http://h: fetch failed (redirected to /…)');
  assert.ok(McpUpstreamError.isInstance(echoed) && echoed.code === 'GOVERNOR_MCP_UPSTREAM');
});
