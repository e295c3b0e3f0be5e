import { randomUUID } from 'node:crypto';
import { redact } from '../redaction/redact.ts';
import type { ModelMessage, ToolCallPart, ToolResultPart } from 'ai';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import { addUsage, ZERO_USAGE, type Usage } from '../model/usage.ts';
import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import { ADVISOR_PLACEMENT, type PlacedAdvisor } from '../chat/advisor-placement.ts';
import { CONVERSATION_ID } from '../chat/advisor-context.ts';
import type { ChatClient } from '../chat/chat-client.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, PendingToolApproval } from '../chat/chat-response.ts';
import { CONTINUATION_TURN, CONTINUED_TASK } from '../chat/observation.ts';
import { TOOL_CALL_LISTENERS, type ToolCallListener } from '../chat/tool-call-listener.ts';
import { MODEL_CALL_LISTENERS, type ModelCallListener } from '../chat/model-call-listener.ts';
import { resultOutput, toolResultMessage } from '../advisors/tool-execution.ts';
import { isToolCallListener } from '../advisors/tool-call-advisor.ts';
import { LOOP_ENDING_TOOLS } from '../advisors/loop-ending.ts';
import { InvalidToolApprovalError, toolApprovalResponse } from '../advisors/tool-approval.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { AgentBreakerError } from '../breaker/breaker-errors.ts';
import { TELEMETRY, validateTelemetryOptions, type TelemetryOptions } from '../telemetry/telemetry-options.ts';
import { observeAgentRun } from './agent-run-observation.ts';
import { ResumedApprovals } from './resumed-approvals.ts';
import { estimateCost, findPrice, mergePrices, type PriceTable } from '../model/pricing.ts';
import { callBudget } from './call-budget.ts';
import { formatUsd } from './format-usd.ts';

/**
 * Why an {@link AgentLoop} run ended. `awaiting_approval`: a tool declared
 * with `needsApproval` waits for the caller; continue with
 * {@link AgentLoop.resume}.
 */
export type AgentLoopStatus = 'completed' | 'awaiting_approval' | 'invocation_limit' | 'timeout' | 'cost_limit' | 'stuck' | 'aborted' | 'error';

/** The caller's answer to one pending approval (the AI SDK's `tool-approval-response`, without its `type`). */
export interface ToolApprovalAnswer {
  readonly approvalId: string;
  readonly approved: boolean;
  /** Shown to the model with a denial. */
  readonly reason?: string;
}

/** What a run produced and spent. */
export interface AgentLoopResult {
  readonly status: AgentLoopStatus;
  /** Model calls made (each round trip of every tool loop). */
  readonly invocations: number;
  /** ChatClient calls made: the task, then one per continuation turn. */
  readonly turns: number;
  /** Tool calls executed. */
  readonly toolCalls: number;
  /** Usage summed over every model call. */
  readonly usage: Usage;
  /** Cost in USD, or `'unknown'` when the model has no price or a token count is unknown. */
  readonly costUsd: number | 'unknown';
  /** The finish tool's output (or the last answer's text). */
  readonly output: string | undefined;
  /** A human-readable reason for any status other than `completed`. */
  readonly reason: string | undefined;
  /** The error behind `stuck` or `error`. */
  readonly error: unknown;
  readonly durationMs: number;
  readonly conversationId: string;
  /**
   * The whole conversation: the task, every answer, tool result and
   * continuation — also when the run ended early, up to where it stopped (a
   * tool call that never finished gets an error result saying why).
   */
  readonly messages: readonly ModelMessage[];
  /**
   * The tool calls waiting for the caller's approval when the status is
   * `awaiting_approval` (answer each with {@link AgentLoop.resume}); empty
   * otherwise. Their assistant message, with its `tool-approval-request`
   * parts, ends `messages`.
   */
  readonly pendingApprovals: readonly PendingToolApproval[];
}

/** Progress events, for live displays. */
export type AgentLoopEvent =
  | { readonly type: 'invocation-start'; readonly invocation: number }
  | {
      readonly type: 'invocation-end';
      readonly invocation: number;
      readonly usage: Usage;
      readonly totalUsage: Usage;
      readonly costUsd: number | 'unknown';
      readonly text: string;
      readonly toolCalls: ReadonlyArray<{ readonly toolName: string; readonly input: unknown }>;
    }
  | { readonly type: 'tool-call-end'; readonly toolName: string; readonly args: unknown; readonly result: unknown; readonly durationMs: number }
  | { readonly type: 'tool-call-error'; readonly toolName: string; readonly args: unknown; readonly error: unknown; readonly durationMs: number }
  /** A call that could not run: a tool that does not exist, or input not valid for it; `message` is what the model is told. */
  | { readonly type: 'tool-call-refused'; readonly toolName: string; readonly args: unknown; readonly message: string }
  | { readonly type: 'continuation'; readonly turn: number; readonly message: string }
  | {
      readonly type: 'retry';
      /** The model call being retried. */
      readonly invocation: number;
      /** The attempt that failed, from 1. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly statusCode: number | undefined;
      readonly error: unknown;
    }
  | { readonly type: 'end'; readonly result: AgentLoopResult };

/** Options of {@link AgentLoop}. */
export interface AgentLoopOptions {
  /**
   * The client to run; it needs a ToolCallAdvisor (and the tool `finishTool`
   * names among its tools). With a chat memory advisor in it, which puts the
   * stored turns back before each call, a continuation turn sends only its new
   * message.
   */
  readonly client: ChatClient;
  /** Most model calls in a run. @default 20 */
  readonly maxInvocations?: number;
  /**
   * Wall-clock limit of a run, at most 2_147_483_647 (the timer maximum). The
   * run returns within a moment of it even if a tool or the model ignores the
   * abort. @default 600_000 (10 minutes)
   */
  readonly timeoutMs?: number;
  /**
   * Most USD a run may spend; needs a price for the model. Before each model
   * call the loop projects the call's input (the previous call's prompt and
   * answer, or the request's own size when larger, priced as uncached input)
   * and sends the call with its output bounded (`maxOutputTokens`) to what the
   * rest of the budget pays for at the model's output price, never above a
   * smaller `maxOutputTokens` of the caller's. A call the budget cannot pay for
   * with its input and at least 64 output tokens is not made: the run ends with
   * `cost_limit`.
   *
   * What stays approximate: the input is projected, not known (tool
   * definitions are not counted, and a provider's tokenizer may count more than
   * 4 characters a token), so the run can pass the limit by one call's
   * misjudged input; a provider that adds to the bound (Anthropic's thinking
   * budget) can spend past it. No bound is sent when it is at or above the
   * model's maximum output (`maxOutputTokens` of its price: the default table
   * has it for every model it prices); without one, the bound is sent as is,
   * and a provider may refuse one above the model's maximum.
   * @default no limit
   */
  readonly costLimitUsd?: number;
  /**
   * Name of the tool whose call completes the task: once it has run, the run
   * ends after the other calls of its round, without another model call (the
   * loop's `LOOP_ENDING_TOOLS` param), with its result as the `output`.
   * `null` completes on the first answer without tool calls. A name the
   * model is not offered (no tool of the client has it) ends the run with
   * status `error` and an `InvalidOptionError` naming `finishTool`, before any
   * model call.
   * @default 'submit' when the client has a `submit` tool (see `submitTool()`), else `null`
   */
  readonly finishTool?: string | null;
  /** Price overrides merged over the defaults. */
  readonly prices?: PriceTable;
  /** Model id to price calls with. @default the client's model id */
  readonly modelId?: string;
  /** Tool-call listeners for every call of the run. */
  readonly listeners?: readonly ToolCallListener[];
  /** Progress events. */
  readonly onProgress?: (event: AgentLoopEvent) => void;
  /** Ends the run with status `aborted`. */
  readonly abortSignal?: AbortSignal;
  /** Conversation (and breaker session) id. @default a random UUID per run */
  readonly conversationId?: string;
  /** The agent's name in telemetry (`invoke_agent {name}` span, `gen_ai.agent.name`). @default 'AgentLoop' */
  readonly name?: string;
  /**
   * OpenTelemetry settings for the run's calls, over the client's own
   * (`ChatClientBuilder.telemetry`). The run's `prices` and `modelId` also
   * price the `governor.cost` counter.
   * @default the client's settings
   */
  readonly telemetry?: TelemetryOptions;
}

/** Where a run (or a resumed run) starts: the transcript and what was spent before. */
interface RunStart {
  readonly conversationId: string;
  readonly messages: readonly ModelMessage[];
  /** The approval answers that open the first turn of a resumed run. */
  readonly answer?: ModelMessage;
  readonly before?: AgentLoopResult;
}

/** Thrown inside the chain to end a run at a limit; never escapes {@link AgentLoop.run}. */
class LimitReached extends GovernorError {
  declare readonly code: 'GOVERNOR_LOOP_LIMIT';
  readonly status: AgentLoopStatus;
  constructor(status: AgentLoopStatus, message: string) {
    super('GOVERNOR_LOOP_LIMIT', message);
    this.status = status;
  }
}

const AGENT_LOOP_RULES: OptionRules<AgentLoopOptions> = {
  client: is.having('a ChatClient', 'prompt', 'model'),
  maxInvocations: is.integer(1),
  timeoutMs: is.timeMs(),
  costLimitUsd: is.number(0, Number.MAX_VALUE, { exclusiveMin: true }),
  finishTool: (value, path) => {
    if (value !== null) is.string({ nonEmpty: true })(value, path);
  },
  prices: is.object(),
  modelId: is.string({ nonEmpty: true }),
  listeners: is.arrayOf(isToolCallListener),
  onProgress: is.function(),
  abortSignal: is.having('an AbortSignal', 'aborted', 'addEventListener'),
  conversationId: is.string({ nonEmpty: true }),
  name: is.string({ nonEmpty: true }),
  telemetry: is.object(),
};

function estimateTokens(request: ChatClientRequest): number {
  return Math.ceil((JSON.stringify(request.messages).length + (request.system?.length ?? 0)) / 4);
}

/**
 * Runs a task through a ChatClient until the finish tool is called or a limit
 * ends it. Limits are checked before every model call — not only between
 * turns. Under a cost limit each call's output is bounded to what the budget
 * left can pay for, and a call the budget cannot pay for is not started (see
 * {@link AgentLoopOptions.costLimitUsd}). Once the finish tool has run, the
 * tool loop ends after the other calls of the same answer, and the run
 * completes with the tool's result as its `output`: no model call follows.
 */
export class AgentLoop {
  readonly #options: AgentLoopOptions;
  /** Telemetry options the run's calls carry; undefined: the client's own. */
  readonly #telemetry: TelemetryOptions | undefined;
  /**
   * Set when the client keeps the conversation itself — a chat memory advisor
   * (once per call) puts what it stored before each call's own messages, so a
   * continuation turn sends only what is new — to an order just inside the
   * memory and outside the tool loop.
   */
  readonly #memoryOrder: number | undefined;
  /**
   * The finish tool, once a model call has shown the tools the model is
   * offered (the client's, and any an advisor adds); undefined until then.
   */
  #finishTool: string | null | undefined;
  /** Approvals resumed without a chat memory: an approved call runs once however often it is resumed. */
  readonly #resumed = new ResumedApprovals();
  readonly maxInvocations: number;
  readonly timeoutMs: number;
  /** The agent's name in telemetry. */
  readonly name: string;

  constructor(options: AgentLoopOptions) {
    if (!options?.client) throw new InvalidOptionError('client', 'a ChatClient is required');
    validateOptions('AgentLoop', options, AGENT_LOOP_RULES, { required: ['client'] });
    if (options.prices) mergePrices(options.prices); // validates overrides now, not mid-run
    const modelId = options.modelId ?? options.client.model.modelId;
    if (options.costLimitUsd !== undefined && findPrice(modelId, mergePrices(options.prices)) === undefined) {
      // Without a price the limit could not be kept: refused before any run, never an unlimited one.
      throw new InvalidOptionError(
        'costLimitUsd',
        `needs a price for model "${modelId}", which has none: pass one in prices, or a modelId the price table knows`,
      );
    }
    if (options.telemetry !== undefined) validateTelemetryOptions(options.telemetry);
    this.#options = options;
    this.maxInvocations = options.maxInvocations ?? 20;
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.name = options.name ?? 'AgentLoop';
    this.#memoryOrder = insideMemory(options.client);
    const own = options.telemetry;
    if (own !== undefined || options.prices !== undefined || options.modelId !== undefined) {
      // One object for every call of every run: settings are resolved once per object.
      this.#telemetry = {
        ...options.client.telemetryOptions,
        ...own,
        ...(own?.prices === undefined && options.prices !== undefined ? { prices: options.prices } : {}),
        ...(own?.priceModelId === undefined && options.modelId !== undefined ? { priceModelId: options.modelId } : {}),
      };
    }
  }

  /**
   * Runs `task` to an end; never throws for a limit, a breaker stop or a model
   * error — see `status`. The run is an `invoke_agent {name}` span, the parent
   * of its ChatClient calls.
   */
  async run(task: string): Promise<AgentLoopResult> {
    return this.#observed({ conversationId: this.#options.conversationId ?? randomUUID(), messages: [{ role: 'user', content: task }] });
  }

  /**
   * Continues a run that ended with status `awaiting_approval`, with the
   * caller's answer to every pending approval: approved calls run (once; tools
   * that already ran do not run again), a denied one reaches the model as an
   * `execution-denied` result with the reason, and the run goes on under the
   * same conversation id. When the finish tool ran in the answer that waited,
   * the run completes with its output once the approved calls have run (a
   * denied call keeps its `execution-denied` result in `messages`), without
   * another model call. Invocations, tool calls, usage and cost carry over,
   * so `maxInvocations` and `costLimitUsd` bound the whole run; `timeoutMs`
   * bounds each leg, as time spent waiting for the answer is not the agent's.
   *
   * ```ts
   * let result = await loop.run('Refund order A1');
   * while (result.status === 'awaiting_approval') {
   *   result = await loop.resume(result, result.pendingApprovals.map((p) => ({ approvalId: p.approvalId, approved: true })));
   * }
   * ```
   *
   * The same answers resumed again never run an approved call twice: a
   * retry after a resumed run that failed goes on from the results of the
   * calls that ran.
   *
   * @throws InvalidOptionError when `previous` is not awaiting approval, an approval is left unanswered, or an answer contradicts the one that went on
   * @throws InvalidToolApprovalError for an answer to an approval `previous` did not ask for
   * @throws ToolApprovalConflictError while a resume of the same answers runs
   */
  async resume(previous: AgentLoopResult, answers: readonly ToolApprovalAnswer[]): Promise<AgentLoopResult> {
    if (previous?.status !== 'awaiting_approval') {
      throw new InvalidOptionError('previous', `must be a result with status 'awaiting_approval', got ${JSON.stringify(previous?.status)}`);
    }
    if (!Array.isArray(answers)) throw new InvalidOptionError('answers', 'must be an array of { approvalId, approved, reason? }');
    const pending = new Set(previous.pendingApprovals.map((p) => p.approvalId));
    const answered = new Map<string, boolean>();
    for (const [i, a] of answers.entries()) {
      if (typeof a?.approved !== 'boolean') throw new InvalidOptionError(`answers[${i}].approved`, 'must be true or false');
      if (a.reason !== undefined && typeof a.reason !== 'string') throw new InvalidOptionError(`answers[${i}].reason`, 'must be a string');
      if (!pending.has(a.approvalId)) throw new InvalidToolApprovalError(String(a.approvalId));
      if (answered.has(a.approvalId) && answered.get(a.approvalId) !== a.approved) {
        throw new InvalidOptionError(`answers[${i}].approved`, `approval "${a.approvalId}" is answered both approved and denied; give one answer`);
      }
      answered.set(a.approvalId, a.approved);
    }
    const missing = [...pending].filter((id) => !answered.has(id));
    if (missing.length > 0) throw new InvalidOptionError('answers', `must answer every pending approval; unanswered: ${missing.join(', ')}`);
    const start = { conversationId: previous.conversationId, messages: previous.messages, answer: toolApprovalResponse(answers), before: previous };
    // A chat memory in the client claims the answers itself.
    if (this.#memoryOrder !== undefined) return this.#observed(start);
    const ran = this.#resumed.claim(answers);
    let result: AgentLoopResult | undefined;
    try {
      // Answered before, and the approved calls ran: go on from their results rather than run them again.
      result = await this.#observed(ran === undefined ? start : { conversationId: previous.conversationId, messages: ran, before: previous });
      return result;
    } finally {
      this.#resumed.settle(answers, previous.pendingApprovals, result?.messages);
    }
  }

  /** A run (or a resumed one) as an `invoke_agent {name}` span. */
  async #observed(start: RunStart): Promise<AgentLoopResult> {
    const o = this.#options;
    const observation = observeAgentRun({
      agentName: this.name,
      conversationId: start.conversationId,
      modelId: o.modelId ?? o.client.model.modelId,
      provider: o.client.model.provider,
      enabled: (this.#telemetry ?? o.client.telemetryOptions)?.enabled !== false,
    });
    const result = await observation.run(() => this.#run(start));
    observation.end(result);
    return result;
  }

  async #run(start: RunStart): Promise<AgentLoopResult> {
    const o = this.#options;
    const { conversationId, before } = start;
    const started = performance.now();
    let finishTool = this.#finishTool !== undefined ? this.#finishTool : o.finishTool === undefined ? 'submit' : o.finishTool;
    // The client does not tell which tools it has: the first request that reaches the model does.
    const settleFinishTool = (tools: ChatClientRequest['tools']): void => {
      if (this.#finishTool === undefined) {
        refuseClientSideTools(tools);
        this.#finishTool = finishToolAmong(o.finishTool, tools);
      }
      finishTool = this.#finishTool;
    };
    const modelId = o.modelId ?? o.client.model.modelId;
    let ended = false;
    const emit = (event: AgentLoopEvent): void => {
      // A tool left running past the end must not report into a finished run.
      if (ended) return;
      try {
        o.onProgress?.(event);
      } catch {
        // A broken progress display must not end the run.
      }
    };

    let invocations = before?.invocations ?? 0;
    let turns = before?.turns ?? 0;
    let toolCalls = before?.toolCalls ?? 0;
    let usage: Usage = before?.usage ?? ZERO_USAGE;
    let lastUsage: Usage | undefined;
    const cost = (): number | 'unknown' => estimateCost(usage, modelId, o.prices).usd;
    const messages: ModelMessage[] = [...start.messages];
    // What the run was asked: its continuation turns go on with it.
    const task = messages.find((message) => message.role === 'user');
    // How many of `messages` a chat memory in the client holds already: every finished call stores its turn.
    let remembered = 0;
    let output: string | undefined;
    let pendingApprovals: readonly PendingToolApproval[] = [];
    // The approval answers go out with the first turn only; the tool loop folds them into its results.
    let answer = start.answer;

    // The current turn's rounds as the tool loop builds them, so a run that ends
    // mid-turn still returns every answer and tool result that happened.
    let turnBase: number | undefined;
    let inflight: ModelMessage[] = [];
    // The messages of the last model answer, as the guard got it: an advisor between the two (the
    // breaker judging the round) may throw before the answer reaches the transcript advisor.
    let lastAnswer: readonly ModelMessage[] | undefined;
    const takeAnswer = (): readonly ModelMessage[] => {
      const made = lastAnswer ?? [];
      lastAnswer = undefined;
      return made;
    };
    const toolResults = new Map<string, { output: unknown; isError: boolean }>();

    const timeout = new AbortController();
    const outOfTime = `the run exceeded its time limit of ${durationText(this.timeoutMs)}`;
    const timer = setTimeout(() => timeout.abort(new LimitReached('timeout', outOfTime)), this.timeoutMs);
    const signal = o.abortSignal ? AbortSignal.any([o.abortSignal, timeout.signal]) : timeout.signal;

    const price = findPrice(modelId, mergePrices(o.prices));
    /**
     * Checks every limit before a model call; returns the request to send: under a cost limit,
     * with its output bounded to what the budget left can pay for.
     */
    const checkLimits = (request: ChatClientRequest): ChatClientRequest => {
      if (o.abortSignal?.aborted) throw o.abortSignal.reason;
      if (performance.now() - started >= this.timeoutMs) throw new LimitReached('timeout', outOfTime);
      if (invocations >= this.maxInvocations) throw new LimitReached('invocation_limit', usedAllCalls(this.maxInvocations));
      if (o.costLimitUsd === undefined || price === undefined) return request;
      const spent = cost();
      if (spent === 'unknown') throw new LimitReached('cost_limit', 'the cost so far is unknown, so the cost limit cannot be kept');
      // The prompt is at least the previous one plus its answer; the request's own size also counts the tool results since.
      const lastPrompt = lastUsage === undefined ? 0 : (lastUsage.inputTokens ?? 0) + (lastUsage.outputTokens ?? 0);
      const budget = callBudget({
        price,
        remainingUsd: o.costLimitUsd - spent,
        inputTokens: Math.max(lastPrompt, estimateTokens(request)),
        maxOutputTokens: request.options.maxOutputTokens,
      });
      if (!budget.affordable) {
        throw new LimitReached(
          'cost_limit',
          `the next model call (about ${formatUsd(budget.minimumUsd)} with its input and ${budget.minimumOutputTokens} output tokens) would take the run past its cost limit of ${limitUsd(o.costLimitUsd)} (${formatUsd(spent)} spent)`,
        );
      }
      if (budget.maxOutputTokens === request.options.maxOutputTokens) return request;
      return { ...request, options: { ...request.options, maxOutputTokens: budget.maxOutputTokens } };
    };

    // Right inside the tool loop, where each round's request holds the turn so far as the loop keeps it.
    const transcript: Advisor = {
      name: 'AgentLoopTranscript',
      order: AdvisorOrder.TOOL_LOOP + 1,
      async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
        // A resumed turn's first round already carries the answers and their results: they belong to this turn.
        turnBase ??= request.messages.length - (answer === undefined ? 0 : 1);
        inflight = request.messages.slice(turnBase);
        takeAnswer();
        let result: ChatClientResponse;
        try {
          result = await chain.nextCall(request);
        } catch (error) {
          // The round was made and billed before the breaker stopped the run on it: its answer belongs to the transcript.
          inflight.push(...takeAnswer());
          throw error;
        }
        takeAnswer();
        inflight.push(...result.response.messages);
        return result;
      },
    };
    // Next to the model, inside every other advisor: each model call is limited and counted, and a
    // round the breaker stops after it was made (and billed) still counts, before the breaker says why.
    const guard: Advisor = {
      name: 'AgentLoopGuard',
      order: AdvisorOrder.LOWEST_PRECEDENCE,
      async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
        settleFinishTool(request.tools);
        const bounded = checkLimits(request);
        invocations += 1;
        emit({ type: 'invocation-start', invocation: invocations });
        const result = await chain.nextCall(bounded);
        const r = result.response;
        lastAnswer = r.messages;
        lastUsage = r.totalUsage;
        usage = addUsage(usage, r.totalUsage);
        emit({
          type: 'invocation-end',
          invocation: invocations,
          usage: r.totalUsage,
          totalUsage: usage,
          costUsd: cost(),
          text: r.text,
          toolCalls: r.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input })),
        });
        return result;
      },
    };
    // A resumed run's first turn sends the transcript again, as the tool loop needs the calls the
    // answers refer to. A chat memory that put the stored conversation back as messages holds them
    // already (it stored every turn of the run so far): then only the answers go on.
    const waiting = new Set(before?.pendingApprovals.map((p) => p.approvalId));
    // A resumed run's first turn goes on with the round that waited for approval: a finish tool
    // that ran in it before the pause has finished the turn, as it would have without the pause.
    const pausedAt = start.answer === undefined ? -1 : start.messages.findLastIndex((m) => asksApproval(m, waiting));
    let pausedRound: readonly ModelMessage[] = pausedAt < 0 ? [] : start.messages.slice(pausedAt);
    let sent: readonly ModelMessage[] = [];
    const resumed: Advisor[] =
      this.#memoryOrder === undefined || start.answer === undefined
        ? []
        : [
            {
              name: 'AgentLoopResume',
              order: this.#memoryOrder,
              async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
                const all = request.messages;
                // Ours start at the first message sent, found by identity: the memory leaves out the results it
                // holds already (those of the round that waited), so our messages are not all there to count.
                const at = answer === undefined || sent.length === 0 ? -1 : all.lastIndexOf(sent[0]!);
                const stored = at > 0 && all.slice(0, at).some((m) => asksApproval(m, waiting));
                return chain.nextCall(stored ? { ...request, messages: [...all.slice(0, at), ...sent.slice(-1)] } : request);
              },
            },
          ];
    const counter: ToolCallListener = {
      onToolCallEnd: (e) => {
        toolResults.set(e.toolCallId, { output: e.result, isError: false });
        toolCalls += 1;
        emit({ type: 'tool-call-end', toolName: e.toolName, args: e.args, result: e.result, durationMs: e.durationMs });
      },
      onToolCallError: (e) => {
        toolResults.set(e.toolCallId, {
          output: `Tool "${e.toolName}" failed: ${e.error instanceof Error ? e.error.message : String(e.error)}`,
          isError: true,
        });
        toolCalls += 1;
        emit({ type: 'tool-call-error', toolName: e.toolName, args: e.args, error: e.error, durationMs: e.durationMs });
      },
      // Not run, so not counted in `toolCalls`; its error result is the model's to read.
      onToolCallRefused: (e) => {
        toolResults.set(e.toolCallId, { output: e.message, isError: true });
        emit({ type: 'tool-call-refused', toolName: e.toolName, args: e.args, message: e.message });
      },
    };

    const retries: ModelCallListener = {
      onRetry: (e) => emit({ type: 'retry', invocation: invocations, attempt: e.attempt, delayMs: e.delayMs, statusCode: e.statusCode, error: e.error }),
    };

    let onAbort: (() => void) | undefined;
    const finish = (status: AgentLoopStatus, reason?: string, error?: unknown): AgentLoopResult => {
      clearTimeout(timer);
      // A signal combined with the caller's lives as long as the caller's does while it has a
      // listener: left on, it would keep every finished run's transcript in memory.
      if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
      if (status !== 'completed' && status !== 'awaiting_approval') messages.push(...unfinishedTurn(messages, inflight, toolResults, reason ?? status));
      inflight = [];
      const result: AgentLoopResult = {
        status,
        invocations,
        turns,
        toolCalls,
        usage,
        costUsd: cost(),
        output,
        // Provider errors quote requests and headers: the reason is shown and logged, so no secret may stay in it.
        reason: reason === undefined ? undefined : redact(reason),
        error,
        durationMs: (before?.durationMs ?? 0) + performance.now() - started,
        conversationId,
        messages: [...messages],
        pendingApprovals,
      };
      emit({ type: 'end', result });
      ended = true;
      return result;
    };

    try {
      // Settles the run the moment the signal fires, even if a tool or the model ignores it.
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => undefined);
      for (;;) {
        turns += 1;
        turnBase = undefined;
        // Until a round runs, a resumed turn has only the answers to show.
        inflight = answer === undefined ? [] : [answer];
        // With a chat memory in the client, the turns it stored come back from it: send each message once.
        const unsent = this.#memoryOrder === undefined ? messages : messages.slice(remembered);
        sent = [...unsent, ...(answer === undefined ? [] : [answer])];
        const call = o.client
          .prompt()
          .messages(...sent)
          .advisors(transcript, guard, ...resumed, (a) => {
            if (this.#telemetry !== undefined) a.param(TELEMETRY, this.#telemetry);
            return (
              a
                .param(CONVERSATION_ID, conversationId)
                // The client's own listeners on these params keep firing: a request param replaces the default.
                .param(TOOL_CALL_LISTENERS, [counter, ...(o.listeners ?? []), ...clientListeners(o.client, TOOL_CALL_LISTENERS)])
                .param(MODEL_CALL_LISTENERS, [retries, ...clientListeners(o.client, MODEL_CALL_LISTENERS)])
                // Once the finish tool has run, the tool loop ends after the rest of its round: no model call follows.
                .param(LOOP_ENDING_TOOLS, [...clientListeners(o.client, LOOP_ENDING_TOOLS), ...(finishTool === null ? [] : [finishTool])])
                // A continuation is the harness talking, not new information: the breaker keeps its evidence.
                .param(CONTINUATION_TURN, turns > 1)
                .param(CONTINUED_TASK, turns > 1 ? task : undefined)
            );
          })
          .abortSignal(signal)
          .call()
          .chatResponse();
        const response = await Promise.race([call, aborted]);
        inflight = [];
        answer = undefined;
        const turn = [...pausedRound, ...response.messages];
        pausedRound = [];
        messages.push(...response.messages);
        remembered = messages.length;
        // The finish tool's own result, even when return-direct tools called with it add theirs to the text.
        output = (finishTool === null ? undefined : finishToolOutput(turn, toolResults, finishTool)) ?? response.text;
        if (response.pendingApprovals !== undefined && response.pendingApprovals.length > 0) {
          // No continuation: the calls wait for the caller, whose answer resumes the run.
          pendingApprovals = response.pendingApprovals;
          const names = [...new Set(pendingApprovals.map((p) => p.toolCall.toolName))].join(', ');
          return finish('awaiting_approval', `${pendingApprovals.length} tool call(s) wait for approval (${names}): answer them with resume()`);
        }
        const finished = finishTool === null ? response.toolCalls.length === 0 : calledTool(turn, finishTool);
        if (finished) return finish('completed');
        const left = this.maxInvocations - invocations;
        if (left <= 0) return finish('invocation_limit', usedAllCalls(this.maxInvocations));
        const note =
          `You have not called \`${finishTool}\` yet, so the task is not finished. ` +
          `${left} of ${this.maxInvocations} model calls remain. Continue from where you stopped; ` +
          `when the task is done, call \`${finishTool}\` with a short summary.`;
        messages.push({ role: 'user', content: note });
        emit({ type: 'continuation', turn: turns + 1, message: note });
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const limit =
        error instanceof LimitReached ? error : timeout.signal.aborted && timeout.signal.reason instanceof LimitReached ? timeout.signal.reason : undefined;
      if (limit !== undefined) {
        // The finish tool ran and a limit stopped only the model call after it: the task is done.
        const submitted = finishTool === null ? undefined : finishToolOutput(inflight, toolResults, finishTool);
        if (submitted !== undefined) {
          output = submitted;
          messages.push(...unfinishedTurn(messages, inflight, toolResults, limit.message));
          return finish('completed');
        }
      }
      if (error instanceof LimitReached) return finish(error.status, error.message);
      if (timeout.signal.aborted && timeout.signal.reason instanceof LimitReached) return finish('timeout', timeout.signal.reason.message);
      if (o.abortSignal?.aborted) return finish('aborted', reason, error);
      if (error instanceof AgentBreakerError) return finish('stuck', reason, error);
      return finish('error', reason, error);
    }
  }
}

/**
 * The finish tool among the `tools` the model is offered: a name given must be
 * one of them; left out, `submit` when there is one, else none (the run
 * completes on an answer without tool calls).
 * @throws InvalidOptionError naming `finishTool` for a name no tool has
 */
function finishToolAmong(given: string | null | undefined, tools: ChatClientRequest['tools']): string | null {
  if (given === undefined) return Object.hasOwn(tools, 'submit') ? 'submit' : null;
  if (given === null || Object.hasOwn(tools, given)) return given;
  const names = Object.keys(tools);
  throw new InvalidOptionError(
    'finishTool',
    `names "${given}", but the model is offered no tool of that name (its tools: ${names.length === 0 ? 'none' : names.join(', ')}), so the run could never finish: ` +
      "add the tool to the client's defaultTools (submitTool() for a `submit` tool), or pass finishTool: null to end the run on an answer without tool calls",
  );
}

/**
 * A run has no caller to hand a call to: the tool loop hands the calls of a
 * tool without `execute` (a client-side tool) to whoever called it, and the
 * run would go on with calls that have no result.
 * @throws InvalidOptionError naming the tools, before any model call
 */
function refuseClientSideTools(tools: ChatClientRequest['tools']): void {
  // A provider's tool (a hosted search) has no `execute`: the provider runs it.
  const names = Object.entries(tools).flatMap(([name, tool]) => (tool.type !== 'provider' && typeof tool.execute !== 'function' ? [name] : []));
  if (names.length === 0) return;
  throw new InvalidOptionError(
    'tools',
    `${names.map((name) => `"${name}"`).join(', ')} ${names.length === 1 ? 'has' : 'have'} no execute function: an AgentLoop runs every tool itself, ` +
      'so give each an execute, or leave it out of the client the loop runs',
  );
}

/** The listeners (or other list) the client sets on `param` for every request. */
function clientListeners(client: ChatClient, param: string): unknown[] {
  const value = client.defaultAdvisorParams.get(param);
  return Array.isArray(value) ? value : [];
}

/** An order just inside the client's chat memory advisors and outside its tool loop; undefined when it has no chat memory. */
function insideMemory(client: ChatClient): number | undefined {
  const advisors: unknown = client.advisors;
  if (!Array.isArray(advisors)) return undefined;
  const orders = (placement: string): number[] =>
    advisors.flatMap((a: Partial<PlacedAdvisor>) => (a?.[ADVISOR_PLACEMENT] === placement && typeof a.order === 'number' ? [a.order] : []));
  const memory = orders('once-per-call');
  if (memory.length === 0) return undefined;
  const inner = Math.max(...memory);
  const loop = Math.min(AdvisorOrder.LOWEST_PRECEDENCE, ...orders('tool-loop'));
  return loop - 1 > inner ? loop - 1 : inner + (loop - inner) / 2;
}

/** Whether `message` is an answer asking for one of the `approvals`. */
function asksApproval(message: ModelMessage, approvals: ReadonlySet<string>): boolean {
  return (
    message.role === 'assistant' &&
    Array.isArray(message.content) &&
    message.content.some((p) => p.type === 'tool-approval-request' && approvals.has(p.approvalId))
  );
}

/** Whether the messages call tool `name` — or hold its result: an approved call resumed without a model round. */
function calledTool(messages: readonly ModelMessage[], name: string): boolean {
  return messages.some(
    (m) =>
      (m.role === 'assistant' && Array.isArray(m.content) && m.content.some((p) => p.type === 'tool-call' && p.toolName === name)) ||
      (m.role === 'tool' && m.content.some((p) => p.type === 'tool-result' && p.toolName === name)),
  );
}

/** `text` ending with exactly one full stop. */
function sentence(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === '.' || text[end - 1]!.trim() === '')) end -= 1;
  return `${text.slice(0, end)}.`;
}

/**
 * The output of the last successful call of the finish tool in the turn so far
 * (`inflight`), as text; undefined when it has not run, or failed.
 */
function finishToolOutput(
  inflight: readonly ModelMessage[],
  results: ReadonlyMap<string, { output: unknown; isError: boolean }>,
  name: string,
): string | undefined {
  let output: string | undefined;
  for (const m of inflight) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) {
      if (p.type !== 'tool-result' || p.toolName !== name) continue;
      // A call without a heard result ran before a pause for approval, in the run's earlier leg.
      const done = results.get(p.toolCallId) ?? resultOutput(p);
      if (done.isError) continue;
      output = typeof done.output === 'string' ? done.output : (JSON.stringify(done.output) ?? '');
    }
  }
  return output;
}

/**
 * What a turn that did not finish leaves in the transcript: the rounds that
 * happened, and, when the last answer asked for tools, a result for every call
 * that has none yet — the one it got, an `execution-denied` result when the
 * caller denied it, or an error result saying why it never finished — so the
 * conversation stays well-formed and can be continued.
 */
function unfinishedTurn(
  before: readonly ModelMessage[],
  inflight: readonly ModelMessage[],
  results: ReadonlyMap<string, { output: unknown; isError: boolean }>,
  reason: string,
): ModelMessage[] {
  const transcript = [...before, ...inflight];
  let at = transcript.length - 1;
  while (at >= 0 && transcript[at]!.role !== 'assistant') at -= 1;
  const assistant = transcript[at];
  if (assistant === undefined || !Array.isArray(assistant.content)) return [...inflight];
  const answered = new Set<string>();
  const denied = new Map<string, string | undefined>();
  for (const m of transcript.slice(at + 1)) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) {
      if (p.type === 'tool-result') answered.add(p.toolCallId);
      else if (p.type === 'tool-approval-response' && !p.approved) denied.set(p.approvalId, p.reason);
    }
  }
  const approvalOf = new Map<string, string>();
  for (const p of assistant.content) if (p.type === 'tool-approval-request') approvalOf.set(p.toolCallId, p.approvalId);
  const open = assistant.content.filter((p): p is ToolCallPart => p.type === 'tool-call' && !answered.has(p.toolCallId));
  if (open.length === 0) return [...inflight];
  const content: ToolResultPart[] = open.map((c) => {
    const approvalId = approvalOf.get(c.toolCallId);
    if (approvalId !== undefined && denied.has(approvalId)) {
      const why = denied.get(approvalId);
      return { type: 'tool-result', toolCallId: c.toolCallId, toolName: c.toolName, output: { type: 'execution-denied', ...(why ? { reason: why } : {}) } };
    }
    const done = results.get(c.toolCallId);
    const call = { toolCallId: c.toolCallId, toolName: c.toolName, input: c.input, rawInput: '' };
    const outcome = { call, output: done?.output ?? `The call did not finish: ${sentence(reason)}`, isError: done?.isError ?? true, returnDirect: false };
    return (toolResultMessage([outcome]).content as ToolResultPart[])[0]!;
  });
  return [...inflight, { role: 'tool', content }];
}

/** Why a run ended at its model-call limit. */
function usedAllCalls(limit: number): string {
  return limit === 1 ? 'the run used its one model call' : `the run used all ${limit} model calls`;
}

/** A cost limit as it was set (`$0.05`), in fixed notation also where JavaScript writes an exponent (`$1e-9`). */
function limitUsd(usd: number): string {
  return /e/i.test(String(usd)) ? formatUsd(usd) : `$${usd}`;
}

/** A time limit as people read it: `800 ms` below a second, `600 s` from one (governor run's --timeout is in seconds). */
function durationText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(3))} s`;
}
