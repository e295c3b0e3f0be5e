// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> (its generics are invariant); these mirror them so any result fits.
import { Readable } from 'node:stream';
import type { Agent, RunStreamEvent, StreamedRunResult } from '@openai/agents';

/**
 * A streamed result that rejects with the breaker's stop whenever the run
 * had one: when it ends without a model turn to throw it from
 * (`toolUseBehavior: 'stop_on_first_tool'`, `stopAtToolNames`: the tool's
 * output is the final output, so the SDK completes the stream normally), and
 * when it ends with an error of its own after the stop (its turns running
 * out on the turn the stop was decided on). Iterating it, `toStream()`,
 * `toTextStream()` and `completed` reject with the stop after the events the
 * run streamed, and `error` is the stop. Everything else is the SDK's result.
 *
 * `stopAfter` resolves once the run's observations are in, and throws the
 * run's stop if it has one; `stopOr` resolves, once they are in, to what a
 * run that failed with `error` rejects with: its stop, else `error`.
 */
export function governedStream<T extends StreamedRunResult<any, Agent<any, any>>>(
  result: T,
  stopAfter: () => Promise<void>,
  stopOr: (error: unknown) => Promise<unknown>,
  stopped: () => Error | undefined,
): T {
  let completed: Promise<void> | undefined;
  const stream = (): ReadableStream<RunStreamEvent> => {
    // The SDK types its stream with a shim of its own; it is the platform's ReadableStream.
    const events = (result.toStream() as unknown as ReadableStream<RunStreamEvent>).getReader();
    return new ReadableStream<RunStreamEvent>({
      async pull(controller) {
        try {
          const next = await events.read();
          if (!next.done) return controller.enqueue(next.value);
          await stopAfter();
          controller.close();
        } catch (error) {
          controller.error(await stopOr(error));
        }
      },
      cancel: (reason) => events.cancel(reason),
    });
  };
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
      if (key === 'completed') {
        if (completed === undefined) {
          completed = target.completed.then(stopAfter, async (error: unknown) => {
            throw await stopOr(error);
          });
          // As the SDK's own: a caller who reads the run's end from the stream need not await this too.
          completed.catch(() => undefined);
        }
        return completed;
      }
      if (key === 'error') return stopped() ?? target.error ?? null;
      if (key in members) return members[key];
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (!bound.has(value)) bound.set(value, value.bind(target));
      return bound.get(value);
    },
  });
}
