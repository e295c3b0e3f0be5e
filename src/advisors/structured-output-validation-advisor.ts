import type { FlexibleSchema } from '@ai-sdk/provider-utils';
import type { ModelMessage } from 'ai';
import { GovernorError } from '../errors/governor-error.ts';
import { addUsage, ZERO_USAGE, type Usage } from '../model/usage.ts';
import { AdvisorOrder, type AdvisorChain } from '../chat/advisor.ts';
import { ADVISOR_PLACEMENT, type PlacedAdvisor } from '../chat/advisor-placement.ts';
import type { AdvisorContext } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { jsonInstruction, noteValidated, OUTPUT_SCHEMA, toOutputSchema, validateAnswer, type OutputSchema } from '../chat/entity.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Thrown when the model's answer still fails validation after the last attempt. */
export class StructuredOutputValidationError extends GovernorError {
  declare readonly code: 'GOVERNOR_OUTPUT_VALIDATION';
  /**
   * The validation errors of the last attempt, for people: where the JSON
   * breaks (line and column) or which fields do not match, never the
   * answer's own text (it may hold what the model read, secrets included).
   * At most 20, then how many more there are.
   */
  readonly errors: readonly string[];
  /** Answers of the call that failed validation, the last one included. */
  readonly attempts: number;
  /** The last answer's text. */
  readonly text: string;
  /**
   * Token usage of the request's model rounds until validation gave up,
   * summed over the attempts (and, inside a tool loop, its earlier rounds):
   * the spend to account for.
   */
  readonly usage: Usage;
  /** Model rounds the request made until validation gave up. */
  readonly rounds: number;

  constructor(
    errors: readonly string[],
    attempts: number,
    text: string,
    spent: { readonly usage: Usage; readonly rounds: number } = { usage: ZERO_USAGE, rounds: 0 },
  ) {
    super('GOVERNOR_OUTPUT_VALIDATION', `The answer failed schema validation after ${attempts} attempts: ${errors.join('; ')}`);
    this.errors = errors;
    this.attempts = attempts;
    this.text = text;
    this.usage = spent.usage;
    this.rounds = spent.rounds;
  }
}

/** Options of {@link StructuredOutputValidationAdvisor}. */
export interface StructuredOutputValidationAdvisorOptions {
  /**
   * The schema answers must match when the request names none. A request's
   * `.entity(schema)` wins over it, as the more specific: its schema is the
   * one the model is told and the one answers are checked against. It must
   * have a JSON Schema form (no `z.date()`: use `z.iso.datetime()`), as the
   * model is told it: one without is refused when the advisor is made.
   * @default the schema given to `.entity(schema)`; without one, answers are not checked
   */
  readonly schema?: FlexibleSchema<unknown>;
  /**
   * Re-asks after an invalid answer, counted over the whole call: the tool
   * rounds between two invalid answers do not start the count again.
   * @default 3
   */
  readonly maxRepeatAttempts?: number;
  /** @default AdvisorOrder.VALIDATION (close to the model) */
  readonly order?: number;
}

/** What each option of StructuredOutputValidationAdvisor accepts. */
const STRUCTURED_OUTPUT_VALIDATION_ADVISOR_OPTION_RULES: OptionRules<StructuredOutputValidationAdvisorOptions> = {
  schema: is.either('a schema (Zod, Standard Schema or AI SDK jsonSchema)', is.object(), is.function()),
  maxRepeatAttempts: is.integer(0),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * Validates the model's answer against a JSON schema and, when it fails,
 * calls the rest of the chain again with the errors appended, up to
 * `maxRepeatAttempts` times in the call. A round in which the model asks for
 * tools is passed through untouched, so it works inside a tool loop. The
 * schema is the request's `.entity(schema)`, or else the advisor's `schema`.
 */
export class StructuredOutputValidationAdvisor implements PlacedAdvisor {
  readonly name = 'StructuredOutputValidationAdvisor';
  /** Inside the tool loop: outside it, each re-ask would run the loop's tools again. */
  readonly [ADVISOR_PLACEMENT] = 'per-round';
  readonly order: number;
  readonly maxRepeatAttempts: number;
  readonly #output: Promise<OutputSchema> | undefined;
  /** Invalid answers so far, by call (its context, which every round of the call shares). */
  readonly #invalid = new WeakMap<AdvisorContext, number>();
  /** Re-asks a round answered with a tool call, by call, with the message that answered each. */
  readonly #reasks = new WeakMap<AdvisorContext, ReadonlyArray<{ readonly answered: ModelMessage; readonly feedback: readonly ModelMessage[] }>>();

  /** @throws InvalidOptionError when an option is invalid, `schema` one without a JSON Schema form among them */
  constructor(options: StructuredOutputValidationAdvisorOptions = {}) {
    validateOptions('StructuredOutputValidationAdvisor', options, STRUCTURED_OUTPUT_VALIDATION_ADVISOR_OPTION_RULES);
    this.maxRepeatAttempts = options.maxRepeatAttempts ?? 3;
    this.order = options.order ?? AdvisorOrder.VALIDATION;
    if (options.schema !== undefined) {
      this.#output = toOutputSchema(options.schema, 'schema');
      // A schema whose JSON Schema comes later fails at the first call that uses it, not as an unhandled rejection.
      this.#output.catch(() => undefined);
    }
  }

  async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    const output = await this.#outputSchema(request);
    if (output === undefined) return chain.nextCall(request);
    const attempts = new Attempts(output, this.maxRepeatAttempts, this.#withFormat(this.#withReasks(request), output), this.#invalid);
    for (;;) {
      const done = await attempts.judge(await chain.copy(this).nextCall(attempts.request));
      if (done !== undefined) return this.#noteReask(attempts, done);
    }
  }

  /**
   * Streaming: the same loop. An attempt's text deltas are held until its
   * answer validates, so the caller streams only the answer that passed (tool
   * calls and results pass through as they come).
   */
  async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    const output = await this.#outputSchema(request);
    if (output === undefined) {
      yield* chain.nextStream(request);
      return;
    }
    const attempts = new Attempts(output, this.maxRepeatAttempts, this.#withFormat(this.#withReasks(request), output), this.#invalid);
    for (;;) {
      const held: ChatStreamEvent[] = [];
      let result: ChatClientResponse | undefined;
      // A round that calls a tool is not an answer to validate: its text goes out as it comes, before its calls.
      let toolRound = false;
      for await (const event of chain.copy(this).nextStream(attempts.request)) {
        if (event.type === 'finish') result = event.response;
        else if (event.type === 'text-delta' && !toolRound) held.push(event);
        else {
          if (event.type === 'tool-call' && !toolRound) {
            toolRound = true;
            yield* held.splice(0);
          }
          yield event;
        }
      }
      if (result === undefined) throw new GovernorError('GOVERNOR_STREAM_INCOMPLETE', 'The downstream stream ended without a finish event.');
      const done = await attempts.judge(result);
      if (done !== undefined) {
        yield* held;
        yield { type: 'finish', response: this.#noteReask(attempts, done) };
        return;
      }
    }
  }

  /**
   * Remembers, for the rest of the call, the re-asks a round that called a
   * tool answered: the loop's next rounds must show the model what that call
   * answered. They are not part of the conversation the call adds (what a
   * memory stores, what a UI shows), which never saw them.
   */
  #noteReask(attempts: Attempts, done: ChatClientResponse): ChatClientResponse {
    const answered = done.response.messages[0];
    if (done.response.toolCalls.length > 0 && attempts.feedback.length > 0 && answered !== undefined) {
      const context = attempts.request.context;
      this.#reasks.set(context, [...(this.#reasks.get(context) ?? []), { answered, feedback: attempts.feedback }]);
    }
    return done;
  }

  /** The request with each re-ask of the call put back before the message that answered it. */
  #withReasks(request: ChatClientRequest): ChatClientRequest {
    const reasks = this.#reasks.get(request.context);
    if (reasks === undefined) return request;
    const messages = request.messages.flatMap((message) => {
      const reask = reasks.find((r) => r.answered === message);
      return reask === undefined ? [message] : [...reask.feedback, message];
    });
    return { ...request, messages };
  }

  /** The request asking for `output`; one that asks for a format already (`.entity(schema)` does) is left as it is. */
  #withFormat(request: ChatClientRequest, output: OutputSchema): ChatClientRequest {
    if (request.responseFormat !== undefined) return request;
    const instruction = jsonInstruction(output.jsonSchema);
    return {
      ...request,
      system: request.system ? `${request.system}\n\n${instruction}` : instruction,
      responseFormat: { type: 'json', schema: output.jsonSchema },
    };
  }

  /** The request's `.entity(schema)` first: the caller parses the answer with it, and the model was told it. */
  async #outputSchema(request: ChatClientRequest): Promise<OutputSchema | undefined> {
    return (request.context.get(OUTPUT_SCHEMA) as OutputSchema | undefined) ?? this.#output;
  }
}

/** The attempts of one request: usage and rounds summed over them, and the request for the next one. */
class Attempts {
  readonly #output: OutputSchema;
  readonly #maxRepeatAttempts: number;
  readonly #invalid: WeakMap<AdvisorContext, number>;
  #request: ChatClientRequest;
  #usage: Usage | undefined;
  #rounds = 0;
  /** The failed answers and re-asks added to the request so far, oldest first. */
  readonly #feedback: ModelMessage[] = [];

  constructor(output: OutputSchema, maxRepeatAttempts: number, request: ChatClientRequest, invalid: WeakMap<AdvisorContext, number>) {
    this.#output = output;
    this.#maxRepeatAttempts = maxRepeatAttempts;
    this.#request = request;
    this.#invalid = invalid;
  }

  /** The request of the next attempt. */
  get request(): ChatClientRequest {
    return this.#request;
  }

  /** The failed answers and re-asks added to the request so far, oldest first. */
  get feedback(): readonly ModelMessage[] {
    return this.#feedback;
  }

  /**
   * Judges an attempt's result: the response with usage and rounds of every
   * attempt when it passed (or asked for tools), otherwise undefined with the
   * feedback added to the next request.
   *
   * @throws StructuredOutputValidationError when the last attempt failed
   */
  async judge(result: ChatClientResponse): Promise<ChatClientResponse | undefined> {
    const response = result.response;
    this.#usage = this.#usage === undefined ? response.totalUsage : addUsage(this.#usage, response.totalUsage);
    this.#rounds += response.rounds;
    const spent = { totalUsage: this.#usage, rounds: this.#rounds };
    // Not an answer: the round goes on to its tools.
    if (response.toolCalls.length > 0) return { ...result, response: { ...response, ...spent } };
    const check = await validateAnswer(this.#output.schema, response.text);
    if (check.success) {
      noteValidated(this.#request.context, this.#output, response.text, check.value);
      return { ...result, response: { ...response, ...spent } };
    }
    // Counted for the call, not for this round: a model that answers wrongly between tool calls would
    // otherwise get its re-asks afresh every round, and only the tool-call limit would end it.
    const context = this.#request.context;
    const invalid = (this.#invalid.get(context) ?? 0) + 1;
    this.#invalid.set(context, invalid);
    if (invalid > this.#maxRepeatAttempts) {
      throw new StructuredOutputValidationError(check.errors, invalid, response.text, { usage: this.#usage, rounds: this.#rounds });
    }
    const feedback = feedbackMessages(response.text, check.feedback);
    this.#feedback.push(...feedback);
    this.#request = { ...this.#request, messages: [...this.#request.messages, ...feedback] };
    return undefined;
  }
}

/** The failed answer and its validation errors, for the model. */
function feedbackMessages(answer: string, errors: readonly string[]): ModelMessage[] {
  return [
    { role: 'assistant', content: answer },
    {
      role: 'user',
      content:
        `Your previous answer does not match the required JSON schema. Validation errors:\n- ${errors.join('\n- ')}\n` +
        'Answer again with corrected JSON only.',
    },
  ];
}
