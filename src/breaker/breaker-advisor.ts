import type { AdvisorChain } from '../chat/advisor.ts';
import { conversationIdOf } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatResponse, ChatStreamEvent, ToolCallRequest } from '../chat/chat-response.ts';
import type { BreakerEvent, ProposedToolCall } from './breaker-event.ts';

/** What the advisor needs from the breaker engine. */
export interface BreakerEngine {
  readonly name: string;
  checkModelCall(sessionId: string): Promise<Decision>;
  checkToolCall(sessionId: string, call: ProposedToolCall): Promise<Decision>;
  observe(sessionId: string, event: BreakerEvent): Promise<Decision>;
}

interface Decision {
  readonly action: 'allow' | 'steer' | 'block' | 'stop';
  readonly message?: string;
}

/**
 * Judges one finished model round: records it, then judges each tool call it
 * asks for before the ToolCallAdvisor runs it. Throws on a stop.
 */
async function judgeRound(
  engine: BreakerEngine,
  sessionId: string,
  response: ChatResponse,
  toError: (d: Decision) => Error,
): Promise<ChatResponse> {
  const model = await engine.observe(sessionId, {
    kind: 'model',
    promptTokens: response.usage.inputTokens ?? null,
    completionTokens: response.usage.outputTokens ?? null,
    text: response.text,
  });
  if (model.action === 'stop') throw toError(model);
  if (response.toolCalls.length === 0) return response;
  const judged: ToolCallRequest[] = [];
  for (const call of response.toolCalls) {
    let decision = await engine.checkToolCall(sessionId, { tool: call.toolName, args: call.input });
    if (decision.action === 'stop') throw toError(decision);
    // A model-level verdict (budget wrap-up, token drift) applies to every call of the round.
    if (decision.action === 'allow' && (model.action === 'block' || model.action === 'steer')) decision = model;
    if (decision.action === 'block' || decision.action === 'steer') {
      judged.push({ ...call, intervention: { action: decision.action, message: decision.message ?? 'Repeated call refused.', source: engine.name } });
    } else {
      judged.push(call);
    }
  }
  return { ...response, toolCalls: judged };
}

/** The AgentBreaker's `adviseCall`: gate, pass on, judge the round. */
export async function breakerAdviseCall(
  engine: BreakerEngine,
  request: ChatClientRequest,
  chain: AdvisorChain,
  toError: (d: Decision) => Error,
): Promise<ChatClientResponse> {
  const sessionId = conversationIdOf(request.context);
  await beforeRound(engine, sessionId, toError);
  const result = await chain.nextCall(request);
  return { ...result, response: await judgeRound(engine, sessionId, result.response, toError) };
}

/** The AgentBreaker's `adviseStream`: the same, on the round's `finish` event. */
export async function* breakerAdviseStream(
  engine: BreakerEngine,
  request: ChatClientRequest,
  chain: AdvisorChain,
  toError: (d: Decision) => Error,
): AsyncIterable<ChatStreamEvent> {
  const sessionId = conversationIdOf(request.context);
  await beforeRound(engine, sessionId, toError);
  for await (const event of chain.nextStream(request)) {
    if (event.type !== 'finish') {
      yield event;
      continue;
    }
    const response = await judgeRound(engine, sessionId, event.response.response, toError);
    yield { type: 'finish', response: { ...event.response, response } };
  }
}

/**
 * Gate before a model round. The previous round's tool results need no
 * reading here: the ToolCallAdvisor's observation point reported each one to
 * the breaker as it finished, so a stop decided on a result has already
 * opened the breaker and this gate refuses the round.
 */
async function beforeRound(engine: BreakerEngine, sessionId: string, toError: (d: Decision) => Error): Promise<void> {
  const gate = await engine.checkModelCall(sessionId);
  if (gate.action === 'stop') throw toError(gate);
}
