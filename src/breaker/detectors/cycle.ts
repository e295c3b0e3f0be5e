import type { BreakerSessionState, ToolRecord } from '../breaker-state.ts';
import { compareFingerprints } from '../similarity/args-fingerprint.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';
import { STATE_CHANGE, type ToolProposal } from './tool-record.ts';

/**
 * Cycle: would this call begin the `repeats`-th round of a short sequence of
 * calls (period 2 to `maxPeriod`) that has already repeated with every step
 * returning what it returned one round earlier? A round in which an action
 * changed something with other arguments than before (an edit whose content
 * changed) is not a repeat. A single call repeating is a spiral, not a cycle,
 * and is left to that detector.
 */
export function detectCycle(state: BreakerSessionState, proposal: ToolProposal, ctx: DetectorContext): Detection | null {
  const { enabled, maxPeriod, repeats, similarity: threshold } = ctx.options.cycle;
  if (!enabled) return null;
  const since: ToolRecord[] = [];
  for (let i = state.tools.length - 1; i >= 0 && since.length < maxPeriod * (repeats - 1); i--) {
    const record = state.tools[i]!;
    if (record.s <= state.userSeq) break;
    since.push(record);
  }
  since.reverse();

  for (let period = 2; period <= maxPeriod; period++) {
    const need = period * (repeats - 1);
    if (since.length < need) break;
    // The last `need` records: since[from + j] is step j.
    const from = since.length - need;
    let minSimilarity = 1;
    let periodic = true;
    for (let j = 0; j < need && periodic; j++) {
      const a = since[from + j]!;
      const later = j + period < need ? since[from + j + period]! : j + period === need ? proposal : undefined;
      if (later === undefined) continue;
      const laterTool = 'tool' in later ? later.tool : later.t;
      const laterFp = 'fp' in later ? later.fp : later.a;
      if (a.t !== laterTool) {
        periodic = false;
        break;
      }
      const similarity = compareFingerprints(a.a, laterFp);
      if (similarity < threshold) periodic = false;
      else if ('r' in later && (later.r !== a.r || later.e !== a.e)) periodic = false;
      // An action that changed something with other arguments than a round earlier (an edit whose content changed) is progress.
      else if ('p' in later && (later.p & STATE_CHANGE) !== 0 && later.a.h !== a.a.h) periodic = false;
      minSimilarity = Math.min(minSimilarity, similarity);
    }
    if (!periodic || !hasDistinctSteps(since, from, period, threshold)) continue;
    const sequence = since.slice(from, from + period).map((s) => s.t);
    return {
      category: 'cycle',
      key: `cycle:${period}:${since[from]!.s}:${proposal.fp.h}`,
      evidence: {
        detail: `the sequence ${sequence.join(' → ')} has repeated ${repeats - 1} times with unchanged results and is starting again`,
        pattern: 'cycle',
        tool: proposal.tool,
        period,
        sequence,
        repeats,
        threshold: repeats,
        similarity: round2(minSimilarity),
        similarityThreshold: threshold,
      },
    };
  }
  return null;
}

/** Whether the `period` records from `records[from]` on are not all one call. */
function hasDistinctSteps(records: readonly ToolRecord[], from: number, period: number, threshold: number): boolean {
  const first = records[from]!;
  for (let i = from + 1; i < from + period; i++) {
    const s = records[i]!;
    if (s.t !== first.t || compareFingerprints(s.a, first.a) < threshold) return true;
  }
  return false;
}
