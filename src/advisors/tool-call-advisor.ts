import type { ModelMessage, ToolContent } from 'ai';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { addUsage, ZERO_USAGE, type Usage } from '../model/usage.ts';
import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import { toolContextOf, type GovernorToolContext } from '../chat/tool-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import { LOOP_FORCED_NO_TOOLS } from '../chat/tool-choice-violation.ts';
import type { ChatClientResponse, ChatResponse, ChatStreamEvent, PendingToolApproval, ToolCallRequest } from '../chat/chat-response.ts';
import { TOOL_CALL_LISTENERS, type ToolCallListener } from '../chat/tool-call-listener.ts';
import { observeUnrunToolCall, resultText } from '../chat/tool-call-observation.ts';
import { observationSinks, reportObservation } from '../chat/observation.ts';
import type { ToolCallEvent } from '../breaker/breaker-event.ts';
import { telemetrySettings, type TelemetrySettings } from '../telemetry/telemetry-options.ts';
import {
  announceInput,
  checkToolCall,
  isExecutable,
  outcomeOfResult,
  refuseToolCall,
  resultOutput,
  runToolCall,
  toolResultMessage,
  type ExecutableToolCall,
  type InvalidToolCall,
  type ToolExecutionEnvironment,
  type ToolOutcome,
} from './tool-execution.ts';
import { outputText } from '../chat/json-text.ts';
import {
  answeredApprovals,
  needsApproval,
  pausedRound,
  deniedWithResult,
  pendingApproval,
  UnansweredToolApprovalError,
  unansweredApprovals,
  withApprovalRequests,
} from './tool-approval.ts';
import { toolLoopJournals, type ToolLoopJournal } from './tool-loop-journal.ts';
import { loopEndingCalls, loopEndingNames } from './loop-ending.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from './tool-timeout.ts';
import { StructuredOutputValidationError } from './structured-output-validation-advisor.ts';
import { ADVISOR_PLACEMENT } from '../chat/advisor-placement.ts';
import { is, validateOptions, type OptionRule, type OptionRules } from '../errors/validate-options.ts';

/**
 * Thrown when a tool-call limit is exceeded and `onLimitExceeded` is `'throw'`,
 * or when the model keeps asking for tools after `'error-result'` told it to answer.
 */
export class ToolCallLimitExceededError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_CALL_LIMIT';
  readonly toolName: string | undefined;
  readonly limit: number;
  /** Token usage of the request's model rounds until the limit ended it, summed: the spend to account for. */
  readonly usage: Usage;
  /** Model rounds the request made until the limit ended it. */
  readonly rounds: number;

  constructor(toolName: string | undefined, limit: number, spent: { readonly usage: Usage; readonly rounds: number } = { usage: ZERO_USAGE, rounds: 0 }) {
    super(
      'GOVERNOR_TOOL_CALL_LIMIT',
      toolName === undefined
        ? `The request exceeded its limit of ${limit} tool calls in total.`
        : `The request exceeded its limit of ${limit} calls of tool "${toolName}".`,
    );
    this.toolName = toolName;
    this.limit = limit;
    this.usage = spent.usage;
    this.rounds = spent.rounds;
  }
}

/** The approval callback's answer: `true`/`false`, or an object with a reason the model will see. */
export type ToolApproval = boolean | { readonly approved: boolean; readonly reason?: string };

/** Options of {@link ToolCallingAdvisor}. */
export interface ToolCallingAdvisorOptions {
  /** @default AdvisorOrder.TOOL_LOOP (near the outermost, so inner advisors see every round) */
  readonly order?: number;
  /** Most tool calls executed in total per request. @default 100 */
  readonly maxToolCalls?: number;
  /** Most calls per tool name per request; a number applies to every tool. @default no per-tool limit */
  readonly maxCallsPerTool?: number | Readonly<Record<string, number>>;
  /**
   * What happens when a limit is hit: `'throw'` a {@link ToolCallLimitExceededError},
   * or `'error-result'`: the call is not run and the model is told the limit is
   * reached. From then on every model round of the request is sent with
   * `toolChoice: { type: 'none' }` (over the request's own `toolChoice`, even
   * `'required'`), so the model has to answer with what it has. A provider
   * that ignores `toolChoice` gets one more round whose calls are handled as
   * before; if the model asks for tools again after that, the call ends with a
   * {@link ToolCallLimitExceededError}, so the loop cannot go on without end.
   * @default 'throw'
   */
  readonly onLimitExceeded?: 'throw' | 'error-result';
  /**
   * An automatic policy, asked before each call runs; a denial becomes an error
   * result the model sees. It gets the call with its `input` as the tool's
   * schema parsed it (defaults applied); a call of an unknown tool or with
   * invalid arguments gets its error result without being asked about. Calls
   * of tools declared with `needsApproval` (the AI SDK's flag, a boolean or a
   * function of the parsed input) wait for the caller instead: the call ends
   * with `pendingApprovals`, and the caller's answer decides them.
   * @default every call approved
   */
  readonly approve?: (call: ToolCallRequest, context: GovernorToolContext) => ToolApproval | Promise<ToolApproval>;
  /** Run the calls of one model round concurrently. @default true */
  readonly parallel?: boolean;
  /** Notified of every tool call's start, end and error. */
  readonly listeners?: readonly ToolCallListener[];
  /**
   * Most milliseconds one tool call may run. The tool's `abortSignal` fires at
   * the limit and the loop moves on at once, whether or not the tool stops; the
   * model sees a timeout error result.
   * @default 300_000 (5 minutes)
   */
  readonly toolTimeoutMs?: number;
  /** Per-tool time limits by tool name, over `toolTimeoutMs`. @default none */
  readonly toolTimeouts?: Readonly<Record<string, number>>;
}

/** The hooks a {@link ToolCallListener} may have; typed so a hook added to the interface must be added here too. */
const TOOL_CALL_LISTENER_HOOKS: { readonly [K in keyof ToolCallListener]-?: true } = {
  onToolCallStart: true,
  onToolCallEnd: true,
  onToolCallError: true,
  onToolCallRefused: true,
};

/**
 * A tool-call listener: an object with at least one of the hooks, each a
 * function. Other keys are allowed, as for every listener: a listener may be
 * a class instance with its own state (hooks on its prototype count) or also
 * serve as a `ModelCallListener`. A listener with none of the hooks would
 * hear nothing, as a misspelt hook (`onToolStart`) would: it is refused.
 */
export const isToolCallListener: OptionRule = (value, path) => {
  is.object()(value, path);
  const listener = value as Record<string, unknown>;
  const hooks = Object.keys(TOOL_CALL_LISTENER_HOOKS);
  for (const hook of hooks) if (listener[hook] !== undefined) is.function()(listener[hook], `${path}.${hook}`);
  if (hooks.every((hook) => listener[hook] === undefined)) {
    const keys = Object.keys(listener);
    throw new InvalidOptionError(
      path,
      `must be a tool-call listener with at least one of ${hooks.join(', ')} (a function), got ${keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`}`,
    );
  }
};

const TOOL_CALL_ADVISOR_RULES: OptionRules<ToolCallAdvisorOptions> = {
  order: is.number(-Number.MAX_VALUE),
  maxToolCalls: is.integer(1),
  maxCallsPerTool: is.either('a positive integer or an object of positive integers by tool name', is.integer(1), is.recordOf(is.integer(1))),
  onLimitExceeded: is.oneOf('throw', 'error-result'),
  approve: is.function(),
  parallel: is.boolean(),
  listeners: is.arrayOf(isToolCallListener),
  toolTimeoutMs: is.timeMs(),
  toolTimeouts: is.recordOf(is.timeMs()),
};

/**
 * The tool-calling loop as a recursive advisor: it calls the rest of the chain
 * (`chain.copy(this)`), runs the tools the model asked for, and calls again
 * until the model stops asking — so every advisor after it sees every round.
 * (Spring AI 2.0's name; `ToolCallAdvisor` is the deprecated alias.)
 *
 * Two flags on a tool end the loop without another model round:
 * - `returnDirect: true` (Spring AI's): when every call of a round is of a
 *   return-direct tool that ran, the loop ends with their outputs (one per
 *   line) as the answer's text. Alongside any other call it does nothing.
 * - `endsLoop: true`, for finish tools such as `submitTool()`: once such a
 *   tool has run (without error), the loop ends after the other calls of the
 *   same round have run, even alongside other tools, with the outputs of the
 *   loop-ending tools as the answer's text (when every call was
 *   return-direct, the return-direct rule above decides the text). The
 *   `LOOP_ENDING_TOOLS` param (loop-ending.ts) marks tools by name for one request.
 *
 * A tool without `execute` is client-side, as in the AI SDK: the caller runs
 * it. A round with such calls ends the loop once its other calls have run
 * (their results are in `messages`), with finish reason `'tool-calls'` and
 * the calls to run in the response's `toolCalls`; the caller sends a tool
 * message with their results after `messages`, and the model goes on from
 * there. They count towards the limits as calls the loop runs do.
 *
 * A round with calls that wait for the caller's approval pauses, and the
 * request answering them resumes it: both rules then judge the whole round,
 * the calls that ran before the pause included. So a loop-ending tool called
 * alongside a call that needs approval ends the loop once the approval is
 * answered, whether the call was approved (it runs first) or denied (it gets
 * its `execution-denied` result), with no model round after it.
 */
export class ToolCallingAdvisor implements Advisor {
  readonly name = 'ToolCallingAdvisor';
  readonly [ADVISOR_PLACEMENT] = 'tool-loop';
  readonly order: number;
  readonly #options: ToolCallingAdvisorOptions;
  readonly #maxToolCalls: number;

  constructor(options: ToolCallingAdvisorOptions = {}) {
    validateOptions('ToolCallingAdvisor', options, TOOL_CALL_ADVISOR_RULES);
    this.#options = options;
    this.order = options.order ?? AdvisorOrder.TOOL_LOOP;
    this.#maxToolCalls = options.maxToolCalls ?? 100;
  }

  async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    const loop = new ToolLoop(this.#options, this.#maxToolCalls, request);
    await loop.observeClientResults();
    const resumed = await loop.resume();
    if (resumed) return resumed;
    try {
      for (;;) {
        const { response } = await chain.copy(this).nextCall(loop.nextRequest());
        const done = await loop.afterRound(response);
        if (done) return done;
      }
    } catch (error) {
      throw loop.withEarlierSpend(error);
    }
  }

  async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    const loop = new ToolLoop(this.#options, this.#maxToolCalls, request);
    await loop.observeClientResults();
    const resumed = yield* loop.live(() => loop.resume());
    if (resumed) {
      yield* finalEvents(resumed);
      return;
    }
    for (;;) {
      let finished: ChatResponse | undefined;
      try {
        for await (const event of chain.copy(this).nextStream(loop.nextRequest())) {
          // Inner rounds' finish events are folded into one: outer advisors see one response per call.
          if (event.type === 'finish') finished = event.response.response;
          else yield event;
        }
      } catch (error) {
        throw loop.withEarlierSpend(error);
      }
      if (finished === undefined) throw new GovernorError('GOVERNOR_STREAM_INCOMPLETE', 'The downstream stream ended without a finish event.');
      const round = finished;
      const done = yield* loop.live(() => loop.afterRound(round));
      if (done) {
        yield* finalEvents(done);
        return;
      }
    }
  }
}

/**
 * Spring AI 1.x's name of {@link ToolCallingAdvisor}.
 * @deprecated use `ToolCallingAdvisor` (renamed in Spring AI 2.0)
 */
export const ToolCallAdvisor = ToolCallingAdvisor;
/** @deprecated use `ToolCallingAdvisor` */
export type ToolCallAdvisor = ToolCallingAdvisor;
/** @deprecated use `ToolCallingAdvisorOptions` */
export type ToolCallAdvisorOptions = ToolCallingAdvisorOptions;

/** The end of a streamed loop: approval requests, a return-direct answer's text, then the finish. */
function* finalEvents(done: ChatClientResponse): Iterable<ChatStreamEvent> {
  for (const p of done.response.pendingApprovals ?? []) yield { type: 'tool-approval-request', approvalId: p.approvalId, toolCall: p.toolCall };
  // A return-direct answer never came from the model as text deltas: it is the text of the stream.
  if (done.context.get(RETURN_DIRECT_TEXT) === done.response && done.response.text !== '') {
    yield { type: 'text-delta', text: done.response.text, returnDirect: true };
  }
  yield { type: 'finish', response: done };
}

/** Rounds after a limit in which the model may ignore `toolChoice: 'none'` before the loop gives up. */
const MAX_IGNORED_ANSWER_ONLY_ROUNDS = 1;

/** Context key marking the response whose text came from return-direct tools. */
const RETURN_DIRECT_TEXT = 'governor.toolLoop.returnDirect';

/** The state of one request's loop: the messages added so far, usage, counts. */
class ToolLoop {
  /** Where the events of the work `live` runs go; unset outside it (a call, not a stream). */
  #emit: ((event: ChatStreamEvent) => void) | undefined;
  readonly #options: ToolCallingAdvisorOptions;
  readonly #maxToolCalls: number;
  #request: ChatClientRequest;
  readonly #added: ModelMessage[] = [];
  readonly #perTool = new Map<string, number>();
  readonly #toolContext: GovernorToolContext;
  readonly #listeners: readonly ToolCallListener[];
  readonly #telemetry: TelemetrySettings;
  /** Tools named by the request's `LOOP_ENDING_TOOLS` param. */
  readonly #endingByName: ReadonlySet<string>;
  /** Who hears of approvals about to run and of tools that ran (the chat memory advisors of the call). */
  readonly #journals: readonly ToolLoopJournal[];
  #usage: Usage | undefined;
  #rounds = 0;
  #total = 0;
  /** The first limit hit in `'error-result'` mode: from then on the model may only answer. */
  #limitHit: ToolCallLimitExceededError | undefined;
  /** Whether the round in flight was sent with tools forbidden. */
  #answerOnly = false;
  /** Rounds sent with tools forbidden in which the model asked for tools all the same. */
  #ignoredAnswerOnly = 0;

  constructor(options: ToolCallingAdvisorOptions, maxToolCalls: number, request: ChatClientRequest) {
    this.#options = options;
    this.#maxToolCalls = maxToolCalls;
    this.#request = request;
    this.#toolContext = toolContextOf(request);
    const fromContext = request.context.get(TOOL_CALL_LISTENERS);
    this.#listeners = [...(options.listeners ?? []), ...(Array.isArray(fromContext) ? (fromContext as ToolCallListener[]) : [])];
    this.#telemetry = telemetrySettings(request.context);
    this.#endingByName = loopEndingNames(request.context);
    this.#journals = toolLoopJournals(request.context);
  }

  /**
   * Runs `work`, yielding the events it emits as they come (the values a
   * streaming tool yields while it runs, then each call's result), and
   * returns what it resolved to, after the events emitted before it settled.
   */
  async *live<T>(work: () => Promise<T>): AsyncGenerator<ChatStreamEvent, T> {
    const queue: ChatStreamEvent[] = [];
    let wake: (() => void) | undefined;
    let settled = false;
    this.#emit = (event) => {
      queue.push(event);
      wake?.();
    };
    const running = work().finally(() => {
      settled = true;
      wake?.();
    });
    // Awaited below; a consumer that stops reading must not leave its failure unhandled.
    running.catch(() => undefined);
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (settled) return await running;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      this.#emit = undefined;
    }
  }

  /** Streams a call's result (inside {@link live}; nothing in a call). */
  #emitOutcome(outcome: ToolOutcome): void {
    const { call, output, isError, denied } = outcome;
    this.#emit?.({
      type: 'tool-result',
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output,
      isError,
      ...(denied ? { denied } : {}),
      ...('error' in outcome ? { error: outcome.error } : {}),
    });
  }

  /**
   * Reports the results the caller sends back for client-side calls (of
   * tools without `execute`, which the loop handed to it) to the session's
   * sinks, as the loop reports the results of the tools it runs: an
   * AgentBreaker judges a client-side tool's results too. Those are the
   * results in the tool messages that end the request, for the calls of the
   * answer before them; the loop's own results there were reported when their
   * tools ran.
   */
  async observeClientResults(): Promise<void> {
    const { messages, tools } = this.#request;
    let tail = messages.length;
    while (tail > 0 && messages[tail - 1]!.role === 'tool') tail -= 1;
    const round = messages[tail - 1];
    if (tail === messages.length || round?.role !== 'assistant' || typeof round.content === 'string') return;
    const calls = new Map(
      round.content.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [[part.toolCallId, part] as const] : [])),
    );
    for (const message of messages.slice(tail)) {
      if (message.role !== 'tool') continue;
      for (const part of message.content) {
        const call = part.type === 'tool-result' ? calls.get(part.toolCallId) : undefined;
        if (part.type !== 'tool-result' || call === undefined || !this.#isTool(call.toolName) || typeof tools[call.toolName]!.execute === 'function') continue;
        const { output, isError } = resultOutput(part);
        await reportObservation(this.#request.context, this.#toolContext.sessionId, {
          kind: 'tool_call',
          tool: call.toolName,
          args: call.input,
          result: resultText(output),
          error: isError,
        });
      }
    }
  }

  /**
   * Continues a loop that ended waiting for approvals: when the request's last
   * message answers them, runs the approved calls (a denied one gets an
   * `execution-denied` result with the reason), and puts the approval answers
   * and the results in one tool message in place of the answers. Returns the
   * final response when the round the answers resume ends the loop, judged
   * on all of its calls, those that ran before the pause included.
   */
  async resume(): Promise<ChatClientResponse | undefined> {
    for (const { call, reason } of deniedWithResult(this.#request.messages)) {
      this.#emitOutcome({ call, output: reason, isError: true, returnDirect: false, denied: true });
    }
    const answers = answeredApprovals(this.#request.messages);
    if (answers.length === 0) return undefined;
    const unanswered = unansweredApprovals(this.#request.messages, answers);
    if (unanswered.length > 0) throw new UnansweredToolApprovalError(unanswered);
    const answerMessage = this.#request.messages.at(-1)!;
    this.#request = { ...this.#request, messages: this.#request.messages.slice(0, -1) };
    const approved = answers.filter((a) => a.response.approved).map((a) => a.call);
    // Claimed once the limits have let them through and right before they run: a claim that
    // nothing follows would leave the approval answered with no result, never to run.
    let claimed = false;
    const claim = async (running: readonly ToolCallRequest[]): Promise<void> => {
      const approving = answers.filter((a) => running.includes(a.call)).map((a) => a.response);
      claimed = approving.length > 0;
      for (const journal of this.#journals) await journal.claimApprovals(approving);
    };
    // The tools get the messages with the answer that approved them, as the AI SDK's do.
    const { outcomes, clientCalls } =
      approved.length === 0
        ? { outcomes: [], clientCalls: [] }
        : await this.#execute(approved, this.#request.messages.concat(answerMessage), { approved: true, beforeRun: claim });
    const results = toolResultMessage(outcomes).content as ToolContent;
    const content: ToolContent = [...(answerMessage.content as ToolContent)];
    for (const { call, response } of answers) {
      if (response.approved) {
        const result = results.find((r) => r.type === 'tool-result' && r.toolCallId === call.toolCallId);
        if (result) content.push(result);
      } else {
        content.push({
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: { type: 'execution-denied', ...(response.reason ? { reason: response.reason } : {}) },
        });
        // Told as the AI SDK's stream tells it (`tool-output-denied`), so a UI can close the call.
        this.#emitOutcome({ call, output: response.reason, isError: true, returnDirect: false, denied: true });
      }
    }
    this.#added.push({ role: 'tool', content });
    // A claimed call counts as run even if it could not start (bad arguments): the claim is
    // stored, so its result must be too, or a retry would find the approval taken and no result.
    this.#reportRan(outcomes, claimed);
    // Approved client-side calls are the caller's to run now: the loop waits for their results.
    if (clientCalls.length > 0) return this.#final({ ...emptyResponse(), finishReason: 'tool-calls' }, '', clientCalls);
    // The round goes on where it paused, so it ends as it would have without the pause: its calls
    // that ran before it (a loop-ending tool among them) count with the ones that ran now.
    const resumed = new Map(outcomes.map((o) => [o.call.toolCallId, o]));
    // A denied call has no outcome: like a refused one, it has not run.
    const round = pausedRound(this.#request.messages, answers[0]!.response.approvalId).map(({ call, result }) => ({
      call,
      outcome: resumed.get(call.toolCallId) ?? (result === undefined ? undefined : outcomeOfResult(call, result, this.#request.tools)),
    }));
    const ending = this.#endingOutcomes(round);
    return ending === undefined ? undefined : this.#returnDirect(ending);
  }

  nextRequest(): ChatClientRequest {
    this.#answerOnly = this.#limitHit !== undefined;
    if (this.#answerOnly) this.#request.context.set(LOOP_FORCED_NO_TOOLS, true);
    const request = this.#answerOnly ? { ...this.#request, options: { ...this.#request.options, toolChoice: { type: 'none' as const } } } : this.#request;
    if (this.#added.length === 0) return request;
    return { ...request, messages: [...request.messages, ...this.#added] };
  }

  /** Runs the round's tools; returns the final response when the loop is over. */
  async afterRound(response: ChatResponse): Promise<ChatClientResponse | undefined> {
    this.#rounds += response.rounds;
    this.#usage = this.#usage === undefined ? response.totalUsage : addUsage(this.#usage, response.totalUsage);
    const roundMessages = this.#added.length;
    this.#added.push(...response.messages);
    if (response.toolCalls.length === 0) return this.#final(response, response.text);
    // The provider ignored toolChoice 'none'. Many OpenAI-compatible servers do, and their model mostly
    // answers once it has read the refusal; refusing for ever would bill rounds for as long as it insists.
    if (this.#answerOnly && this.#limitHit !== undefined && ++this.#ignoredAnswerOnly > MAX_IGNORED_ANSWER_ONLY_ROUNDS) {
      const { toolName, limit } = this.#limitHit;
      for (const call of response.toolCalls) {
        void observeUnrunToolCall(
          { toolName: call.toolName, args: call.input, known: this.#isTool(call.toolName), outcome: 'refused', shown: this.#limitHit.message },
          { telemetry: this.#telemetry },
        );
      }
      throw new ToolCallLimitExceededError(toolName, limit, this.#spent());
    }

    const waiting: PendingToolApproval[] = [];
    const { outcomes, clientCalls } = await this.#execute(response.toolCalls, this.#messagesBefore(roundMessages), { waiting });
    if (waiting.length > 0 || clientCalls.length > 0) {
      // The round ends here, as the AI SDK's does: the caller answers the approvals, runs the
      // client-side calls (the response's `toolCalls`), and calls again with what it got.
      if (waiting.length > 0) {
        this.#added.splice(roundMessages, this.#added.length - roundMessages, ...withApprovalRequests(response.messages[0], waiting));
      }
      if (outcomes.length > 0) this.#added.push(toolResultMessage(outcomes));
      this.#reportRan(outcomes);
      const final = this.#final({ ...response, finishReason: 'tool-calls' }, response.text, clientCalls);
      return waiting.length === 0 ? final : { ...final, response: { ...final.response, pendingApprovals: waiting } };
    }
    this.#added.push(toolResultMessage(outcomes));
    this.#reportRan(outcomes);
    const ending = this.#endingOutcomes(outcomes.map((outcome) => ({ call: outcome.call, outcome })));
    return ending === undefined ? undefined : this.#returnDirect(ending, response);
  }

  /**
   * Tells the journals what the call has added so far, when a tool of
   * `outcomes` ran: from then on a failure of the call must not lose the
   * record of it. Calls that were refused or denied change nothing outside.
   */
  #reportRan(outcomes: readonly ToolOutcome[], claimed = false): void {
    if (this.#journals.length === 0 || !(claimed || outcomes.some((o) => o.ran === true))) return;
    const added = [...this.#added];
    for (const journal of this.#journals) journal.toolsRan(added);
  }

  /**
   * The outcomes whose output ends the loop (see {@link loopEndingCalls}), or
   * undefined when it goes on. A call without an outcome, or with an error
   * one (refused, denied, failed), has not run.
   */
  #endingOutcomes(round: ReadonlyArray<{ readonly call: ToolCallRequest; readonly outcome: ToolOutcome | undefined }>): readonly ToolOutcome[] | undefined {
    const calls = round.map(({ call, outcome }) => ({
      outcome,
      toolName: call.toolName,
      tool: this.#isTool(call.toolName) ? this.#request.tools[call.toolName] : undefined,
      ran: outcome !== undefined && !outcome.isError,
    }));
    return loopEndingCalls(calls, this.#endingByName)?.flatMap(({ outcome }) => (outcome === undefined ? [] : [outcome]));
  }

  /**
   * A validation failure from inside the loop, with the spend of the loop's
   * earlier rounds added: its own counts cover only the round that failed,
   * and the caller accounts for the whole call.
   */
  withEarlierSpend(error: unknown): unknown {
    if (!StructuredOutputValidationError.isInstance(error) || this.#usage === undefined) return error;
    return new StructuredOutputValidationError(error.errors, error.attempts, error.text, {
      usage: addUsage(this.#usage, error.usage),
      rounds: this.#rounds + error.rounds,
    });
  }

  #spent(): { usage: Usage; rounds: number } {
    return { usage: this.#usage ?? ZERO_USAGE, rounds: this.#rounds };
  }

  #returnDirect(outcomes: readonly ToolOutcome[], last?: ChatResponse): ChatClientResponse {
    const text = outcomes.map((o) => outputText(o.output)).join('\n');
    const done = this.#final({ ...(last ?? emptyResponse()), finishReason: 'stop' }, text);
    this.#request.context.set(RETURN_DIRECT_TEXT, done.response);
    return done;
  }

  /** The messages the model was sent for the round whose own messages start at `count`. */
  #messagesBefore(count: number): readonly ModelMessage[] {
    return [...this.#request.messages, ...this.#added.slice(0, count)];
  }

  /** The response that ends the loop; `toolCalls`: the client-side calls it hands to the caller. */
  #final(last: ChatResponse, text: string, toolCalls: readonly ToolCallRequest[] = []): ChatClientResponse {
    const response: ChatResponse = {
      ...last,
      text,
      toolCalls,
      rounds: this.#rounds,
      totalUsage: this.#usage ?? last.totalUsage,
      messages: [...this.#added],
    };
    return { response, context: this.#request.context };
  }

  /**
   * Runs a round's calls. Each is checked first (its tool, its arguments):
   * a call that fails the check gets its error result without approval. A
   * valid call's tool hears of its input (`onInputAvailable`), and a call
   * whose tool needs approval goes to `waiting` instead of running (unless
   * `approved`: the caller already answered, in an earlier request that did
   * both). Calls of client-side tools (no `execute`) that pass the limits
   * and the approver are returned for the caller to run. `beforeRun` gets
   * the other calls that passed the limits and the approver, before any of
   * them runs; if it throws, none runs.
   */
  async #execute(
    calls: readonly ToolCallRequest[],
    messages: readonly ModelMessage[],
    {
      approved = false,
      waiting,
      beforeRun,
    }: {
      readonly approved?: boolean;
      readonly waiting?: PendingToolApproval[];
      readonly beforeRun?: (running: readonly ToolCallRequest[]) => Promise<void>;
    } = {},
  ): Promise<{ readonly outcomes: ToolOutcome[]; readonly clientCalls: ToolCallRequest[] }> {
    const env = this.#environment(messages);
    // Limits and approval are decided in the model's order, before anything runs,
    // so parallel execution cannot race past a limit.
    const planned: Array<ToolOutcome | ExecutableToolCall | InvalidToolCall> = [];
    const clientCalls: ToolCallRequest[] = [];
    for (const call of calls) {
      const checked = await checkToolCall(call, this.#request.tools);
      if (checked.ok && !approved) {
        // A streamed round called onInputStart as the call's input came in.
        await announceInput(checked, env, this.#emit !== undefined);
        if (waiting !== undefined && (await needsApproval(checked, messages, this.#toolContext))) {
          waiting.push(pendingApproval(call));
          continue;
        }
      }
      // Counted whatever the check found: a model repeating an invalid call must reach the limit too.
      const refusal = this.#checkLimits(call) ?? (checked.ok && !approved ? await this.#checkApproval({ ...call, input: checked.input }) : undefined);
      if (refusal !== undefined) {
        const known = this.#isTool(call.toolName);
        await observeUnrunToolCall({ toolName: call.toolName, args: call.input, known, outcome: 'refused', shown: String(refusal.output) }, env);
        planned.push(refusal);
      } else if (!checked.ok || isExecutable(checked)) {
        planned.push(checked);
      } else {
        clientCalls.push(call);
      }
    }
    await beforeRun?.(planned.flatMap((p) => ('ok' in p ? [p.call] : [])));
    // Each result streams as its call settles, as `streamText` sends them: a fast tool's does not wait for a slow one.
    const run = async (p: ToolOutcome | ExecutableToolCall | InvalidToolCall): Promise<ToolOutcome> => {
      const outcome = !('ok' in p) ? p : p.ok ? await runToolCall(p, env) : await refuseToolCall(p, env);
      this.#emitOutcome(outcome);
      return outcome;
    };
    if (this.#options.parallel === false) {
      const outcomes: ToolOutcome[] = [];
      for (const p of planned) outcomes.push(await run(p));
      return { outcomes, clientCalls };
    }
    return { outcomes: await Promise.all(planned.map(run)), clientCalls };
  }

  /** What the tools of a round get, `messages` being those the model was sent for it. */
  #environment(messages: readonly ModelMessage[]): ToolExecutionEnvironment {
    return {
      tools: this.#request.tools,
      messages,
      abortSignal: this.#request.abortSignal,
      toolContext: this.#toolContext,
      sessionId: this.#toolContext.sessionId,
      listeners: this.#listeners,
      telemetry: this.#telemetry,
      report: (event: ToolCallEvent) => reportObservation(this.#request.context, this.#toolContext.sessionId, event),
      breakers: observationSinks(this.#request.context),
      // As the AI SDK streams them: each value a streaming tool yields, marked preliminary; the last is the result too.
      onPreliminary: (call, output) =>
        this.#emit?.({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output, isError: false, preliminary: true }),
      toolTimeoutMs: (name: string) =>
        (this.#options.toolTimeouts && Object.hasOwn(this.#options.toolTimeouts, name) ? this.#options.toolTimeouts[name] : undefined) ??
        this.#options.toolTimeoutMs ??
        DEFAULT_TOOL_TIMEOUT_MS,
    };
  }

  #checkLimits(call: ToolCallRequest): ToolOutcome | undefined {
    const perTool = this.#options.maxCallsPerTool;
    const toolLimit =
      typeof perTool === 'number' ? perTool : perTool !== undefined && Object.hasOwn(perTool, call.toolName) ? perTool[call.toolName] : undefined;
    const used = this.#perTool.get(call.toolName) ?? 0;
    let exceeded: ToolCallLimitExceededError | undefined;
    if (this.#total >= this.#maxToolCalls) exceeded = new ToolCallLimitExceededError(undefined, this.#maxToolCalls, this.#spent());
    else if (toolLimit !== undefined && used >= toolLimit) exceeded = new ToolCallLimitExceededError(call.toolName, toolLimit, this.#spent());
    if (exceeded) {
      if (this.#options.onLimitExceeded !== 'error-result') {
        // Ends the run: counted, but there is no next round for the breaker to judge.
        void observeUnrunToolCall(
          { toolName: call.toolName, args: call.input, known: this.#isTool(call.toolName), outcome: 'refused', shown: exceeded.message },
          { telemetry: this.#telemetry },
        );
        throw exceeded;
      }
      this.#limitHit ??= exceeded;
      return { call, output: `${exceeded.message} The call was not run; answer with what you have.`, isError: true, returnDirect: false };
    }
    this.#total += 1;
    this.#perTool.set(call.toolName, used + 1);
    return undefined;
  }

  /** Own keys only: a model calling `constructor` or `toString` names no tool. */
  #isTool(name: string): boolean {
    return Object.hasOwn(this.#request.tools, name);
  }

  async #checkApproval(call: ToolCallRequest): Promise<ToolOutcome | undefined> {
    if (!this.#options.approve) return undefined;
    const answer = await this.#options.approve(call, this.#toolContext);
    const approved = typeof answer === 'boolean' ? answer : answer.approved;
    if (approved) return undefined;
    const reason = typeof answer === 'object' && answer.reason ? `: ${answer.reason}` : '.';
    return { call, output: `The call of tool "${call.toolName}" was denied by the approver${reason}`, isError: true, returnDirect: false };
  }
}

/** The base of a response made without a model round (a return-direct answer to resumed calls). */
function emptyResponse(): ChatResponse {
  return {
    text: '',
    content: [],
    toolCalls: [],
    finishReason: 'stop',
    usage: ZERO_USAGE,
    totalUsage: ZERO_USAGE,
    rounds: 0,
    messages: [],
    modelId: '',
    warnings: [],
  };
}
