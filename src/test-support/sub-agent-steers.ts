import assert from 'node:assert/strict';
import type { RecordedRequest } from '../testing/index.ts';

/** The lead's one tool, which runs the researcher. */
export const DELEGATE = 'research';

/** The researcher's prompt tokens, round by round: its own context compounds (it steers at its 4th round). */
export const RESEARCHER_PROMPTS = [10_000, 14_000, 19_000, 26_000];

/** Whether a request is the lead's: it declares the tool that runs the researcher. */
export function isLead(request: RecordedRequest): boolean {
  return ((request.body.tools ?? []) as { function?: { name?: string } }[]).some((t) => t.function?.name === DELEGATE);
}

/** Whether a request carries a steer of the breaker. */
export function hasSteer(request: RecordedRequest): boolean {
  return JSON.stringify(request.body).includes('[AgentBreaker]');
}

/** What a test of the researcher's steer with `rounds` rounds shows (see {@link assertResearcherSteerStayed}). */
export function researcherSteerCase(rounds: 4 | 5): string {
  return rounds === 5
    ? "the steer on the researcher's 4th round reaches its 5th call, not the lead"
    : "the steer on the researcher's last round ends with it, and does not reach the lead";
}

/**
 * Asserts that the steer decided on the researcher's 4th round stayed with it:
 * its 5th call carries it (when it made one, `rounds` 5), no other call of
 * it does, and no call of the lead.
 */
export function assertResearcherSteerStayed(requests: readonly RecordedRequest[], rounds: 4 | 5): void {
  const researcher = requests.filter((r) => !isLead(r));
  assert.equal(researcher.length, rounds);
  assert.deepEqual(
    researcher.map(hasSteer),
    RESEARCHER_PROMPTS.map(() => false).concat(rounds === 5 ? [true] : []),
    "the researcher's 5th call, and only it, carries the steer",
  );
  assert.ok(!requests.filter(isLead).some(hasSteer), 'no call of the lead carries it');
}
