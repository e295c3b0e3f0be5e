import type { ToolCallEvent } from '../breaker-event.ts';
import { clip, LIMITS, pushBounded, type BreakerSessionState, type ToolRecord } from '../breaker-state.ts';
import type { ArgsFingerprint } from '../similarity/args-fingerprint.ts';
import { isRejectedRequest, isTransientError, looksLikeError, resultHash } from '../similarity/result-hash.ts';
import type { DetectorContext } from './detection.ts';

/** Progress flag: the result was information not seen before in the session's recent results. */
export const NEW_INFORMATION = 1;
/** Progress flag: a successful action that could change the world (not read-only; new arguments or result). */
export const STATE_CHANGE = 2;
/**
 * Failure flag: the tool rejected the request itself as malformed (a missing
 * or invalid parameter), which nothing but a changed request can fix.
 */
export const REJECTED_REQUEST = 4;

/** A tool call the model asked for, ready to compare with the evidence. */
export interface ToolProposal {
  readonly tool: string;
  readonly fp: ArgsFingerprint;
}

export function proposalOf(tool: string, args: unknown, ctx: DetectorContext): ToolProposal {
  return { tool: clip(tool, LIMITS.name), fp: ctx.fingerprinter.fingerprint(args) };
}

/** The part of the state a recorded tool call changes. */
export type ToolRecordUpdate = Pick<BreakerSessionState, 'tools' | 'seen'>;

/** What the detectors keep of a tool call's result: its hash and how it failed (see {@link ToolRecord}). */
export interface ResultDigest {
  readonly r: number;
  readonly e: 0 | 1 | 2;
  /** 1 when the error rejects the request itself (see {@link isRejectedRequest}); absent otherwise. */
  readonly v?: 1;
}

/** The digest of an executed tool call's result. */
export function digestResult(event: Pick<ToolCallEvent, 'result' | 'error'>): ResultDigest {
  const failed = event.error === true || looksLikeError(event.result);
  const e = !failed ? 0 : isTransientError(event.result) ? 2 : 1;
  return { r: resultHash(event.result), e, ...(e === 1 && isRejectedRequest(event.result) ? { v: 1 as const } : {}) };
}

/** Turns an executed tool call into evidence, judging whether it was progress. */
export function recordToolCall(state: BreakerSessionState, seq: number, proposal: ToolProposal, result: ResultDigest, ctx: DetectorContext): ToolRecordUpdate {
  const { r, e } = result;
  const novel = r !== 0 && !state.seen.includes(r);
  let p = (novel ? NEW_INFORMATION : 0) | (result.v === 1 ? REJECTED_REQUEST : 0);
  if (e === 0 && !ctx.isReadOnly(proposal.tool)) {
    // Only an earlier success with these arguments makes this one a repeat: a create that failed, then succeeds, changed something.
    const repeatedArgs = state.tools.some((t) => t.t === proposal.tool && t.a.h === proposal.fp.h && t.e === 0);
    if (!repeatedArgs || novel) p |= STATE_CHANGE;
  }
  const record: ToolRecord = { s: seq, t: proposal.tool, a: proposal.fp, r, e, p };
  return {
    tools: pushBounded(state.tools, record, ctx.options.windows.tools),
    seen: novel ? pushBounded(state.seen, r, LIMITS.seen) : state.seen,
  };
}
