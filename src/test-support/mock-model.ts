import type { LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';

/** One scripted model answer for unit tests. */
export interface MockTurn {
  readonly text?: string;
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly input: unknown; readonly id?: string }>;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
}

function usage(turn: MockTurn): LanguageModelV4GenerateResult['usage'] {
  return {
    inputTokens: { total: turn.inputTokens ?? 10, noCache: turn.inputTokens ?? 10, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: turn.outputTokens ?? 5, text: turn.outputTokens ?? 5, reasoning: undefined },
  };
}

function callsOf(turn: MockTurn, round: number) {
  return (turn.toolCalls ?? []).map((c, i) => ({
    type: 'tool-call' as const,
    toolCallId: c.id ?? `call-${round}-${i}`,
    toolName: c.name,
    input: typeof c.input === 'string' ? c.input : JSON.stringify(c.input),
  }));
}

/**
 * A MockLanguageModelV4 that plays `turns` in order for both doGenerate and
 * doStream (streams split text into two deltas). Records every call.
 */
export function mockModel(turns: readonly MockTurn[]): MockLanguageModelV4 {
  let round = 0;
  const next = (): MockTurn => {
    const turn = turns[round];
    if (turn === undefined) throw new Error(`mock model script exhausted after ${turns.length} turns`);
    round += 1;
    return turn;
  };
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const turn = next();
      const calls = callsOf(turn, round);
      return {
        content: [...(turn.text ? [{ type: 'text' as const, text: turn.text }] : []), ...calls],
        finishReason: { unified: calls.length > 0 ? 'tool-calls' : 'stop', raw: undefined },
        usage: usage(turn),
        warnings: [],
      };
    },
    doStream: async () => {
      const turn = next();
      const calls = callsOf(turn, round);
      const text = turn.text ?? '';
      const half = Math.ceil(text.length / 2);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (text) {
        parts.push({ type: 'text-start', id: 't' });
        parts.push({ type: 'text-delta', id: 't', delta: text.slice(0, half) });
        if (text.length > half) parts.push({ type: 'text-delta', id: 't', delta: text.slice(half) });
        parts.push({ type: 'text-end', id: 't' });
      }
      parts.push(...calls);
      parts.push({ type: 'finish', usage: usage(turn), finishReason: { unified: calls.length > 0 ? 'tool-calls' : 'stop', raw: undefined } });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}
