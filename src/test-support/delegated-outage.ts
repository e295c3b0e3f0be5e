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
