import type { ModelMessage } from 'ai';
import type { AdvisorChain } from '../chat/advisor.ts';
import { placementOf } from '../chat/advisor-placement.ts';
import { CALL_SESSION_ID, sessionIdOf } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatResponse, ChatStreamEvent, ToolCallRequest } from '../chat/chat-response.ts';
import { cachedPrice, priceUsage } from '../model/pricing.ts';
import type { Usage } from '../model/usage.ts';
import { telemetrySettings } from '../telemetry/telemetry-options.ts';
import type { BreakerDecision } from './breaker-decision.ts';
import type { BreakerEvent, ProposedToolCall } from './breaker-event.ts';
import type { BreakerWarningCode } from './breaker-events.ts';
import type { ResolvedAgentBreakerOptions } from './breaker-options.ts';
import { providerCalls } from './hosted-calls.ts';
import { observeRound } from './observe-round.ts';
import { steerNote } from './door-session.ts';

/** What the advisor needs from the breaker engine. */
export interface BreakerEngine {
  readonly name: string;
  readonly options: ResolvedAgentBreakerOptions;
  checkModelCall(sessionId: string): Promise<BreakerDecision>;
  checkToolCall(sessionId: string, call: ProposedToolCall): Promise<BreakerDecision>;
  /** Observes an event whose stop the advisor throws at once. */
  observe(sessionId: string, event: BreakerEvent): Promise<BreakerDecision>;
  /** Whether the current code runs inside a tool call the breaker governs in session `sessionId` (see `insideToolOf`). */
  insideTool(sessionId: string): boolean;
  /** The steers for the next round where the code runs: inside a governed tool call of the session, only those decided inside it. */
  takeSteers(sessionId: string): string[];
  /** Queues what a steer or block decided on a finished round tells the model in the next round of the same agent (inside a tool call: a sub-agent's). */
  queueSteer(sessionId: string, decision: BreakerDecision): void;
  toError(decision: BreakerDecision, sessionId: string): Error;
  /** A `debug` event for listeners. */
  debug(sessionId: string, message: string): void;
  /**
   * A `warning` event with `code`, once per breaker and `key`. `unpricedModel`: the
   * warning says that this model's rounds cannot be priced (the breaker's
   * health lists it as it is: the key is no place to read it back from, a
   * model id may hold ':').
   */
  warnOnce(sessionId: string, code: BreakerWarningCode, key: string, message: string, unpricedModel?: string): void;
}

/** Context key: set once the per-call session has been announced. */
const ANNOUNCED = 'governor.breaker.callSessionAnnounced';

/**
 * What the model calls made beneath the breaker for this round spent: the
 * response's `totalUsage`, which sums every call of the round (the re-asks of
 * a validation advisor inside the breaker; outside the tool loop, every round
 * of the call, each once), with the last call's own count where the sum is
 * unknown.
 */
function spentIn(response: ChatResponse): Usage {
  const { usage, totalUsage } = response;
  return {
    inputTokens: totalUsage.inputTokens ?? usage.inputTokens,
    outputTokens: totalUsage.outputTokens ?? usage.outputTokens,
    cachedInputTokens: totalUsage.cachedInputTokens ?? usage.cachedInputTokens,
  };
}

/**
 * USD of one round, all its model calls, priced with the request's price
 * table (the telemetry `prices`, which `AgentLoop` passes on) and the model
 * id the response names. A cost budget on a model without a price is
 * reported, not silently off.
 */
function roundCost(engine: BreakerEngine, sessionId: string, request: ChatClientRequest, response: ChatResponse): number | undefined {
  const settings = telemetrySettings(request.context);
  const modelId = settings.priceModelId ?? response.modelId;
  const price = cachedPrice(modelId, settings.prices);
  const usd = price === undefined ? undefined : priceUsage(spentIn(response), price).usd;
  if (typeof usd === 'number') return usd;
  if (engine.options.budget.maxCostUsd !== undefined) {
    const why = price === undefined ? `model "${modelId}" has no price` : `model "${modelId}" reported no token counts`;
    engine.warnOnce(
      sessionId,
      'cost_not_enforceable',
      `cost:${modelId}:${price === undefined}`,
      `budget.maxCostUsd is not enforceable: ${why}; pass prices for it (telemetry prices or AgentLoop prices).`,
      modelId,
    );
  }
  return undefined;
}

/**
 * Judges one finished model round: records it, then judges each tool call it
 * asks for before the ToolCallAdvisor runs it. Throws on a stop. A model-level
 * verdict (budget wrap-up, token drift, repeated text) rides on the round's
 * tool calls when it has some, and otherwise waits for the next round.
 */
async function judgeRound(engine: BreakerEngine, sessionId: string, request: ChatClientRequest, response: ChatResponse): Promise<ChatResponse> {
  const costUsd = roundCost(engine, sessionId, request, response);
  const spent = spentIn(response);
  const spentTokens = spent.inputTokens === undefined && spent.outputTokens === undefined ? undefined : (spent.inputTokens ?? 0) + (spent.outputTokens ?? 0);
  const answer = {
    kind: 'model' as const,
    // Token drift reads the prompt of the round as the model last saw it; the budget counts every call of the round.
    promptTokens: response.usage.inputTokens ?? null,
    completionTokens: response.usage.outputTokens ?? null,
    ...(spentTokens === undefined ? {} : { spentTokens }),
    text: response.text,
    ...(costUsd === undefined ? {} : { costUsd }),
    // A ChatClient run by a tool of the session's own tool loop is a sub-agent.
    ...(engine.insideTool(sessionId) ? { delegated: true } : {}),
  };
  const round = await observeRound(engine, sessionId, answer, providerCalls(response.content));
  for (const verdict of round.hosted) engine.queueSteer(sessionId, verdict);
  if (round.stop !== undefined) throw engine.toError(round.stop, sessionId);
  const model = round.answer;
  const verdict = model.action === 'block' || model.action === 'steer' ? model : undefined;
  if (response.toolCalls.length === 0) {
    if (verdict !== undefined) engine.queueSteer(sessionId, verdict);
    return response;
  }
  const judged: ToolCallRequest[] = [];
  for (const call of response.toolCalls) {
    let decision = await engine.checkToolCall(sessionId, { tool: call.toolName, args: call.input });
    if (decision.action === 'stop') throw engine.toError(decision, sessionId);
    if (decision.action === 'allow' && verdict !== undefined) decision = verdict;
    if (decision.action === 'block' || decision.action === 'steer') {
      judged.push({ ...call, intervention: { action: decision.action, message: decision.message ?? 'Repeated call refused.', source: engine.name } });
      // The caller runs a tool without `execute` and sends its result back: the steer goes with the round that reads it.
      if (decision.action === 'steer' && isCallersTool(request, call.toolName)) engine.queueSteer(sessionId, decision);
    } else {
      judged.push(call);
    }
  }
  return { ...response, toolCalls: judged };
}

/** Whether the request declares `toolName` without `execute`: a tool its caller runs (a client-side tool). */
function isCallersTool(request: ChatClientRequest, toolName: string): boolean {
  const tool = Object.hasOwn(request.tools, toolName) ? request.tools[toolName] : undefined;
  return tool !== undefined && typeof tool.execute !== 'function';
}

/** The AgentBreaker's `adviseCall`: gate, deliver waiting steers, pass on, judge the round. */
export async function breakerAdviseCall(engine: BreakerEngine, request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
  const sessionId = sessionOf(engine, request, chain);
  const advised = await beforeRound(engine, sessionId, request);
  const result = await chain.nextCall(advised);
  return { ...result, response: await judgeRound(engine, sessionId, advised, result.response) };
}

/** The AgentBreaker's `adviseStream`: the same, on the round's `finish` event. */
export async function* breakerAdviseStream(engine: BreakerEngine, request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
  const sessionId = sessionOf(engine, request, chain);
  const advised = await beforeRound(engine, sessionId, request);
  /** The round's calls the stream has shown, which no tool loop will answer once the round is stopped. */
  const shown: ToolCallRequest[] = [];
  for await (const event of chain.nextStream(advised)) {
    if (event.type !== 'finish') {
      if (event.type === 'tool-call' && event.providerExecuted !== true) shown.push(event.toolCall);
      yield event;
      continue;
    }
    let response: ChatResponse;
    try {
      response = await judgeRound(engine, sessionId, advised, event.response.response);
    } catch (error) {
      // Each shown call is closed as failed, as the AI SDK's stream closes a call that errs: a UI
      // that keeps the history would otherwise send a call without a result with every later message.
      const told = error instanceof Error ? error.message : String(error);
      for (const { toolCallId, toolName } of shown) yield { type: 'tool-result', toolCallId, toolName, output: told, isError: true, error };
      throw error;
    }
    shown.length = 0;
    yield { type: 'finish', response: { ...event.response, response } };
  }
}

function sessionOf(engine: BreakerEngine, request: ChatClientRequest, chain: AdvisorChain): string {
  const sessionId = sessionIdOf(request.context);
  if (chain.advisors.some((a) => placementOf(a) === 'tool-loop')) {
    engine.warnOnce(
      sessionId,
      'advisor_order',
      'order',
      `The ${engine.name} runs outside the tool loop (its order ${String(engine.options.order)} is not greater than the tool loop's): it judges one round per call, not every round.`,
    );
  }
  if (request.context.get(CALL_SESSION_ID) === sessionId && request.context.get(ANNOUNCED) !== true) {
    request.context.set(ANNOUNCED, true);
    engine.debug(
      sessionId,
      'The request names no conversation id (CONVERSATION_ID): this call is judged as a session of its own. Give an id to share breaker state across calls.',
    );
  }
  return sessionId;
}

/**
 * Gate before a model round, and the one place where steering reaches the
 * model: every message waiting for this agent in the session (decided on an
 * observed event or on an earlier round without tool calls; for a sub-agent
 * run by a tool of the session, only those decided while the call runs) and
 * the budget's wrap-up notice go into this round's request as one user
 * message at its end. The previous round's tool results need no reading
 * here: the ToolCallAdvisor's observation point reported each one as it
 * finished, so a stop decided on a result has already opened the breaker and
 * this gate throws it.
 */
async function beforeRound(engine: BreakerEngine, sessionId: string, request: ChatClientRequest): Promise<ChatClientRequest> {
  const gate = await engine.checkModelCall(sessionId);
  if (gate.action === 'stop') throw engine.toError(gate, sessionId);
  const steers = engine.takeSteers(sessionId);
  if (gate.action === 'steer' && gate.message && !steers.includes(gate.message)) steers.push(gate.message);
  if (steers.length === 0) return request;
  const note: ModelMessage = { role: 'user', content: steerNote(steers) };
  return { ...request, messages: [...request.messages, note] };
}
