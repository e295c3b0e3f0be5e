import type { RetrievalEvent } from '../breaker-event.ts';
import { LIMITS, pushBounded, type BreakerSessionState, type RetrievalRecord } from '../breaker-state.ts';
import { resultSetHash } from '../similarity/result-hash.ts';
import { sketchJaccard, sketchText } from '../similarity/token-sketch.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

/**
 * RAG fixation: `consecutive` retrieval queries in a row (since the last user
 * turn), each near-identical to the one before, whose retrieved documents did
 * not change. Queries that return new documents are exploring, not fixated;
 * when results are not reported, the queries alone decide.
 */
export function judgeRetrieval(
  state: BreakerSessionState,
  event: RetrievalEvent,
  seq: number,
  ctx: DetectorContext,
): { retrievals: readonly RetrievalRecord[]; novel: number | null; detection: Detection | null } {
  const { enabled, consecutive, similarity: threshold } = ctx.options.ragFixation;
  const record: RetrievalRecord = { s: seq, q: sketchText(event.query), r: resultSetHash(event.results) };
  const retrievals = pushBounded(state.retrievals, record, LIMITS.retrievals);
  const novel = record.r !== null && record.r !== 0 && !state.seen.includes(record.r) ? record.r : null;
  if (!enabled) return { retrievals, novel, detection: null };

  let current = record;
  let length = 1;
  let minSimilarity = 1;
  for (let i = state.retrievals.length - 1; i >= 0 && length < consecutive; i--) {
    const previous = state.retrievals[i]!;
    if (previous.s <= state.userSeq) break;
    const similarity = sketchJaccard(previous.q, current.q);
    if (similarity < threshold) break;
    if (previous.r !== null && current.r !== null && previous.r !== current.r) break;
    minSimilarity = Math.min(minSimilarity, similarity);
    length++;
    current = previous;
  }
  if (length < consecutive) return { retrievals, novel, detection: null };
  return {
    retrievals,
    novel,
    detection: {
      category: 'rag_fixation',
      key: `rag_fixation:${seq}`,
      evidence: {
        detail: `${length} retrieval queries in a row were near-identical (similarity ≥ ${round2(minSimilarity)}) and returned the same documents`,
        pattern: 'same_documents',
        repeats: length,
        threshold: consecutive,
        similarity: round2(minSimilarity),
        similarityThreshold: threshold,
      },
    },
  };
}
