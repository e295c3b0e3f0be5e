import { randomUUID } from 'node:crypto';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { FlexibleSchema } from '@ai-sdk/provider-utils';
import type { ServerResponse } from 'node:http';
import type { InferUIMessageChunk, ModelMessage, UIMessage, UserContent } from 'ai';
import type { z } from 'zod';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { resolveModel, type SupportedLanguageModel } from '../model/resolve-model.ts';
import type { Advisor } from './advisor.ts';
import { checkAdvisorPlacement } from './advisor-placement.ts';
import { validateAdvisors, validateModelOptions } from './model-options.ts';
import { describeValue, is, type OptionRule } from '../errors/validate-options.ts';
import { DefaultAdvisorChain, DuplicateAdvisorError, sortAdvisors } from './advisor-chain.ts';
import type { AdvisorContext } from './advisor-context.ts';
import type { ChatClientRequest, GovernedToolSet, ModelOptions } from './chat-client-request.ts';
import type { ChatClientResponse, ChatResponse, ChatStreamEvent } from './chat-response.ts';
import {
  EntityParseError,
  EntityPendingError,
  isPending,
  jsonInstruction,
  OUTPUT_SCHEMA,
  parseEntity,
  toOutputSchema,
  validatedAnswer,
  type OutputSchema,
} from './entity.ts';
import { ModelCallTerminal } from './model-call.ts';
import { CALL_SESSION_ID, CONVERSATION_ID, DEFAULT_MESSAGES, sessionIdOf } from './advisor-context.ts';
import { CONTINUATION_TURN, OBSERVATION_SINKS, reportObservation, type ObservationSink } from './observation.ts';
import { traceClientCall, traceClientStream } from './client-span.ts';
import {
  chatUIMessageStream,
  chatUIMessageStreamResponse,
  pipeChatUIMessageStream,
  type ChatUIMessageResponseInit,
  type ChatUIMessageStreamOptions,
} from './ui-message-stream.ts';
import { TELEMETRY, validateTelemetryOptions, type TelemetryOptions } from '../telemetry/telemetry-options.ts';

/** Collects advisors and advisor params for one request: `.advisors(a => a.param(KEY, value))`. */
export class AdvisorSpec {
  readonly #advisors: Advisor[] = [];
  readonly #params = new Map<string, unknown>();

  /** Sets an advisor param (lands in the request's `context`). */
  param(key: string, value: unknown): this {
    this.#params.set(key, value);
    return this;
  }

  /**
   * Sets several advisor params.
   * @throws InvalidOptionError when `values` is not an object
   */
  params(values: Readonly<Record<string, unknown>>): this {
    is.object()(values, 'params');
    for (const [key, value] of Object.entries(values)) this.#params.set(key, value);
    return this;
  }

  /**
   * Adds advisors for this request.
   * @throws InvalidOptionError naming an item that is not an advisor
   */
  advisors(...advisors: Advisor[]): this {
    validateAdvisors(advisors, 'advisors');
    this.#advisors.push(...advisors);
    return this;
  }

  /** @internal */
  get collected(): { advisors: readonly Advisor[]; params: ReadonlyMap<string, unknown> } {
    return { advisors: this.#advisors, params: this.#params };
  }
}

interface ClientDefaults {
  readonly system: string | undefined;
  readonly messages: readonly ModelMessage[];
  readonly tools: GovernedToolSet;
  readonly advisors: readonly Advisor[];
  readonly options: ModelOptions;
  readonly params: ReadonlyMap<string, unknown>;
}

/** Thrown when a request is built wrongly (e.g. no user message and no messages). */
export class InvalidRequestError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_REQUEST';
  constructor(message: string) {
    super('GOVERNOR_INVALID_REQUEST', message);
  }
}

/** Builds a {@link ChatClient}; every setting is a default that a request can override. */
export class ChatClientBuilder {
  readonly #model: LanguageModelV4;
  #system: string | undefined;
  #messages: ModelMessage[] = [];
  #tools: Record<string, GovernedToolSet[string]> = {};
  #advisors: Advisor[] = [];
  #options: ModelOptions = {};
  #params = new Map<string, unknown>();

  /** @internal use {@link ChatClient.builder} */
  constructor(model: LanguageModelV4) {
    this.#model = model;
  }

  /** Default system instructions. */
  defaultSystem(system: string): this {
    is.string()(system, 'defaultSystem');
    this.#system = system;
    return this;
  }

  /**
   * Messages placed before every request's own messages: a fixed preamble
   * (few-shot examples, say). A chat memory advisor puts the conversation it
   * holds after them, so they stay first, as the system prompt does.
   * @throws InvalidOptionError naming a message that is not a message object with a role
   */
  defaultMessages(...messages: ModelMessage[]): this {
    is.arrayOf(isMessage)(messages, 'defaultMessages');
    this.#messages.push(...messages);
    return this;
  }

  /** Tools every request offers the model. */
  defaultTools(tools: GovernedToolSet): this {
    is.recordOf(is.object())(tools, 'defaultTools');
    Object.assign(this.#tools, tools);
    return this;
  }

  /** Advisors of every request; they run sorted by `order`, ties in registration order. */
  defaultAdvisors(...advisors: Advisor[]): this {
    validateAdvisors(advisors, 'defaultAdvisors');
    this.#advisors.push(...advisors);
    return this;
  }

  /** Default model settings (temperature, maxOutputTokens, …). */
  /** @throws InvalidOptionError naming a bad or unknown setting */
  defaultOptions(options: ModelOptions): this {
    validateModelOptions(options);
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /**
   * Advisor params set on every request.
   * @throws InvalidOptionError when `params` is not an object
   */
  defaultAdvisorParams(params: Readonly<Record<string, unknown>>): this {
    is.object()(params, 'defaultAdvisorParams');
    for (const [key, value] of Object.entries(params)) this.#params.set(key, value);
    return this;
  }

  /**
   * OpenTelemetry settings of every request (a request can override them
   * with the `TELEMETRY` advisor param): whether to emit spans and metrics,
   * whether to record prompt and tool content, prices for the cost metric.
   * @throws InvalidOptionError naming the bad option (`telemetry.maxContentLength`, …)
   */
  telemetry(options: TelemetryOptions): this {
    this.#params.set(TELEMETRY, { ...validateTelemetryOptions(options) });
    return this;
  }

  /**
   * @throws DuplicateAdvisorError when one advisor instance was added twice
   * @throws AdvisorPlacementError when a chat memory advisor is ordered inside the tool loop
   */
  build(): ChatClient {
    checkChain(sortAdvisors(this.#advisors));
    return new ChatClient(this.#model, {
      system: this.#system,
      messages: [...this.#messages],
      tools: { ...this.#tools },
      advisors: [...this.#advisors],
      options: { ...this.#options },
      params: new Map(this.#params),
    });
  }
}

/**
 * A fluent client over an AI SDK language model with an ordered advisor chain.
 *
 * ```ts
 * const client = ChatClient.builder(openai('gpt-4o')).defaultAdvisors(new ToolCallAdvisor()).build();
 * const text = await client.prompt().user('Hello').call().content();
 * ```
 */
export class ChatClient {
  readonly #model: LanguageModelV4;
  readonly #defaults: ClientDefaults;

  /** Starts a builder. The model may be any AI SDK language model of spec V2, V3 or V4. */
  static builder(model: SupportedLanguageModel): ChatClientBuilder {
    return new ChatClientBuilder(resolveModel(model));
  }

  /** A client with no defaults. */
  static create(model: SupportedLanguageModel): ChatClient {
    return ChatClient.builder(model).build();
  }

  /** @internal use {@link ChatClient.builder} */
  constructor(model: LanguageModelV4, defaults: ClientDefaults) {
    this.#model = model;
    this.#defaults = defaults;
  }

  /** The normalised (V4) model this client calls. */
  get model(): LanguageModelV4 {
    return this.#model;
  }

  /** The client's default advisors, sorted. */
  get advisors(): readonly Advisor[] {
    return sortAdvisors(this.#defaults.advisors);
  }

  /**
   * The advisor params set on every request (the builder's
   * `defaultAdvisorParams` and `telemetry`), so a caller that sets a param per
   * request can extend the client's value instead of replacing it.
   */
  get defaultAdvisorParams(): ReadonlyMap<string, unknown> {
    return new Map(this.#defaults.params);
  }

  /** The telemetry options set with the builder's `telemetry(...)`, if any. */
  get telemetryOptions(): TelemetryOptions | undefined {
    return this.#defaults.params.get(TELEMETRY) as TelemetryOptions | undefined;
  }

  /** A new builder with this client's defaults, to derive a variant. */
  mutate(): ChatClientBuilder {
    const builder = new ChatClientBuilder(this.#model)
      .defaultMessages(...this.#defaults.messages)
      .defaultTools(this.#defaults.tools)
      .defaultAdvisors(...this.#defaults.advisors)
      .defaultOptions(this.#defaults.options)
      .defaultAdvisorParams(Object.fromEntries(this.#defaults.params));
    if (this.#defaults.system !== undefined) builder.defaultSystem(this.#defaults.system);
    return builder;
  }

  /** Starts a request; `user` is a shortcut for `.user(text)`. */
  prompt(user?: string): ChatClientRequestSpec {
    const spec = new ChatClientRequestSpec(this.#model, this.#defaults);
    return user === undefined ? spec : spec.user(user);
  }
}

/** One request being built. Nothing is sent until `call()` or `stream()` is consumed. */
export class ChatClientRequestSpec {
  readonly #model: LanguageModelV4;
  readonly #defaults: ClientDefaults;
  #system: string | undefined;
  #user: UserContent | undefined;
  #messages: ModelMessage[] = [];
  #tools: Record<string, GovernedToolSet[string]> = {};
  #advisors: Advisor[] = [];
  #options: ModelOptions = {};
  #params = new Map<string, unknown>();
  #abortSignal: AbortSignal | undefined;

  /** @internal use {@link ChatClient.prompt} */
  constructor(model: LanguageModelV4, defaults: ClientDefaults) {
    this.#model = model;
    this.#defaults = defaults;
  }

  /**
   * System instructions for this request (replaces the default).
   * @throws InvalidOptionError when `system` is not a string
   */
  system(system: string): this {
    is.string()(system, 'system');
    this.#system = system;
    return this;
  }

  /**
   * The user's message of this turn.
   * @throws InvalidOptionError when `content` is neither text nor an array of content parts
   */
  user(content: UserContent): this {
    is.either('a string or an array of content parts', is.string(), is.arrayOf(is.object()))(content, 'user');
    this.#user = content;
    return this;
  }

  /**
   * Conversation messages for this request, after the client's default messages.
   * @throws InvalidOptionError naming a message that is not a message object with a role
   */
  messages(...messages: ModelMessage[]): this {
    is.arrayOf(isMessage)(messages, 'messages');
    this.#messages.push(...messages);
    return this;
  }

  /**
   * Extra tools for this request (a name clash replaces the default tool).
   * @throws InvalidOptionError naming a tool that is not an object
   */
  tools(tools: GovernedToolSet): this {
    is.recordOf(is.object())(tools, 'tools');
    Object.assign(this.#tools, tools);
    return this;
  }

  /** Model settings for this request, over the defaults. */
  options(options: ModelOptions): this {
    validateModelOptions(options);
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /**
   * Adds advisors, or sets advisor params through a callback: `.advisors(a => a.param(KEY, v))`.
   * @throws InvalidOptionError naming an item that is neither an advisor nor a callback
   */
  advisors(...items: Array<Advisor | ((spec: AdvisorSpec) => unknown)>): this {
    // A callback stands in as a valid advisor, so that every advisor keeps its own index in the message.
    validateAdvisors(
      items.map((item) => (typeof item === 'function' ? CALLBACK : item)),
      'advisors',
    );
    for (const item of items) {
      if (typeof item === 'function') {
        const spec = new AdvisorSpec();
        item(spec);
        this.#advisors.push(...spec.collected.advisors);
        for (const [key, value] of spec.collected.params) this.#params.set(key, value);
      } else {
        this.#advisors.push(item);
      }
    }
    return this;
  }

  /**
   * Aborts the request (every model round and tool execution) when the signal fires; `undefined` removes it.
   * @throws InvalidOptionError when `signal` is not an AbortSignal
   */
  abortSignal(signal: AbortSignal | undefined): this {
    if (signal !== undefined) is.having('an AbortSignal', 'aborted', 'throwIfAborted', 'addEventListener', 'removeEventListener')(signal, 'abortSignal');
    this.#abortSignal = signal;
    return this;
  }

  /** Runs the request to completion when one of the returned spec's methods is awaited. */
  call(): CallResponseSpec {
    return new CallResponseSpec(async (extra) => {
      const { request, chain, advisors } = this.#prepare(extra);
      return traceClientCall(this.#model, request, advisors, async () => {
        await reportUserTurn(request);
        return chain.nextCall(request);
      });
    });
  }

  /** Runs the request streaming when the returned spec is iterated. */
  stream(): StreamResponseSpec {
    return new StreamResponseSpec((signal) => {
      // Each view iterated is a request of its own, prepared when iteration starts.
      let prepared: Prepared | undefined;
      const prepare = (): Prepared => (prepared ??= this.#prepare(new Map(), signal));
      return traceClientStream(this.#model, prepare, async function* (request) {
        await reportUserTurn(request);
        yield* prepare().chain.nextStream(request);
      });
    });
  }

  /** `signal`: one more abort signal of the view being read (a UI stream the client went away from). */
  #prepare(extraParams: ReadonlyMap<string, unknown>, signal?: AbortSignal): Prepared {
    const messages: ModelMessage[] = [...this.#defaults.messages, ...this.#messages];
    if (this.#user !== undefined) messages.push({ role: 'user', content: this.#user });
    if (messages.length === 0) {
      throw new InvalidRequestError('The request has no messages: call .user(text) or .messages(...) before call() or stream().');
    }
    const advisors = sortAdvisors([...this.#defaults.advisors, ...this.#advisors]);
    checkChain(advisors);
    const context: AdvisorContext = new Map([...this.#defaults.params, ...this.#params, ...extraParams]);
    const telemetry = extraParams.get(TELEMETRY) ?? this.#params.get(TELEMETRY);
    if (telemetry !== undefined) {
      validateTelemetryOptions(telemetry as TelemetryOptions, 'TELEMETRY');
      // A request's settings go over the client's, as AgentLoop's do: one that only lengthens recorded content
      // must not turn back on what the client turned off (telemetry, or content recording).
      const client = this.#defaults.params.get(TELEMETRY);
      if (client !== undefined) context.set(TELEMETRY, { ...(client as TelemetryOptions), ...(telemetry as TelemetryOptions) });
    }
    const named = context.get(CONVERSATION_ID);
    // Without an id, state is per call (as Spring AI users expect): sharing needs an explicit id.
    if (!(typeof named === 'string' && named.length > 0)) context.set(CALL_SESSION_ID, `call-${randomUUID()}`);
    if (this.#defaults.messages.length > 0) context.set(DEFAULT_MESSAGES, this.#defaults.messages);
    const sinks = advisors.filter((a): a is Advisor & ObservationSink => typeof (a as Partial<ObservationSink>).observe === 'function');
    if (sinks.length > 0) context.set(OBSERVATION_SINKS, sinks);
    const output = context.get(OUTPUT_SCHEMA) as OutputSchema | undefined;
    const system = this.#system ?? this.#defaults.system;
    const request: ChatClientRequest = {
      system: output ? [system, jsonInstruction(output.jsonSchema)].filter(Boolean).join('\n\n') : system,
      messages,
      tools: { ...this.#defaults.tools, ...this.#tools },
      options: { ...this.#defaults.options, ...this.#options },
      responseFormat: output ? { type: 'json', schema: output.jsonSchema } : undefined,
      context,
      abortSignal: signal === undefined || this.#abortSignal === undefined ? (signal ?? this.#abortSignal) : AbortSignal.any([this.#abortSignal, signal]),
    };
    return { request, advisors, chain: new DefaultAdvisorChain(advisors, new ModelCallTerminal(this.#model)) };
  }
}

/** What an advisor-params callback counts as when `advisors(...)` checks its items. */
const CALLBACK: Advisor = { name: 'callback', order: 0, adviseCall: (request, chain) => chain.nextCall(request) };

/** A message as the AI SDK takes it: an object with one of its roles. */
const isMessage: OptionRule = (value, path) => {
  is.object()(value, path);
  is.oneOf('system', 'user', 'assistant', 'tool')((value as { role?: unknown }).role, `${path}.role`);
};

/**
 * Refuses a chain (sorted) that holds one advisor instance twice, then one
 * with a memory advisor inside the tool loop.
 * @throws DuplicateAdvisorError naming the advisor added twice
 * @throws AdvisorPlacementError naming the misplaced advisor and the tool loop
 */
function checkChain(sorted: readonly Advisor[]): void {
  const seen = new Set<Advisor>();
  for (const advisor of sorted) {
    if (seen.has(advisor)) throw new DuplicateAdvisorError(advisor);
    seen.add(advisor);
  }
  checkAdvisorPlacement(sorted);
}

interface Prepared {
  readonly request: ChatClientRequest;
  readonly advisors: readonly Advisor[];
  readonly chain: DefaultAdvisorChain;
}

/**
 * The result of `call()`: each method runs the request (once) and returns a
 * view of the answer. `entity(schema)` tells the model the schema, so it is a
 * request of its own: run once per schema, however often it is asked.
 */
export class CallResponseSpec {
  readonly #run: (extraParams: ReadonlyMap<string, unknown>) => Promise<ChatClientResponse>;
  #plain: Promise<ChatClientResponse> | undefined;
  readonly #entities = new WeakMap<object, Promise<ResponseEntity<unknown>>>();

  /** @internal */
  constructor(run: (extraParams: ReadonlyMap<string, unknown>) => Promise<ChatClientResponse>) {
    this.#run = run;
  }

  /** The response with the context it travelled with. */
  chatClientResponse(): Promise<ChatClientResponse> {
    this.#plain ??= this.#run(new Map());
    return this.#plain;
  }

  /** The model's final response. */
  async chatResponse(): Promise<ChatResponse> {
    return (await this.chatClientResponse()).response;
  }

  /** The final answer's text. */
  async content(): Promise<string> {
    return (await this.chatResponse()).text;
  }

  /**
   * Asks for JSON matching `schema` and returns it parsed and validated. With a
   * StructuredOutputValidationAdvisor in the chain, invalid answers are retried
   * with the validation errors; without one, an invalid answer throws
   * `EntityParseError` (with the call's `response`). A call whose tool loop
   * stops at calls waiting for the caller (approvals, tools without
   * `execute`) throws `EntityPendingError`, which carries the response to go
   * on from.
   *
   * @param schema a Zod schema, a Standard Schema, or an AI SDK `jsonSchema(…)`
   */
  entity<S extends z.ZodType>(schema: S): Promise<z.infer<S>>;
  entity<T>(schema: FlexibleSchema<T>): Promise<T>;
  async entity(schema: FlexibleSchema<unknown>): Promise<unknown> {
    return (await this.#entityRun(schema)).entity;
  }

  /**
   * The entity with the response it came in (Spring AI's `responseEntity`):
   * its usage, rounds and the messages to keep the conversation with. The
   * same request as `entity(schema)`: asking for both runs it once.
   */
  responseEntity<S extends z.ZodType>(schema: S): Promise<ResponseEntity<z.infer<S>>>;
  responseEntity<T>(schema: FlexibleSchema<T>): Promise<ResponseEntity<T>>;
  responseEntity(schema: FlexibleSchema<unknown>): Promise<ResponseEntity<unknown>> {
    return this.#entityRun(schema);
  }

  #entityRun(schema: FlexibleSchema<unknown>): Promise<ResponseEntity<unknown>> {
    if ((typeof schema !== 'object' && typeof schema !== 'function') || schema === null) {
      return Promise.reject(
        new InvalidOptionError('entity(schema)', `must be a schema (Zod, Standard Schema or AI SDK jsonSchema), got ${describeValue(schema)}`),
      );
    }
    let run = this.#entities.get(schema);
    if (run === undefined) this.#entities.set(schema, (run = this.#runEntity(schema)));
    return run;
  }

  async #runEntity(schema: FlexibleSchema<unknown>): Promise<ResponseEntity<unknown>> {
    const output = await toOutputSchema(schema);
    const { response, context } = await this.#run(new Map<string, unknown>([[OUTPUT_SCHEMA, output]]));
    if (isPending(response)) throw new EntityPendingError(response);
    // Parsed once: a schema's refinements and transforms may call out or differ from run to run.
    const validated = validatedAnswer(context, output, response.text);
    if (validated !== undefined) return { response, entity: validated.value };
    if (response.finishReason === 'content-filter') {
      // A guard's refusal or a provider's filter: not an answer the model got wrong.
      const filtered = 'there is no answer to parse: the request was refused or the answer filtered (finish reason content-filter)';
      throw new EntityParseError(response.text, [filtered], response);
    }
    return { response, entity: await parseEntity(schema, response.text, response) };
  }
}

/** What `responseEntity(schema)` resolves to. */
export interface ResponseEntity<T> {
  /** The call's response: usage, rounds, messages. */
  readonly response: ChatResponse;
  /** The answer, parsed and validated. */
  readonly entity: T;
}

/** The result of `stream()`. Iterate one of its views once. */
export class StreamResponseSpec {
  readonly #run: (signal?: AbortSignal) => AsyncIterable<ChatStreamEvent>;

  /** @internal */
  constructor(run: (signal?: AbortSignal) => AsyncIterable<ChatStreamEvent>) {
    this.#run = run;
  }

  /** Every event: text deltas, tool calls and results, and one final `finish` with the complete response. */
  chatResponse(): AsyncIterable<ChatStreamEvent> {
    return this.#run();
  }

  /** Only the text, as it arrives. */
  async *content(): AsyncIterable<string> {
    for await (const event of this.#run()) {
      if (event.type === 'text-delta' && event.text !== '') yield event.text;
    }
  }

  /**
   * The stream as the UI message chunks the AI SDK's `useChat` reads, as
   * `streamText`'s `toUIMessageStream` sends them: a step per model round,
   * tool calls, results, approval requests, and an error chunk (`onError`'s
   * text) when the call fails. Cancelling the stream ends the call.
   * @throws InvalidOptionError for an unknown option or a value of the wrong type
   */
  toUIMessageStream<UI_MESSAGE extends UIMessage = UIMessage>(
    options?: ChatUIMessageStreamOptions<UI_MESSAGE>,
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>> {
    return chatUIMessageStream(this.#run, options);
  }

  /**
   * A `Response` streaming {@link toUIMessageStream} as server-sent events,
   * for a route handler (`return client.prompt()…stream().toUIMessageStreamResponse()`).
   * @throws InvalidOptionError for an unknown option or a value of the wrong type
   */
  toUIMessageStreamResponse<UI_MESSAGE extends UIMessage = UIMessage>(options?: ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit): Response {
    return chatUIMessageStreamResponse(this.#run, options);
  }

  /**
   * Writes {@link toUIMessageStream} to a Node.js response as server-sent
   * events; resolves once it is written. A client that goes away ends the call.
   * @throws InvalidOptionError for an unknown option or a value of the wrong type
   */
  pipeUIMessageStreamToResponse<UI_MESSAGE extends UIMessage = UIMessage>(
    response: ServerResponse,
    options?: ChatUIMessageStreamOptions<UI_MESSAGE> & ChatUIMessageResponseInit,
  ): Promise<void> {
    return pipeChatUIMessageStream(response, this.#run, options);
  }
}

/**
 * A user's turn is new information for the breaker (it resets the evidence for
 * re-checks). It is reported before any advisor runs, so that what advisors
 * observe during the turn (a retrieval, say) counts after it, not before.
 */
async function reportUserTurn(request: ChatClientRequest): Promise<void> {
  const last = request.messages.at(-1);
  if (last?.role !== 'user' || request.context.get(CONTINUATION_TURN) === true) return;
  const text = typeof last.content === 'string' ? last.content : last.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  await reportObservation(request.context, sessionIdOf(request.context), { kind: 'user', text });
}
