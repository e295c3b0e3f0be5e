import type { ServerResponse } from 'node:http';
import {
  createUIMessageStream,
  createUIMessageStreamResponse,
  pipeUIMessageStreamToResponse,
  type IdGenerator,
  type InferUIMessageChunk,
  type ProviderMetadata,
  type UIMessage,
  type UIMessageStreamOnEndCallback,
} from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, validateOptions, type OptionRule, type OptionRules } from '../errors/validate-options.ts';
import type { ChatStreamEvent } from './chat-response.ts';
import { outputText } from './json-text.ts';

/**
 * Options of `stream().toUIMessageStream()`: the AI SDK's UI message stream
 * options that apply to a ChatClient's stream.
 */
export interface ChatUIMessageStreamOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /**
   * The conversation as the client sent it (`useChat`'s `messages`). With it,
   * an answer that goes on with the last assistant message (after an approval
   * or a client-side tool's result) keeps that message's id, and `onEnd`
   * gets the whole conversation. @default none
   */
  readonly originalMessages?: UI_MESSAGE[];
  /**
   * Makes the id of the answer's message. @default none: the answer gets the
   * last message's id when it goes on with it, else the client makes one, as
   * with `streamText`
   */
  readonly generateMessageId?: IdGenerator;
  /** Called once when the stream ends (finished, failed or cancelled), with the answer as a UI message: where to persist UI messages. */
  readonly onEnd?: UIMessageStreamOnEndCallback<UI_MESSAGE>;
  /**
   * The text the client is shown for an error that ends the stream (a
   * breaker stop, a failed model call), and for a tool's failed result (given
   * the text the model read) unless `redactToolErrors` is `false`.
   * @default `() => 'An error occurred.'` for the stream's error (as the AI
   * SDK: nothing of it reaches the client); a failed result as the model read it
   */
  readonly onError?: (error: unknown) => string;
  /**
   * Show a tool's failed result as `onError` makes of its text, instead of
   * the text the model read (which may quote a connection string or a path).
   * @default true when `onError` is given, as in the AI SDK
   */
  readonly redactToolErrors?: boolean;
  /** Send reasoning to the client. @default true */
  readonly sendReasoning?: boolean;
  /** Send the `start` chunk; `false` when the chunks are merged into a stream that has sent one. @default true */
  readonly sendStart?: boolean;
  /** Send the `finish` chunk; `false` when more is merged into the same message after this stream. @default true */
  readonly sendFinish?: boolean;
}

/** How the response of `toUIMessageStreamResponse()` / `pipeUIMessageStreamToResponse()` is sent, as the AI SDK takes it. */
export type ChatUIMessageResponseInit = Omit<Parameters<typeof createUIMessageStreamResponse>[0], 'stream'>;

const STREAM_RULES: OptionRules<ChatUIMessageStreamOptions> = {
  originalMessages: is.arrayOf(is.object()),
  generateMessageId: is.function(),
  onEnd: is.function(),
  onError: is.function(),
  redactToolErrors: is.boolean(),
  sendReasoning: is.boolean(),
  sendStart: is.boolean(),
  sendFinish: is.boolean(),
};

/** Statuses a `Response` with a body may have: 204, 205 and 304 have none. */
const bodyStatus: OptionRule = (value, path) => {
  is.integer(200, 599)(value, path);
  if (value === 204 || value === 205 || value === 304)
    throw new InvalidOptionError(path, `must be a status that has a body (not 204, 205 or 304), got ${value}`);
};

/** What `Headers` takes: a plain object of strings, an array of pairs, or a `Headers`. */
const headersInit: OptionRule = (value, path) => {
  if (value instanceof Headers) return;
  const entries = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? Object.entries(value) : undefined;
  const pairs = entries?.every((entry) => Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string' && typeof entry[1] === 'string');
  if (pairs !== true)
    throw new InvalidOptionError(path, `must be an object of header strings, an array of [name, value] pairs or a Headers, got ${describeValue(value)}`);
};

const RESPONSE_RULES: OptionRules<ChatUIMessageResponseInit> = {
  status: bodyStatus,
  statusText: is.string(),
  headers: headersInit,
  keepAliveMs: is.timeMs(),
  consumeSseStream: is.function(),
};

/**
 * A ChatClient stream as the UI message stream `useChat` reads, built with
 * the AI SDK's `createUIMessageStream`.
 * @throws InvalidOptionError for an unknown option or a value of the wrong type
 */
export function chatUIMessageStream<UI_MESSAGE extends UIMessage>(
  events: (signal: AbortSignal) => AsyncIterable<ChatStreamEvent>,
  options: ChatUIMessageStreamOptions<UI_MESSAGE> = {},
  owner = 'toUIMessageStream',
): ReadableStream<InferUIMessageChunk<UI_MESSAGE>> {
  validateOptions(owner, options, STREAM_RULES as OptionRules<ChatUIMessageStreamOptions<UI_MESSAGE>>);
  const { originalMessages, generateMessageId, onEnd, onError, redactToolErrors = onError !== undefined, ...send } = options;
  // As streamText's: onError gets what failed the call (what the tool threw), else the text the model read.
  const toolErrorText =
    redactToolErrors && onError !== undefined
      ? (text: string, failure?: { readonly error: unknown }) => onError(failure === undefined ? text : failure.error)
      : (text: string) => text;
  return createUIMessageStream<UI_MESSAGE>({
    execute: ({ writer }) =>
      writer.merge(
        cancellable(events, (read) =>
          uiMessageChunks<UI_MESSAGE>(read, { ...send, toolErrorText, completed: () => writer.setOutcome({ status: 'completed' }) }),
        ),
      ),
    ...(originalMessages === undefined ? {} : { originalMessages }),
    // As streamText's: the answer has an id only when asked for (or when it goes on with the last message).
    // A generated one would make the chat show an empty message for a call that fails before any output.
    generateId: generateMessageId ?? (NO_MESSAGE_ID as IdGenerator),
    ...(onEnd === undefined ? {} : { onEnd }),
    ...(onError === undefined ? {} : { onError }),
  });
}

/** `createUIMessageStream` sets the id it generates on the `start` chunk, unless there is none. */
const NO_MESSAGE_ID: () => string | undefined = () => undefined;

/**
 * The chunks as a stream whose cancelling (the client went away) aborts the
 * call: a generator waiting on the model would only see a cancel once the
 * model sent its next part.
 */
function cancellable<T>(
  events: (signal: AbortSignal) => AsyncIterable<ChatStreamEvent>,
  chunks: (events: AsyncIterable<ChatStreamEvent>) => AsyncGenerator<T>,
): ReadableStream<T> {
  const abort = new AbortController();
  const iterator = chunks(events(abort.signal));
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel(reason) {
      abort.abort(reason);
      // Ends the chain's generators once the aborted read lets them go.
      void iterator.return(undefined).catch(() => undefined);
    },
  });
}

/**
 * Splits `options` into the stream's and the response's.
 * @throws InvalidOptionError for an option of neither, or a value of the wrong type
 */
function splitOptions<UI_MESSAGE extends UIMessage>(
  owner: string,
  options: (ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit) | undefined,
): { stream: ChatUIMessageStreamOptions<UI_MESSAGE>; init: ChatUIMessageResponseInit } {
  validateOptions(owner, options, { ...STREAM_RULES, ...RESPONSE_RULES } as OptionRules<ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit>);
  const { status, statusText, headers, keepAliveMs, consumeSseStream, ...stream } = options ?? {};
  const init = Object.fromEntries(
    Object.entries({ status, statusText, headers, keepAliveMs, consumeSseStream }).filter(([, value]) => value !== undefined),
  ) as ChatUIMessageResponseInit;
  return { stream, init };
}

/** A `Response` streaming the UI message stream (server-sent events), as `streamText`'s `toUIMessageStreamResponse`. */
export function chatUIMessageStreamResponse<UI_MESSAGE extends UIMessage>(
  events: (signal: AbortSignal) => AsyncIterable<ChatStreamEvent>,
  options?: ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit,
): Response {
  const { stream, init } = splitOptions('toUIMessageStreamResponse', options);
  return createUIMessageStreamResponse({ ...init, stream: chatUIMessageStream(events, stream, 'toUIMessageStreamResponse') });
}

/** Writes the UI message stream to a Node.js response, as `streamText`'s `pipeUIMessageStreamToResponse`. */
export function pipeChatUIMessageStream<UI_MESSAGE extends UIMessage>(
  response: ServerResponse,
  events: (signal: AbortSignal) => AsyncIterable<ChatStreamEvent>,
  options?: ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit,
): Promise<void> {
  is.having('a Node.js ServerResponse', 'writeHead', 'write', 'end')(response, 'response');
  const { stream, init } = splitOptions('pipeUIMessageStreamToResponse', options);
  return pipeUIMessageStreamToResponse({ ...init, response, stream: chatUIMessageStream(events, stream, 'pipeUIMessageStreamToResponse') });
}

/**
 * The UI message chunks `streamText` sends for the same rounds. The events do
 * not mark rounds; a round ends with the results of the tools the loop ran
 * (a hosted tool's result comes within its round), so the model's next text,
 * reasoning or tool call starts a step. The steps must be the rounds: the
 * AI SDK's `convertToModelMessages` makes an assistant message and a tool
 * message of each, and a memory advisor recognises the conversation a
 * client sends back only when they are the messages it stored.
 */
async function* uiMessageChunks<UI_MESSAGE extends UIMessage>(
  events: AsyncIterable<ChatStreamEvent>,
  {
    sendReasoning = true,
    sendStart = true,
    sendFinish = true,
    toolErrorText,
    completed,
  }: Pick<ChatUIMessageStreamOptions, 'sendReasoning' | 'sendStart' | 'sendFinish'> & {
    /** A failed result's text for the client, from the text the model read and what failed the call, when known. */
    readonly toolErrorText: (text: string, failure?: { readonly error: unknown }) => string;
    /** Called once the call has finished. */
    readonly completed: () => void;
  },
): AsyncGenerator<InferUIMessageChunk<UI_MESSAGE>> {
  let blocks = 0;
  let text: string | undefined;
  let reasoning: string | undefined;
  let inStep = false;
  let roundOver = false;

  function* endBlocks(): Generator<InferUIMessageChunk<UI_MESSAGE>> {
    if (text !== undefined) yield { type: 'text-end', id: text };
    if (reasoning !== undefined) yield { type: 'reasoning-end', id: reasoning };
    text = undefined;
    reasoning = undefined;
  }
  function* endStep(): Generator<InferUIMessageChunk<UI_MESSAGE>> {
    yield* endBlocks();
    if (inStep) yield { type: 'finish-step' };
    inStep = false;
  }
  /** Before what the model says: a step of its own after the results of a round. */
  function* modelOutput(): Generator<InferUIMessageChunk<UI_MESSAGE>> {
    if (inStep && !roundOver) return;
    yield* endStep();
    yield { type: 'start-step' };
    inStep = true;
    roundOver = false;
  }

  if (sendStart) yield { type: 'start' };
  try {
    for await (const event of events) {
      switch (event.type) {
        case 'text-delta':
          // A return-direct answer is the output of its tool's call, where the conversation keeps it.
          if (event.returnDirect === true) break;
          yield* modelOutput();
          if (reasoning !== undefined) yield* endBlocks();
          if (text === undefined) {
            text = `t${blocks++}`;
            yield { type: 'text-start', id: text };
          }
          yield { type: 'text-delta', id: text, delta: event.text, ...metadata(event.providerMetadata) };
          break;
        case 'reasoning-delta':
          yield* modelOutput();
          if (!sendReasoning) break;
          if (text !== undefined) yield* endBlocks();
          if (reasoning === undefined) {
            reasoning = `r${blocks++}`;
            yield { type: 'reasoning-start', id: reasoning };
          }
          yield { type: 'reasoning-delta', id: reasoning, delta: event.text, ...metadata(event.providerMetadata) };
          break;
        case 'tool-call': {
          yield* modelOutput();
          yield* endBlocks();
          const { toolCallId, toolName, input } = event.toolCall;
          yield {
            type: 'tool-input-available',
            toolCallId,
            toolName,
            input,
            ...hosted(event.providerExecuted),
            ...(event.dynamic === true ? { dynamic: true } : {}),
          };
          break;
        }
        case 'tool-result':
          yield* endBlocks();
          if (event.providerExecuted !== true) roundOver = true;
          if (event.denied === true) yield { type: 'tool-output-denied', toolCallId: event.toolCallId };
          else if (event.isError)
            yield {
              type: 'tool-output-error',
              toolCallId: event.toolCallId,
              errorText:
                event.providerExecuted === true
                  ? outputText(event.output)
                  : toolErrorText(outputText(event.output), 'error' in event ? { error: event.error } : undefined),
              ...hosted(event.providerExecuted),
            };
          else
            yield {
              type: 'tool-output-available',
              toolCallId: event.toolCallId,
              output: event.output ?? null,
              ...hosted(event.providerExecuted),
              ...(event.preliminary === true ? { preliminary: true } : {}),
            };
          break;
        case 'tool-approval-request':
          yield* endBlocks();
          yield { type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.toolCall.toolCallId };
          break;
        case 'finish':
          completed();
          yield* endStep();
          if (sendFinish) yield { type: 'finish', finishReason: event.response.response.finishReason };
          break;
      }
    }
  } catch (error) {
    // What streamed stays whole on the client; the error chunk follows.
    yield* endStep();
    throw error;
  }
}

/** The metadata a client sends back with the block (a thinking block's signature), as `streamText` streams it. */
function metadata(providerMetadata: ProviderMetadata | undefined): { providerMetadata?: ProviderMetadata } {
  return providerMetadata === undefined ? {} : { providerMetadata };
}

function hosted(providerExecuted: boolean | undefined): { providerExecuted?: true } {
  return providerExecuted === true ? { providerExecuted: true } : {};
}
