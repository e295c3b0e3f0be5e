import assert from 'node:assert/strict';
import type { ChatClientRequestSpec } from '../chat/chat-client.ts';
import type { ChatResponse, ChatStreamEvent } from '../chat/chat-response.ts';

/** `call()` or `stream()`: tests that must hold for both run once per mode. */
export type Mode = 'call' | 'stream';
export const MODES: readonly Mode[] = ['call', 'stream'];

/** Runs a request in either mode; returns the final response, the text the caller got and (streaming) every event. */
export async function runMode(spec: ChatClientRequestSpec, mode: Mode): Promise<{ response: ChatResponse; text: string; events: ChatStreamEvent[] }> {
  if (mode === 'call') {
    const response = await spec.call().chatResponse();
    return { response, text: response.text, events: [] };
  }
  const events: ChatStreamEvent[] = [];
  for await (const event of spec.stream().chatResponse()) events.push(event);
  const finishes = events.filter((e): e is Extract<ChatStreamEvent, { type: 'finish' }> => e.type === 'finish');
  assert.equal(finishes.length, 1, 'a stream ends with exactly one finish event');
  const text = events.map((e) => (e.type === 'text-delta' ? e.text : '')).join('');
  return { response: finishes[0]!.response.response, text, events };
}
