import type { ModelMessage, ToolCallPart } from 'ai';
import type { AdvisorChain } from '../chat/advisor.ts';
import { conversationIdOf, type AdvisorContext } from '../chat/advisor-context.ts';
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

const OBSERVED = 'governor.breaker.observedMessages';
const BLOCKED = 'governor.breaker.blockedCalls';

function resultText(output: unknown): { text: string | null; error: boolean } {
  const o = output as { type?: string; value?: unknown } | undefined;
  if (!o || typeof o !== 'object') return { text: null, error: false };
  const error = o.type === 'error-text' || o.type === 'error-json' || o.type === 'execution-denied';
  const value = o.value;
  return { text: typeof value === 'string' ? value : value === undefined ? null : JSON.stringify(value), error };
}

/**
 * Turns the messages that arrived since the breaker last looked into events:
 * the tool results of the previous round.
 */
function newEvents(request: ChatClientRequest, source: string): BreakerEvent[] {
  const { context, messages } = request;
  const seen = context.get(OBSERVED) as number | undefined;
  context.set(OBSERVED, messages.length);
  const events: BreakerEvent[] = [];
  // First round of a call: earlier history was observed by earlier calls of the
  // session, and the ChatClient itself reported the user's turn before any advisor ran.
  if (seen === undefined) return events;
  const blocked = (context.get(BLOCKED) as Set<string> | undefined) ?? new Set<string>();
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages.slice(0, seen)) {
    if (message.role === 'assistant' && Array.isArray(message.content)) {
      for (const part of message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
    }
  }
  for (const message of messages.slice(seen)) {
    if (message.role === 'assistant' && Array.isArray(message.content)) {
      for (const part of message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
    }
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || blocked.has(part.toolCallId)) continue;
      const call = calls.get(part.toolCallId);
      const { text, error } = resultText(part.output);
      // The breaker's own steering note is not part of what the tool returned:
      // counted as a new result, it would hide the very repetition it points out.
      const note = text?.indexOf(`\n\n[${source}] `) ?? -1;
      events.push({ kind: 'tool_call', tool: part.toolName, args: call?.input ?? null, result: note >= 0 ? text!.slice(0, note) : text, error });
    }
  }
  return events;
}


/**
 * Judges one finished model round: records it, then judges each tool call it
 * asks for before the ToolCallAdvisor runs it. Throws on a stop.
 */
async function judgeRound(
  engine: BreakerEngine,
  sessionId: string,
  response: ChatResponse,
  context: AdvisorContext,
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
  const blocked = (context.get(BLOCKED) as Set<string> | undefined) ?? new Set<string>();
  context.set(BLOCKED, blocked);
  const judged: ToolCallRequest[] = [];
  for (const call of response.toolCalls) {
    let decision = await engine.checkToolCall(sessionId, { tool: call.toolName, args: call.input });
    if (decision.action === 'stop') throw toError(decision);
    // A model-level verdict (budget wrap-up, token drift) applies to every call of the round.
    if (decision.action === 'allow' && (model.action === 'block' || model.action === 'steer')) decision = model;
    if (decision.action === 'block' || decision.action === 'steer') {
      if (decision.action === 'block') blocked.add(call.toolCallId);
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
  await beforeRound(engine, sessionId, request, toError);
  const result = await chain.nextCall(request);
  return { ...result, response: await judgeRound(engine, sessionId, result.response, request.context, toError) };
}

/** The AgentBreaker's `adviseStream`: the same, on the round's `finish` event. */
export async function* breakerAdviseStream(
  engine: BreakerEngine,
  request: ChatClientRequest,
  chain: AdvisorChain,
  toError: (d: Decision) => Error,
): AsyncIterable<ChatStreamEvent> {
  const sessionId = conversationIdOf(request.context);
  await beforeRound(engine, sessionId, request, toError);
  for await (const event of chain.nextStream(request)) {
    if (event.type !== 'finish') {
      yield event;
      continue;
    }
    const response = await judgeRound(engine, sessionId, event.response.response, request.context, toError);
    yield { type: 'finish', response: { ...event.response, response } };
  }
}

async function beforeRound(engine: BreakerEngine, sessionId: string, request: ChatClientRequest, toError: (d: Decision) => Error): Promise<void> {
  for (const event of newEvents(request, engine.name)) {
    const decision = await engine.observe(sessionId, event);
    if (decision.action === 'stop') throw toError(decision);
  }
  const gate = await engine.checkModelCall(sessionId);
  if (gate.action === 'stop') throw toError(gate);
}
