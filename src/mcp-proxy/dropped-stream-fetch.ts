import { createParser } from 'eventsource-parser';

/** A fetch as the MCP SDK's Streamable HTTP client transport takes it (its `fetch` option). */
export type TransportFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** The ids of the requests in a POSTed JSON-RPC message (or batch): those whose answers its response stream carries. */
function requestIds(body: unknown): (string | number)[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: (string | number)[] = [];
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** The id that an SSE event's data answers, if it is an answer (a result or an error). */
function answeredId(data: string): string | number | undefined {
  try {
    const message = JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown } | null;
    const id = message?.id;
    return (typeof id === 'string' || typeof id === 'number') && (message?.result !== undefined || message?.error !== undefined) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Requests whose response stream broke off where the SDK resumes it, by the id of the last event it brought. */
type Resuming = Map<string, ReadonlySet<string | number>>;

/**
 * `body`, the SSE stream that answers requests `ids`, with an answer from
 * `answer` added at its end for each of them it ended without (or broke
 * off before) answering. The stream is read as the SDK reads it, so an
 * answer that went by is known to have gone by. Left as it is: a stream
 * that can be resumed (an event of it had an id: the SDK asks for the rest
 * with a GET from there, and the server replays what was lost), whose
 * requests are put in `resuming` instead; and one ended by `signal` (the
 * transport closing, which fails what waits on it itself).
 */
function answeringWhenDropped(
  body: ReadableStream<Uint8Array>,
  ids: Iterable<string | number>,
  answer: (id: string | number) => object,
  resuming: Resuming,
  signal: AbortSignal | null | undefined,
): ReadableStream<Uint8Array> {
  const waiting = new Set(ids);
  let lastEventId: string | undefined;
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      // The SDK resumes from the last event with an id, as it reads it.
      if (event.id) lastEventId = event.id;
      // The SDK reads these events alone as messages.
      if (event.event !== undefined && event.event !== 'message') return;
      const id = answeredId(event.data);
      if (id !== undefined) waiting.delete(id);
    },
  });
  const reader = body.getReader();
  /** Ends the stream; with `failure`, it broke off. */
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>, failure?: { readonly error: unknown }): void => {
    // A blank line ends an event cut off midway: a whole answer that lacked only it is read as the SDK will read it.
    const end = '\n\n';
    parser.feed(`${decoder.decode()}${end}`);
    if (lastEventId !== undefined && waiting.size > 0) resuming.set(lastEventId, waiting);
    if (lastEventId !== undefined || waiting.size === 0 || signal?.aborted === true) {
      if (failure === undefined) controller.close();
      else controller.error(failure.error);
      return;
    }
    const events = [...waiting].map((id) => `event: message\ndata: ${JSON.stringify(answer(id))}\n\n`);
    controller.enqueue(new TextEncoder().encode(`${end}${events.join('')}`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const read = await reader.read().catch((error: unknown) => ({ failure: { error } }));
      if ('failure' in read) {
        finish(controller, read.failure);
        return;
      }
      if (read.done) {
        finish(controller);
        return;
      }
      parser.feed(decoder.decode(read.value, { stream: true }));
      controller.enqueue(read.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * A fetch for the MCP SDK's Streamable HTTP client transport with which a
 * request never waits for an answer its response stream can no longer
 * bring: the SDK reads the answers to a POSTed request from the SSE stream
 * of that POST's response, and when the server ends that stream, or the
 * connection breaks, before the answer, the SDK's client is not told (it
 * reconnects only to a stream that can be resumed) and the request waits
 * forever. Here each such request reads `answer(id)` as its answer, at the
 * end of the stream, after all the stream did bring. A stream the SDK
 * resumes is left to it; when the server cannot be asked for the rest (the
 * GET fails), its requests are answered at once, through `deliver` (the
 * transport's `onmessage`), where the SDK would retry and then give up
 * without a word.
 */
export function fetchAnsweringDroppedStreams<M extends object>(answer: (id: string | number) => M, deliver: (message: M) => void): TransportFetch {
  const resuming: Resuming = new Map();
  return async (url, init) => {
    const resumedFrom = (init?.method ?? 'GET').toUpperCase() === 'GET' ? new Headers(init?.headers).get('last-event-id') : null;
    const resumed = resumedFrom === null ? undefined : resuming.get(resumedFrom);
    if (resumedFrom !== null) resuming.delete(resumedFrom);
    // Unless the transport is closing: that fails what waits on it itself.
    const unresumed = () => {
      if (init?.signal?.aborted !== true) for (const id of resumed ?? []) deliver(answer(id));
    };
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      unresumed();
      throw error;
    }
    const type = (response.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (!response.ok || response.body === null || type !== 'text/event-stream') {
      unresumed();
      return response;
    }
    const ids = [...(resumed ?? requestIds(init?.body))];
    if (ids.length === 0) return response;
    return new Response(answeringWhenDropped(response.body, ids, answer, resuming, init?.signal), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
