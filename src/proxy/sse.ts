import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { SseEvent } from './wire-api.ts';

/** Server-sent events of a response body. */
export function parseSse(body: ReadableStream<Uint8Array>): ReadableStream<SseEvent> {
  return body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream())
    .pipeThrough(
      new TransformStream({
        transform(message, controller) {
          controller.enqueue(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data });
        },
      }),
    );
}

/** One event on the wire. */
export function formatSse(event: SseEvent): string {
  const data = event.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}${data}\n`;
}
