import { createParser } from 'eventsource-parser';
import type { SseEvent } from './wire-api.ts';

/**
 * A comment line (`: keep-alive`): servers send them to keep a quiet stream's
 * connection from being closed as idle, by the client or a proxy between.
 */
interface SseComment {
  readonly comment: string;
}

/** The reconnection delay a server asks for (`retry: 3000`). */
interface SseRetry {
  readonly retry: number;
}

/** What a stream of server-sent events carries: events, and the lines that only keep it alive or tune it. */
export type SseItem = SseEvent | SseComment | SseRetry;

/** Server-sent events of a response body, with its comments and retry fields in their places. */
export function parseSse(body: ReadableStream<Uint8Array>): ReadableStream<SseItem> {
  let parser: ReturnType<typeof createParser>;
  return body.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>).pipeThrough(
    new TransformStream<string, SseItem>({
      start(controller) {
        parser = createParser({
          onEvent: (message) => controller.enqueue(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data }),
          onComment: (comment) => controller.enqueue({ comment }),
          onRetry: (retry) => controller.enqueue({ retry }),
        });
      },
      transform(chunk) {
        parser.feed(chunk);
      },
    }),
  );
}

/** Whether an item is an event (rather than a comment or a retry field). */
export function isSseEvent(item: SseItem): item is SseEvent {
  return 'data' in item;
}

/** One item on the wire. */
export function formatSse(item: SseItem): string {
  if ('comment' in item) return `: ${item.comment}\n\n`;
  if ('retry' in item) return `retry: ${item.retry}\n\n`;
  const data = item.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return `${item.event === undefined ? '' : `event: ${item.event}\n`}${data}\n`;
}
