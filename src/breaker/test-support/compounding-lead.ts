import assert from 'node:assert/strict';
import { escalations } from '../../e2e/recorded-run.ts';
import { ScriptedModelServer } from '../../testing/index.ts';
import type { AgentBreaker } from '../agent-breaker.ts';
import { TokenDriftError } from '../breaker-errors.ts';
import type { BreakerEventRecord } from '../breaker-events.ts';

/**
 * The lead's prompt tokens, round by round: each round ≥ 1.35× the one
 * before, from past the drift floor. On its own the lead trips token drift at
 * its 4th round (10k → 14k → 19k → 26k) and is stopped at its 5th.
 */
export const LEAD_PROMPTS = [10_000, 14_000, 19_000, 26_000, 36_000, 50_000, 70_000, 98_000, 137_000, 192_000, 269_000, 377_000];

/** The researcher's prompt tokens: its own small context, the task and nothing else. */
const RESEARCHER_PROMPT = 1_200;

/** The lead's tasks for its researcher: different subjects, so that only the lead's growing context is wrong. */
const TASKS = [
  'Summarise the retry policy of the payments service.',
  'List the open incidents for the search cluster.',
  'Which teams own the onboarding emails?',
  'Describe how invoices are numbered in the ledger.',
  'Find the deadline of the data-retention audit.',
  'What changed in the mobile release train last quarter?',
  'Name the vendors behind the fraud scoring model.',
  'Explain the rollback steps for the pricing database.',
  'Who approves exceptions to the travel policy?',
  'Check which regions run the legacy queue workers.',
  'Report the uptime target of the status page.',
  'Collect the open questions from the warehouse migration.',
];

/** The researcher's answers, one per task, as different as the tasks. */
const ANSWERS = [
  'Payments retries three times with jittered backoff, then parks the charge.',
  'Two incidents are open on search: a hot shard in eu-west and a stuck reindex.',
  'Growth owns the onboarding emails; lifecycle marketing edits their copy.',
  'Invoices take the year, the entity code and a six-digit counter.',
  'The retention audit closes on the last Friday of March.',
  'Mobile moved from weekly to fortnightly trains and added a staged rollout.',
  'Fraud scores come from two vendors, one for cards and one for wallets.',
  'Pricing rolls back by restoring the snapshot and replaying the change log.',
  'Finance directors approve travel exceptions above the regional cap.',
  'Legacy queue workers still run in us-east and ap-south.',
  'The status page promises 99.95% monthly uptime.',
  'Open: the cut-over date, the label printer drivers and the returns flow.',
];

/**
 * A stand-in model for a lead whose context compounds round after round and
 * that delegates a new task to its researcher (a `research` tool that runs an
 * agent of its own) in each round; and for the researcher, which answers its
 * task at once from a small prompt. Usage is scripted: `LEAD_PROMPTS[n]` for
 * the lead's round n (counted by the tool results it has read), `RESEARCHER_PROMPT`
 * for every round of the researcher. `argument`: the name of the tool's one
 * argument, the task.
 */
export function compoundingLeadServer(argument = 'task'): Promise<ScriptedModelServer> {
  const isLead = (request: { body: { tools?: unknown } }) =>
    ((request.body.tools ?? []) as { function?: { name?: string } }[]).some((t) => t.function?.name === 'research');
  return new ScriptedModelServer({
    script: (request) => {
      const { messages } = request.body;
      if (isLead(request)) {
        const round = messages.filter((m) => m.role === 'tool').length;
        return {
          toolCalls: [{ name: 'research', arguments: { [argument]: TASKS[round % TASKS.length] } }],
          usage: { promptTokens: LEAD_PROMPTS[Math.min(round, LEAD_PROMPTS.length - 1)]!, completionTokens: 40 },
        };
      }
      // Read from every user message: a steer for the session may come after the task.
      const asks = JSON.stringify(messages.filter((m) => m.role === 'user').map((m) => m.content));
      const asked = TASKS.findIndex((t) => asks.includes(t));
      return { text: ANSWERS[Math.max(asked, 0)]!, usage: { promptTokens: RESEARCHER_PROMPT, completionTokens: 30 } };
    },
  }).start();
}

/**
 * Asserts how a door met the compounding lead: steered, then stopped, for
 * token drift on the lead's own rounds (none of the researcher's among
 * them), the researcher having run between every two of the lead's rounds,
 * and its rounds still counted as the session's.
 */
export async function assertLeadDriftCaught(
  error: unknown,
  events: readonly BreakerEventRecord[],
  breaker: AgentBreaker,
  sessionId: string,
  delegations: number,
): Promise<void> {
  assert.ok(TokenDriftError.isInstance(error), `expected TokenDriftError, got ${String(error)}`);
  assert.deepEqual(escalations(events), ['token_drift:steer', 'token_drift:stop']);
  const evidence = events.flatMap((e) => (e.type === 'escalation' ? [e.evidence?.promptTokens] : []));
  assert.deepEqual(evidence, [LEAD_PROMPTS.slice(0, 4), LEAD_PROMPTS.slice(1, 5)], "the lead's own rounds, with none of the researcher's");
  assert.equal(delegations, 4, 'the researcher ran between every two rounds of the lead');
  assert.equal((await breaker.snapshot(sessionId)).counters.modelCalls, 9);
}
