import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

import { waitUnlessClosed } from './http-exchange.ts';

test('waitUnlessClosed stops waiting when the client disconnects', async () => {
  const { promise: waited, resolve } = Promise.withResolvers<boolean>();
  const { promise: holding, resolve: hold } = Promise.withResolvers<void>();
  const server = createServer((_request, response) => {
    hold();
    void waitUnlessClosed(response, 60_000, new AbortController().signal).then(resolve);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  try {
    const { port } = server.address() as AddressInfo;
    const client = new AbortController();
    const request = fetch(`http://127.0.0.1:${port}/`, { signal: client.signal });
    // Aborting only once the server holds the request proves the wait itself is cut short.
    await holding;
    client.abort();

    await assert.rejects(request);
    assert.equal(await waited, false);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }
});

test('waitUnlessClosed stops waiting on shutdown', async () => {
  const shutdown = new AbortController();
  const { promise: waited, resolve } = Promise.withResolvers<boolean>();
  const { promise: holding, resolve: hold } = Promise.withResolvers<void>();
  const server = createServer((_request, response) => {
    hold();
    void waitUnlessClosed(response, 60_000, shutdown.signal).then(resolve);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  try {
    const { port } = server.address() as AddressInfo;
    const request = fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
    await holding;
    shutdown.abort();

    assert.equal(await waited, false);
    server.closeAllConnections();
    await request;
  } finally {
    await new Promise<void>((done) => server.close(() => done()));
  }
});
