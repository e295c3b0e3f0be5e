// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> (its generics are invariant); these mirror them so any result fits.
import { Readable } from 'node:stream';
import type { Agent, RunStreamEvent, StreamedRunResult } from '@openai/agents';

/**
 * A streamed result that rejects with the breaker's stop when the run
 * ends without a model turn to throw it from (`toolUseBehavior:
 * 'stop_on_first_tool'`, `stopAtToolNames`: the tool's output is the final
 * output, so the SDK completes the stream normally): iterating it,
 * `toStream()`, `toTextStream()` and `completed` reject with the stop after
 * the events the run streamed, and `error` is the stop. Everything else is
 * the SDK's result.
 *
 * `stopAfter` resolves once the run's observations are in, and throws the
 * run's stop if it has one.
 */
export function governedStream<T extends StreamedRunResult<any, Agent<any, any>>>(
  result: T,
  stopAfter: () => Promise<void>,
  stopped: () => Error | undefined,
): T {
  let completed: Promise<void> | undefined;
  const stream = (): ReadableStream<RunStreamEvent> =>
    // The SDK types its stream with a shim of its own; it is the platform's ReadableStream.
    (result.toStream() as unknown as ReadableStream<RunStreamEvent>).pipeThrough(
      new TransformStream<RunStreamEvent, RunStreamEvent>({
        flush: stopAfter,
      }),
    );
  const textStream = (): ReadableStream<string> =>
    stream().pipeThrough(
      new TransformStream<RunStreamEvent, string>({
        transform(event, controller) {
          if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') controller.enqueue(event.data.delta);
        },
      }),
    );
  const members: Partial<Record<PropertyKey, unknown>> = {
    toStream: stream,
    toTextStream: (options?: { compatibleWithNodeStreams?: boolean }) =>
      options?.compatibleWithNodeStreams === true ? Readable.fromWeb(textStream() as Parameters<typeof Readable.fromWeb>[0]) : textStream(),
    [Symbol.asyncIterator]: () => stream()[Symbol.asyncIterator](),
  };
  // Methods are bound to the result: it keeps its stream in private fields a proxy cannot reach.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(result, {
    get(target, key) {
      if (key === 'completed') return (completed ??= target.completed.then(stopAfter));
      if (key === 'error') return target.error ?? stopped() ?? null;
      if (key in members) return members[key];
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (!bound.has(value)) bound.set(value, value.bind(target));
      return bound.get(value);
    },
  });
}
