import assert from 'node:assert/strict';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { McpRequestError } from './mcp-request-error.ts';
import { startMcpProxy } from './mcp-proxy.ts';
import { LOOPING, linesOf, logShows, proxiedWithLog, textOf } from './test-support/governor-mcp.ts';

const MiB = 1024 * 1024;
const ANSWER_WITHIN_MS = 10_000;

describe('governor mcp -- <a stdio server>: a message over 10 MiB, the limit of the MCP SDK for stdio', { timeout: 60_000 }, () => {
  test("a client's request over the limit is answered with an error naming it, and logged; the session goes on", async () => {
    const { client, log } = await proxiedWithLog(['--', process.execPath, LOOPING]);
    try {
      const huge = client.callTool({ name: 'search', arguments: { q: 'x'.repeat(11 * MiB) } }, undefined, { timeout: ANSWER_WITHIN_MS });
      const refused = /tools\/call could not be served: the MCP client sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
      await assert.rejects(huge, (error: { code?: unknown; message?: string }) => {
        assert.equal(error.code, -32603, error.message);
        assert.match(error.message ?? '', refused);
        return true;
      });
      assert.equal(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })), '3');
      await logShows(log, /could not be served/);
      assert.equal(linesOf(log(), /could not be served/).filter((line) => refused.test(line) && line.startsWith('governor mcp: ')).length, 1, log());
    } finally {
      await client.close();
    }
  });

  test("a server's answer over the limit: the call is answered with an error naming it by its program, and logged; the server is kept and a large answer under it passes", async () => {
    // The server's arguments may hold a secret in a form no redaction rule knows: the client, so the model, is told the program alone.
    const { client, log } = await proxiedWithLog(['--', process.execPath, LOOPING, '-p', 'hunter2SuperSecret']);
    try {
      const large = (bytes: number) => client.callTool({ name: 'large', arguments: { bytes } }, undefined, { timeout: ANSWER_WITHIN_MS });
      const program = path.basename(process.execPath);
      const refused = new RegExp(
        `tools/call "large" could not be served: the MCP server "${program}" sent a message of \\d+ bytes, over the limit of 10 MiB for one MCP message$`,
      );
      await assert.rejects(large(11 * MiB), (error: { code?: unknown; message?: string }) => {
        assert.equal(error.code, -32603, error.message);
        assert.match(error.message ?? '', refused);
        assert.doesNotMatch(error.message ?? '', /hunter2/);
        return true;
      });
      assert.equal(textOf(await large(5 * MiB)).length, 5 * MiB);
      assert.equal(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })), '3');
      await logShows(log, /could not be served/);
      assert.equal(linesOf(log(), /could not be served/).filter((line) => refused.test(line)).length, 1, log());
      assert.doesNotMatch(log(), /closed the connection/);
      assert.doesNotMatch(log(), /hunter2/);
    } finally {
      await client.close();
    }
  });
});

test('startMcpProxy: an oversize request is answered by its id wherever it stands; what has no id is told to onError; the session goes on', {
  timeout: 60_000,
}, async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const told: Error[] = [];
  const proxy = await startMcpProxy({
    upstream: { command: process.execPath, args: [LOOPING] },
    breaker: new AgentBreaker(),
    downstream: { stdin, stdout },
    onError: (error) => told.push(error),
  });
  type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };
  const answers: Answer[] = [];
  const last = Promise.withResolvers<void>();
  createInterface({ input: stdout }).on('line', (line) => {
    const answer = JSON.parse(line) as Answer;
    answers.push(answer);
    if (answer.id === 'last') last.resolve();
  });
  const padding = 'x'.repeat(11 * MiB);
  const add = { name: 'add', arguments: { a: 1, b: 2 } };
  const lines = [
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    // The id first, as most clients write it; a string id.
    { jsonrpc: '2.0', id: 'first', method: 'tools/call', params: { ...add, padding } },
    // The id last, as the MCP SDK writes it, after an "id" that is not the message's own.
    { jsonrpc: '2.0', method: 'tools/call', params: { id: 99, nested: { id: 98 }, padding }, id: 7 },
    // A notification has no id to answer.
    { jsonrpc: '2.0', method: 'notifications/roots/list_changed', params: { padding } },
  ].map((message) => JSON.stringify(message));
  // Not JSON at all.
  lines.push(`"${padding}" and more`);
  lines.push(JSON.stringify({ jsonrpc: '2.0', id: 'last', method: 'tools/call', params: add }));
  stdin.write(`${lines.join('\n')}\n`);
  try {
    await Promise.race([last.promise, proxy.closed.then((by) => assert.fail(`the proxy ended (${by}) before it answered the last call`))]);
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    const refused = /^tools\/call could not be served: the MCP client sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/;
    for (const id of ['first', 7]) {
      assert.equal(byId.get(id)?.error?.code, -32603, JSON.stringify(byId.get(id)));
      assert.match(byId.get(id)?.error?.message ?? '', refused);
    }
    assert.deepEqual(byId.get('last')?.result, { content: [{ type: 'text', text: '3' }] });
    // Answered once each, and nothing else (no answer to what has no id).
    assert.deepEqual(answers.map((answer) => String(answer.id)).sort(), ['0', '7', 'first', 'last']);
    assert.equal(told.filter((error) => McpRequestError.isInstance(error) && refused.test(error.message)).length, 2);
    const unanswered = told.filter((error) => !McpRequestError.isInstance(error));
    assert.deepEqual(
      unanswered.map((error) => [error.name, (error as { code?: unknown }).code]),
      [
        ['McpMessageTooLargeError', 'GOVERNOR_MCP_MESSAGE_TOO_LARGE'],
        ['McpMessageTooLargeError', 'GOVERNOR_MCP_MESSAGE_TOO_LARGE'],
      ],
    );
    for (const error of unanswered) assert.match(error.message, /^the MCP client sent a message of \d+ bytes, over the limit of 10 MiB for one MCP message$/);
  } finally {
    await proxy.close();
  }
});
