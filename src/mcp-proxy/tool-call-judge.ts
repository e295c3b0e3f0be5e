import type { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import { thrownText } from '../breaker/thrown-text.ts';
import { stopText } from '../proxy/proxy-judge.ts';
import { asArray, contentText, NOTE_PREFIX, notRunText } from '../proxy/wire-api.ts';

/** A `tools/call` result, as far as the judge needs it. */
export interface ToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  [field: string]: unknown;
}

/** What the MCP client gets instead of running a refused call. */
export function refusedResult(text: string): { content: { type: 'text'; text: string }[]; isError: true } {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * A result as the breaker reads it: its text content, or its structured
 * content when it has no text (the spec lets a tool answer with that alone):
 * a status that changes on each poll is new information, not an empty repeat.
 */
function resultText(result: ToolResultLike): string {
  const text = contentText(asArray(result.content));
  if (text.trim() !== '' || result.structuredContent === undefined) return text;
  return JSON.stringify(result.structuredContent) ?? '';
}

function refusalText(tool: string, decision: BreakerDecision): string {
  if (decision.action === 'stop') return stopText(decision);
  return notRunText(tool, decision.message ?? 'repeated call refused.');
}

/** The breaker's notes for the model on a call that ran: the steer it was let through with, and what recording it decided. */
function notesOf(check: BreakerDecision, seen: BreakerDecision): string {
  const notes: string[] = [];
  if (check.action === 'steer' && check.message !== undefined) notes.push(`${NOTE_PREFIX} ${check.message}`);
  if ((seen.action === 'steer' || seen.action === 'block') && seen.message !== undefined && seen.message !== check.message)
    notes.push(`${NOTE_PREFIX} ${seen.message}`);
  if (seen.action === 'stop') notes.push(stopText(seen));
  return notes.join('\n\n');
}

/**
 * Judges one `tools/call` of an MCP session: refuses a blocked or stopped
 * call (a result with `isError: true` saying why), otherwise runs it, records
 * its result, and adds the breaker's note to the result on a steer. A result
 * with structured content and no text is judged by its structured content.
 * A call that fails (`run` throws, as for a JSON-RPC error answer) is
 * recorded as failed and its error rethrown, the note added to the error's
 * message: the failure stays an error answer, and the model still reads the note.
 *
 * @param signal the client's cancellation of the call: a call that fails
 *   once it is aborted is not recorded (it did not fail; nothing was learned),
 *   unless the client gave up because it waited too long (its SDK's request
 *   timeout cancels with the reason "Request timed out"): that call failed as
 *   an outage does, and a hanging tool retried again and again is an error loop.
 */
export async function judgeToolCall<R extends ToolResultLike>(
  breaker: AgentBreaker,
  sessionId: string,
  tool: string,
  args: unknown,
  run: () => Promise<R>,
  signal?: AbortSignal,
): Promise<R | ReturnType<typeof refusedResult>> {
  const check = await breaker.checkToolCall(sessionId, { tool, args });
  if (check.action === 'block' || check.action === 'stop') return refusedResult(refusalText(tool, check));
  let result: R;
  try {
    result = await run();
  } catch (error) {
    if (signal?.aborted === true) {
      // A call the client cancelled did not fail: nothing was learned of it, and recording it would make cancelling
      // the same call a few times look like an error loop. One it stopped waiting for timed out: that is an outage.
      const reason = cancellationReason(signal.reason);
      if (TIMED_OUT.test(reason))
        await breaker.observe(sessionId, { kind: 'tool_call', tool, args, result: `cancelled by the client: ${reason}`, error: true });
      throw error;
    }
    const seen = await breaker.observe(sessionId, { kind: 'tool_call', tool, args, result: thrownText(error), error: true });
    const notes = notesOf(check, seen);
    // The same error, not a new one: whoever passes it on knows it by identity, and its code and data stay.
    // Reflect.set: one whose message cannot be set (a DOMException's) is passed on as it is.
    if (notes !== '' && error instanceof Error) Reflect.set(error, 'message', `${error.message}\n\n${notes}`);
    throw error;
  }
  const seen = await breaker.observe(sessionId, {
    kind: 'tool_call',
    tool,
    args,
    result: resultText(result),
    error: result.isError === true,
  });
  const notes = notesOf(check, seen);
  if (notes === '') return result;
  return { ...result, content: [...asArray(result.content), { type: 'text', text: notes }] };
}

/** A cancellation's reason that says the client stopped waiting (not that it left: "Connection closed" is no outage). */
const TIMED_OUT = /\btimed? ?out\b|\btimeout\b/i;

/** What a cancellation said, as text: the MCP SDK aborts a cancelled request with the reason the client gave, a string. */
function cancellationReason(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  return reason instanceof Error ? reason.message : '';
}
