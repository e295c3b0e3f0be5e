import type { ChatCompletionRequestBody } from './recorded-request.ts';
import type { ScriptedTurn } from './scripted-turn.ts';

/** Rough characters per token of English text; good enough to make token growth look real. */
const CHARS_PER_TOKEN = 4;

function tokensFor(characters: number): number {
  return Math.ceil(characters / CHARS_PER_TOKEN);
}

function contentCharacters(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content as unknown[]) {
    if (typeof part === 'object' && part !== null) total += partCharacters(part as Record<string, unknown>);
  }
  return total;
}

/**
 * One content part: its text, or (Anthropic's Messages API, which puts tool
 * traffic in the content) a `tool_use` part's name and input and a
 * `tool_result` part's content, so that tool results grow the prompt there as
 * they do in the OpenAI formats.
 */
function partCharacters(part: Record<string, unknown>): number {
  const text = part['text'];
  if (typeof text === 'string') return text.length;
  if (part['type'] === 'tool_use') {
    const name = part['name'];
    const input = part['input'];
    return (typeof name === 'string' ? name.length : 0) + (input === undefined ? 0 : JSON.stringify(input).length);
  }
  if (part['type'] === 'tool_result') return contentCharacters(part['content']);
  return 0;
}

function toolCallCharacters(toolCalls: unknown): number {
  if (!Array.isArray(toolCalls)) return 0;
  let total = 0;
  for (const call of toolCalls as unknown[]) {
    const fn = typeof call === 'object' && call !== null ? (call as Record<string, unknown>)['function'] : undefined;
    if (typeof fn !== 'object' || fn === null) continue;
    const { name, arguments: args } = fn as Record<string, unknown>;
    if (typeof name === 'string') total += name.length;
    if (typeof args === 'string') total += args.length;
  }
  return total;
}

/**
 * Estimates prompt tokens as ceil(characters / 4) over the text of every message
 * (content and tool call names/arguments, tool results) and the top-level
 * `system` of an Anthropic Messages request, so that the estimate grows with
 * the conversation the way a real provider's count does.
 */
function estimatePromptTokens(body: ChatCompletionRequestBody): number {
  // Anthropic's Messages API sends the system prompt beside the messages, not as one of them.
  let characters = contentCharacters(body['system']);
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    characters += contentCharacters(message.content) + toolCallCharacters(message.tool_calls);
  }
  return tokensFor(characters);
}

/** Estimates completion tokens as ceil(characters / 4) over the answer text and the tool arguments sent. */
function estimateCompletionTokens(text: string, toolArguments: readonly string[]): number {
  return tokensFor(toolArguments.reduce((sum, args) => sum + args.length, text.length));
}

/** Token counts of one answer, as they go on the wire. */
export interface TurnUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number | undefined;
}

/** Scripted numbers where given, estimates for the rest (from the request body: its messages, and an Anthropic `system`). */
export function resolveTurnUsage(turn: ScriptedTurn, body: ChatCompletionRequestBody, text: string, toolArguments: readonly string[]): TurnUsage {
  return {
    promptTokens: turn.usage?.promptTokens ?? estimatePromptTokens(body),
    completionTokens: turn.usage?.completionTokens ?? estimateCompletionTokens(text, toolArguments),
    cachedTokens: turn.usage?.cachedTokens,
  };
}
