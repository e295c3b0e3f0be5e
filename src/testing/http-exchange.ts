import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

import { SSE_DONE, sseEvent } from './openai-wire-format.ts';
import { decodeContent } from '../runtime/content-encoding.ts';

/** Reads the whole request body as UTF-8 text, decoded as its Content-Encoding says. */
export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  // Compressed as providers accept it (gzip, br, zstd): read as they read it.
  const decoded = await decodeContent(Buffer.concat(chunks), request.headers['content-encoding']);
  if (!decoded.ok) throw new Error(decoded.message);
  return Buffer.from(decoded.bytes).toString('utf8');
}

/** Writes a JSON response unless the client is already gone. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed || response.headersSent) return;
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  response.end(payload);
}

/** Writes each item as a server-sent event, then `[DONE]`, stopping if the client disconnects. */
export function sendEventStream(response: ServerResponse, events: readonly unknown[]): void {
  if (!startEventStream(response)) return;
  for (const event of events) {
    if (response.destroyed) return;
    response.write(sseEvent(event));
  }
  response.end(SSE_DONE);
}

/**
 * Waits `ms` milliseconds. Resolves `false` early if the client closes the
 * connection or `shutdown` fires, so an aborted request never gets an answer
 * and never holds the server open.
 */
export async function waitUnlessClosed(response: ServerResponse, ms: number, shutdown: AbortSignal): Promise<boolean> {
  if (shutdown.aborted) return false;
  const controller = new AbortController();
  const onClose = (): void => controller.abort();
  response.once('close', onClose);
  shutdown.addEventListener('abort', onClose, { once: true });
  try {
    await sleep(ms, undefined, { signal: controller.signal });
    return !response.destroyed;
  } catch {
    return false;
  } finally {
    response.off('close', onClose);
    shutdown.removeEventListener('abort', onClose);
  }
}

/**
 * Sends the headers of a successful answer and then nothing until the client
 * closes the connection or `shutdown` fires: a stalled model.
 */
export function sendHeadersThenStall(response: ServerResponse, stream: boolean, shutdown: AbortSignal): void {
  if (response.destroyed || response.headersSent) return;
  response.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
  response.flushHeaders();
  const end = (): void => {
    response.destroy();
  };
  if (shutdown.aborted) {
    end();
    return;
  }
  shutdown.addEventListener('abort', end, { once: true });
  response.once('close', () => shutdown.removeEventListener('abort', end));
}

/** Writes each item as a named server-sent event (`event:` and `data:` lines), the Anthropic way: no `[DONE]`. */
export function sendNamedEventStream(response: ServerResponse, events: readonly { event: string; data: unknown }[]): void {
  if (!startEventStream(response)) return;
  for (const item of events) {
    if (response.destroyed) return;
    response.write(`event: ${item.event}\ndata: ${JSON.stringify(item.data)}\n\n`);
  }
  response.end();
}

/** Sends the headers of an event stream; false when the client is gone or an answer was already started. */
function startEventStream(response: ServerResponse): boolean {
  if (response.destroyed || response.headersSent) return false;
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  return true;
}
