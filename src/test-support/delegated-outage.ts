import assert from 'node:assert/strict';
import { ErrorLoopError } from '../breaker/breaker-errors.ts';
import type { BreakerEventRecord } from '../breaker/breaker-events.ts';
import type { BreakerCounters } from '../breaker/breaker-state.ts';
import { escalations } from '../e2e/recorded-run.ts';
import { ScriptedModelServer } from '../testing/index.ts';

/** The lead's tasks for its researcher: the same lookup, worded anew each time. */
export const DELEGATED_TASKS = [
  'Find invoice inv-9.',
  'What does the customer owe on inv-9? Check billing.',
  'Billing may be back now: read inv-9 again and report its total.',
  'Try once more to fetch the amount due of invoice inv-9 from the billing records.',
  'Last try: get the inv-9 invoice and tell me every line item.',
  'Please retrieve inv-9, I need the balance for the customer call.',
];

/**
 * A stand-in model for a lead that delegates the same lookup to its
 * researcher (a `lookup_invoice` tool that runs an agent of its own) with a
 * task from {@link DELEGATED_TASKS} each time, and for the researcher, which
 * calls `get_invoice` and then reports the billing service down.
 */
export function delegatedOutageServer(): Promise<ScriptedModelServer> {
  const isLead = (request: { body: { tools?: unknown } }) =>
    ((request.body.tools ?? []) as { function?: { name?: string } }[]).some((t) => t.function?.name === 'lookup_invoice');
  return new ScriptedModelServer({
    script: (request) => {
      const { messages } = request.body;
      if (isLead(request)) {
        const asked = messages.filter((m) => m.role === 'tool').length;
        return { toolCalls: [{ name: 'lookup_invoice', arguments: { task: DELEGATED_TASKS[asked % DELEGATED_TASKS.length] } }] };
      }
      return messages.at(-1)?.role === 'tool' ? { text: 'The billing service is down.' } : { toolCalls: [{ name: 'get_invoice', arguments: { id: 'inv-9' } }] };
    },
  }).start();
}

/**
 * Asserts how a door met the delegated outage: the task the lead wrote is no
 * user turn, the outage gets its five attempts across delegations and is
 * steered, blocked, then stopped, and the researcher's rounds count as the
 * session's. The stop reaches the lead's caller as the category's error,
 * whichever door saw it.
 */
export function assertDelegatedOutageCaught(run: {
  readonly error: unknown;
  readonly events: readonly BreakerEventRecord[];
  readonly lookups: number;
  readonly counters: BreakerCounters;
}): void {
  const { error, events, lookups, counters } = run;
  assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
  assert.equal(error.category, 'error_loop');
  assert.equal(error.evidence?.['transient'], true);
  assert.equal(counters.userEvents, 1, "only the user's question is a user turn, not the tasks the lead wrote");
  assert.equal(lookups, 5, 'an outage gets its five attempts, across delegations');
  assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
  // The researcher's rounds are the session's: its spend counts against the session's budget.
  assert.ok(counters.modelCalls > 2 * lookups, `the researcher's rounds are counted (${counters.modelCalls})`);
}
