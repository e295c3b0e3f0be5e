import type { ModelMessage, ToolApprovalResponse } from 'ai';
import type { AdvisorContext } from '../chat/advisor-context.ts';

/**
 * What an advisor outside the tool loop (a chat memory advisor) learns of
 * the loop while one call is under way. The loop's side effects happen
 * before the call is over: a call that fails later must still be able to
 * keep the record of what ran, and an approved call must not run twice.
 */
export interface ToolLoopJournal {
  /**
   * Called right before approved calls run, with the caller's answers that
   * approve them. Resolves when they may run; rejects (the loop then runs
   * nothing and the call fails with that error) when they must not, e.g.
   * because another request has already claimed the same approvals.
   */
  claimApprovals(answers: readonly ToolApprovalResponse[]): Promise<void>;
  /**
   * Called each time tools have run, with every message the call has added
   * so far. Each tool call in them has its result (or, for a call waiting
   * for approval, its approval request; a client-side call waits for the
   * caller's result), so they can be stored as they are.
   */
  toolsRan(messages: readonly ModelMessage[]): void;
}

/** Context key of the journals of a call: one per advisor listening. */
const TOOL_LOOP_JOURNALS = 'governor.toolLoop.journals';

/** Registers `journal` for the call whose context this is. */
export function addToolLoopJournal(context: AdvisorContext, journal: ToolLoopJournal): void {
  context.set(TOOL_LOOP_JOURNALS, [...toolLoopJournals(context), journal]);
}

/** The journals registered for the call whose context this is, outermost first. */
export function toolLoopJournals(context: AdvisorContext): readonly ToolLoopJournal[] {
  const journals = context.get(TOOL_LOOP_JOURNALS);
  return Array.isArray(journals) ? (journals as ToolLoopJournal[]) : [];
}
