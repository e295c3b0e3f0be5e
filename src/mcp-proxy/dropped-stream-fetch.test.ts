import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { linesOf, logShows, proxiedWithLog, textOf } from './test-support/governor-mcp.ts';
import { startHttpLoopingServer, startStatefulHttpLoopingServer } from './test-support/http-looping-server.ts';

/** How long a test client waits for an answer: a call that hangs fails the test well before its own timeout. */
const ANSWER_WITHIN_MS = 5_000;

describe('governor mcp --url: the server drops the response of a call it is running', { timeout: 60_000 }, () => {
  for (const how of ['destroy', 'end'] as const) {
    const dropped = how === 'destroy' ? 'cuts the connection' : 'ends the response stream without the answer';
    test(`it ${dropped}: the call is answered at once saying the connection was lost, logged once; the next call is served`, async () => {
      const upstream = await startHttpLoopingServer();
      const { client, log } = await proxiedWithLog(['--url', upstream.url]);
      try {
        const running = Promise.withResolvers<void>();
        const call = client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, {
          onprogress: () => running.resolve(),
          timeout: ANSWER_WITHIN_MS,
        });
        // The first progress notification: the call runs upstream, its response stream is open.
        await running.promise;
        assert.ok((await upstream.dropResponses(how)) >= 1);
        const lost = /tools\/call "wait" could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ closed the connection before it answered$/;
        await assert.rejects(call, (error: { code?: unknown; message?: string }) => {
          assert.equal(error.code, -32603, error.message);
          assert.match(error.message ?? '', lost);
          return true;
        });
        const add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: ANSWER_WITHIN_MS });
        assert.equal(textOf(add), '3');
        await logShows(log, /could not be served/);
        assert.deepEqual(
          linesOf(log(), /could not be served/).map((line) => lost.test(line) && line.startsWith('governor mcp: tools/call "wait"')),
          [true],
          log(),
        );
      } finally {
        await client.close();
        await upstream.close();
      }
    });
  }

  test('a server that is gone after it dropped the call: the next call is answered at once saying it did not answer', async () => {
    const upstream = await startHttpLoopingServer();
    const { client } = await proxiedWithLog(['--url', upstream.url]);
    try {
      const running = Promise.withResolvers<void>();
      const call = client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, { onprogress: () => running.resolve(), timeout: ANSWER_WITHIN_MS });
      await running.promise;
      await upstream.dropResponses('destroy');
      await upstream.close();
      await assert.rejects(call, /closed the connection before it answered$/);
      await assert.rejects(
        client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }, undefined, { timeout: ANSWER_WITHIN_MS }),
        /tools\/call "add" could not be served: the MCP server .* did not answer \(ECONNREFUSED\)$/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('governor mcp --url: a server whose response streams can be resumed', { timeout: 60_000 }, () => {
  test('the connection is cut while the server runs on: the call is resumed as the SDK does, and answered', async () => {
    const upstream = await startStatefulHttpLoopingServer({ resumable: true });
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    try {
      const running = Promise.withResolvers<void>();
      const call = client.callTool({ name: 'wait', arguments: { ms: 300 } }, undefined, { onprogress: () => running.resolve(), timeout: ANSWER_WITHIN_MS });
      await running.promise;
      assert.ok(upstream.cutConnections() >= 1);
      assert.equal(textOf(await call), 'waited 300 ms');
      assert.doesNotMatch(log(), /could not be served/);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  test('the server is gone, so the stream cannot be resumed: the call is answered at once saying the connection was lost', async () => {
    const upstream = await startStatefulHttpLoopingServer({ resumable: true });
    const { client, log } = await proxiedWithLog(['--url', upstream.url]);
    try {
      const running = Promise.withResolvers<void>();
      const call = client.callTool({ name: 'wait', arguments: { ms: 30_000 } }, undefined, { onprogress: () => running.resolve(), timeout: ANSWER_WITHIN_MS });
      await running.promise;
      await upstream.close();
      const lost = /tools\/call "wait" could not be served: the MCP server http:\/\/127\.0\.0\.1:\d+ closed the connection before it answered$/;
      await assert.rejects(call, (error: { code?: unknown; message?: string }) => {
        assert.equal(error.code, -32603, error.message);
        assert.match(error.message ?? '', lost);
        return true;
      });
      await logShows(log, /could not be served/);
      assert.equal(linesOf(log(), /could not be served/).filter((line) => lost.test(line)).length, 1, log());
    } finally {
      await client.close();
    }
  });
});
