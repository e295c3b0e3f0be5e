import type { AgentLoopEvent, AgentLoopResult } from '../harness/agent-loop.ts';
import { formatUsd } from '../harness/format-usd.ts';
import { totalTokens, type Usage } from '../model/usage.ts';
import { REDACTED, redact } from '../redaction/redact.ts';

/** Where CLI output goes. */
export interface CliIO {
  /** Where `-` (standard input) is read from, e.g. `governor replay -`. @default process.stdin */
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout: { write(text: string): boolean; isTTY?: boolean };
  readonly stderr: { write(text: string): boolean; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

const n = (value: number | undefined): string => (value === undefined ? '?' : value.toLocaleString('en-US'));
const usd = (value: number | 'unknown'): string => (value === 'unknown' ? 'cost unknown' : formatUsd(value));
/**
 * `text` redacted, on one line and at most `max` characters. Redacted whole
 * first: a secret cut short no longer matches its rule (a private key without
 * its END line, a token missing its tail) and would be printed in part. A cut
 * never splits a `[REDACTED]` marker: it ends before the marker instead.
 */
export function clip(text: string, max = 90): string {
  const one = redact(text).replace(/\s+/g, ' ').trim();
  if (one.length <= max) return one;
  let end = max - 1;
  const marker = one.lastIndexOf(REDACTED, end - 1);
  if (marker !== -1 && marker + REDACTED.length > end) end = marker;
  return `${one.slice(0, end).trimEnd()}…`;
}

/** Formats tokens of a usage as "12,345 tokens". */
export function formatTokens(usage: Usage): string {
  return `${n(totalTokens(usage))} tokens`;
}

/** A progress line for each loop event; `breakerState` is read when a call ends. */
export function progressLine(event: AgentLoopEvent, breakerState: () => string | undefined): string | undefined {
  switch (event.type) {
    case 'invocation-end': {
      const state = breakerState();
      const calls = redact(event.toolCalls.map((c) => c.toolName).join(', '));
      return (
        `#${event.invocation} model call: ${n(event.usage.inputTokens)} in / ${n(event.usage.outputTokens)} out` +
        ` | so far ${formatTokens(event.totalUsage)}, ${usd(event.costUsd)}` +
        (state ? ` | breaker ${state}` : '') +
        (calls ? ` -> ${calls}` : event.text ? ` -> "${clip(event.text, 50)}"` : '')
      );
    }
    case 'tool-call-end': {
      const args =
        typeof event.args === 'object' && event.args !== null && 'command' in event.args ? String(event.args.command) : (JSON.stringify(event.args) ?? '');
      // Redacted before the first line is taken: a secret spanning lines (a private key) is matched whole.
      const first = typeof event.result === 'string' ? (redact(event.result).split('\n')[0] ?? '') : (JSON.stringify(event.result) ?? '');
      // "->", as the model call's line: "=>" after a command ending in `pwd` or `credentials` reads to the log's
      // redaction pass as an assignment, and the result, redacted already, went whole.
      return `   ${redact(event.toolName)} ${clip(args, 60)}  ->  ${clip(first, 60)} (${Math.round(event.durationMs)} ms)`;
    }
    case 'tool-call-error':
      return `   ${redact(event.toolName)} failed: ${clip(String(event.error))}`;
    case 'tool-call-refused':
      return `   ${redact(event.toolName)} not run: ${clip(event.message)}`;
    case 'retry':
      // A 2xx status is that of an answer that broke off: naming it would read as if the server had answered well.
      return `   model call #${event.invocation} failed${event.statusCode === undefined || event.statusCode < 300 ? '' : ` (HTTP ${event.statusCode})`}, retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s: ${clip(event.error instanceof Error ? event.error.message : String(event.error), 60)}`;
    case 'continuation':
      return `   (continuation turn ${event.turn}: the model answered without finishing)`;
    default:
      return undefined;
  }
}

/** The one-screen summary of a run. */
export function summaryLines(result: AgentLoopResult, label: string): string[] {
  return [
    `Result: ${result.status}${result.reason ? ` (${result.reason})` : ''}`,
    `Model: ${label}`,
    `Model calls: ${result.invocations}   turns: ${result.turns}   tool calls: ${result.toolCalls}`,
    `Tokens: ${n(result.usage.inputTokens)} in, ${n(result.usage.outputTokens)} out (${formatTokens(result.usage)})   cost: ${result.costUsd === 'unknown' ? 'unknown' : formatUsd(result.costUsd)}`,
    `Time: ${(result.durationMs / 1000).toFixed(1)} s`,
    ...(result.output ? [`Output: ${clip(result.output, 200)}`] : []),
  ];
}
