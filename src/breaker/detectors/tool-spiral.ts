import type { BreakerSessionState, ToolRecord } from '../breaker-state.ts';
import { compareFingerprints } from '../similarity/args-fingerprint.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';
import { NEW_INFORMATION, STATE_CHANGE, type ToolProposal } from './tool-record.ts';

const PROGRESS = NEW_INFORMATION | STATE_CHANGE;

/**
 * Tool-call spiral: would this call be the `maxRepeats`-th near-identical call
 * (the `maxIdenticalRepeats`-th identical one) of the tool whose earlier
 * results all came back the same, with no new information (from any tool, or
 * an informative user turn) since the first of them?
 *
 * Walks back over the evidence: calls of other tools that brought nothing new
 * (a `think`, a repeated lookup) are skipped; anything that brought news ends
 * the chain (so does a successful state-changing action: an edit before the
 * test is re-run), and so does a near-identical call whose result differed (it was
 * progress: the next page, a changed status). Failures are left to the
 * error-loop detector.
 */
export function detectToolSpiral(state: BreakerSessionState, proposal: ToolProposal, ctx: DetectorContext): Detection | null {
  const base = ctx.options.toolSpiral;
  const own = base.perTool[proposal.tool];
  if (!base.enabled || own?.enabled === false) return null;
  const maxRepeats = own?.maxRepeats ?? base.maxRepeats;
  const maxIdentical = own?.maxIdenticalRepeats ?? base.maxIdenticalRepeats;
  const threshold = own?.similarity ?? base.similarity;
  const writes = ctx.isWriting(proposal.tool);

  const chain: ToolRecord[] = [];
  let minSimilarity = 1;
  let examined = 0;
  for (let i = state.tools.length - 1; i >= 0 && examined < base.window; i--) {
    const record = state.tools[i]!;
    if (record.s <= state.userSeq) break;
    if (record.t !== proposal.tool) {
      if ((record.p & PROGRESS) !== 0) break;
      continue;
    }
    examined++;
    if (record.e === 2) continue; // an outage is neither a repeat nor news
    if (record.e === 1) break;
    const similarity = compareFingerprints(record.a, proposal.fp);
    // Every record in the chain returned the same result; a non-empty one repeated lowers the bar.
    const needed = record.r !== 0 ? Math.min(threshold, base.sameResultSimilarity) : threshold;
    if (similarity < needed) {
      if ((record.p & PROGRESS) !== 0) break;
      continue;
    }
    if (chain.length > 0 && record.r !== chain[0]!.r) break;
    // A writing tool's success that changed something with other arguments than this call's (a file written again with
    // one more line fixed) was progress, whatever it answered: only the very same change repeated is a spiral. A tool
    // that may only have read (a shell's grep reworded) is judged by its answer, as above.
    if (writes && (record.p & STATE_CHANGE) !== 0 && record.a.h !== proposal.fp.h) break;
    chain.push(record);
    minSimilarity = Math.min(minSimilarity, similarity);
  }
  const repeats = chain.length + 1;
  const exact = chain.every((r) => r.a.h === proposal.fp.h);
  // The same request with the same answer is the strongest sign: it needs fewer repeats.
  if (repeats < (exact ? Math.min(maxRepeats, maxIdentical) : maxRepeats)) return null;
  return {
    category: 'tool_spiral',
    key: `tool_spiral:${proposal.tool}:${proposal.fp.h}:${chain.at(-1)!.s}:${repeats}`,
    evidence: {
      detail: `${proposal.tool} called ${repeats} times with ${exact ? 'identical' : 'near-identical'} arguments; the last ${chain.length} results were the same`,
      pattern: exact ? 'identical_calls' : 'near_identical_calls',
      tool: proposal.tool,
      repeats,
      threshold: exact ? Math.min(maxRepeats, maxIdentical) : maxRepeats,
      similarity: round2(minSimilarity),
      similarityThreshold: threshold,
      window: base.window,
    },
  };
}
