/**
 * What the door tests read back from a run: the scripted stand-in that loops on
 * one status check, the tool result a recorded request ends with, and the
 * escalations a breaker emitted.
 */
import assert from 'node:assert/strict';
import type { BreakerEventRecord } from '../index.ts';
import { ScriptedModelServer, type RecordedRequest } from '../testing/index.ts';

/** A model that asks for the same status check, with the same arguments, every turn. */
export function spiralServer(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] }],
    onExhausted: 'repeat-last',
  }).start();
}

/** The tool result at the end of a recorded request: what the model got back for its last call. */
export function lastToolResult(request: RecordedRequest | undefined): string {
  assert.ok(request, 'the request reached the stand-in model');
  const last = request.body.messages.at(-1);
  assert.equal(last?.role, 'tool', 'the request ends with a tool result');
  return String(last.content);
}

/** The escalations among the breaker's events, as `category:action`. */
export function escalations(events: readonly BreakerEventRecord[]): string[] {
  return events.flatMap((e) => (e.type === 'escalation' ? [`${e.category}:${e.action}`] : []));
}
