import type { BreakerSessionState, ToolRecord } from '../breaker-state.ts';
import { compareFingerprints } from '../similarity/args-fingerprint.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';
import { REJECTED_REQUEST, STATE_CHANGE, type ToolProposal } from './tool-record.ts';

/** Argument similarity above which a rejected call's successor is the same request reworded. */
const REWORDED = 0.5;

/**
 * Error loop: has this call (near-identical arguments) failed with the same
 * normalised error on each of its latest attempts, `maxRepeats - 1` times (or
 * `maxTransientRepeats - 1` for an outage)?
 *
 * Reads and lookups in between do not clear the evidence — they cannot make a
 * rejected request valid — but a successful state-changing action does (an
 * edit before re-running a test), as does a search that retrieved documents
 * not retrieved before (a lookup within the page just opened is a new
 * request however alike its words), and a success or a different error of
 * the call itself. When the tool rejected the request itself as malformed
 * (a missing or invalid parameter), nothing else done in between clears the
 * evidence, not even other requests of the same tool that worked: only a
 * changed request can fix it. A user turn clears it only for outages, or when
 * `resetOnUserEvent` is set. A request reworded on every attempt and
 * rejected with the very same error each time is a loop one attempt later.
 */
export function detectErrorLoop(state: BreakerSessionState, proposal: ToolProposal, ctx: DetectorContext): Detection | null {
  const base = ctx.options.errorLoop;
  const own = base.perTool[proposal.tool];
  if (!base.enabled || own?.enabled === false) return null;
  const threshold = own?.similarity ?? base.similarity;

  const news = latestRetrievedNews(state);
  const chain: ToolRecord[] = [];
  let minSimilarity = 1;
  // Until the latest attempt is found it is not known whether it was rejected as malformed: what was passed over is noted.
  // Most sessions have no such rejection of this tool, and then the first change ends the search as before.
  const mayBeRejected = state.tools.some((t) => (t.p & REJECTED_REQUEST) !== 0 && t.t === proposal.tool);
  let passedChange = false;
  for (let i = state.tools.length - 1; i >= 0; i--) {
    const record = state.tools[i]!;
    const afterUser = record.s > state.userSeq;
    if (!afterUser && (base.resetOnUserEvent || chain[0]?.e === 2)) break;
    // A request rejected as malformed stays so whatever else is done: only changing the request can fix it.
    const rejected = chain.length === 0 ? mayBeRejected : (chain[0]!.p & REJECTED_REQUEST) !== 0;
    if (record.t !== proposal.tool) {
      if ((record.p & STATE_CHANGE) !== 0) {
        if (!rejected) break;
        passedChange = true;
      }
      continue;
    }
    if (record.e === 0) {
      // Another request of the same tool that worked (a view between failed edits through one editor tool) fixed nothing.
      if (rejected && compareFingerprints(record.a, proposal.fp) < threshold) {
        passedChange = true;
        continue;
      }
      break;
    }
    if (record.s < news) break;
    const similarity = compareFingerprints(record.a, proposal.fp);
    if (similarity < threshold) break;
    if (chain.length === 0 && passedChange && (record.p & REJECTED_REQUEST) === 0) break;
    if (chain.length > 0 && record.r !== chain[0]!.r) break;
    if (!afterUser && record.e === 2) break;
    chain.push(record);
    minSimilarity = Math.min(minSimilarity, similarity);
  }
  if (chain.length === 0) return reworded(state, proposal, (own?.maxRepeats ?? base.maxRepeats) + 1, news);
  const transient = chain[0]!.e === 2;
  const maxRepeats = transient ? (own?.maxTransientRepeats ?? base.maxTransientRepeats) : (own?.maxRepeats ?? base.maxRepeats);
  const repeats = chain.length + 1;
  if (repeats < maxRepeats) return transient ? null : reworded(state, proposal, (own?.maxRepeats ?? base.maxRepeats) + 1, news);
  return {
    category: 'error_loop',
    key: `error_loop:${proposal.tool}:${proposal.fp.h}:${chain.at(-1)!.s}:${repeats}`,
    evidence: {
      detail: `${proposal.tool} failed ${chain.length} times in a row with the same ${transient ? 'transient ' : ''}error and is being tried again with ${minSimilarity === 1 ? 'the same' : 'near-identical'} arguments`,
      pattern: transient ? 'outage' : 'same_error',
      tool: proposal.tool,
      repeats,
      threshold: maxRepeats,
      similarity: round2(minSimilarity),
      similarityThreshold: threshold,
      transient,
    },
  };
}

/** Sequence number of the latest retrieval that brought documents no earlier retrieval in the window brought; 0 if none. */
function latestRetrievedNews(state: BreakerSessionState): number {
  const retrievals = state.retrievals;
  for (let i = retrievals.length - 1; i >= 0; i--) {
    const r = retrievals[i]!.r;
    if (r === null || r === 0) continue;
    let seen = false;
    for (let j = 0; j < i && !seen; j++) seen = retrievals[j]!.r === r;
    if (!seen) return retrievals[i]!.s;
  }
  return 0;
}

/**
 * The same tool rejected `needed - 1` times in a row with the very same error
 * ("Invalid action!", "No Results") while its arguments were reworded (each
 * related to the next), and asked again: rewording a request the environment
 * rejects the same way every time is no progress. One attempt more than for
 * near-identical arguments, since a rewording may fix a request.
 */
function reworded(state: BreakerSessionState, proposal: ToolProposal, needed: number, news: number): Detection | null {
  const chain: ToolRecord[] = [];
  let next = proposal.fp;
  for (let i = state.tools.length - 1; i >= 0 && chain.length < needed - 1; i--) {
    const record = state.tools[i]!;
    if (record.s <= state.userSeq || record.s < news) break;
    if (record.t !== proposal.tool) {
      if ((record.p & STATE_CHANGE) !== 0) break;
      continue;
    }
    if (record.e !== 1 || record.r === 0) break;
    if (chain.length > 0 && record.r !== chain[0]!.r) break;
    if (compareFingerprints(record.a, next) <= REWORDED) break;
    chain.push(record);
    next = record.a;
  }
  if (chain.length + 1 < needed) return null;
  return {
    category: 'error_loop',
    key: `error_loop:${proposal.tool}:reworded:${chain.at(-1)!.s}:${needed}`,
    evidence: {
      detail: `${proposal.tool} was rejected ${chain.length} times in a row with the same error while its arguments were reworded, and is being tried again`,
      pattern: 'same_error_reworded',
      tool: proposal.tool,
      repeats: chain.length + 1,
      threshold: needed,
      transient: false,
    },
  };
}
