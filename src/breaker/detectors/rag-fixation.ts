import type { RetrievalEvent } from '../breaker-event.ts';
import { LIMITS, pushBounded, type BreakerSessionState, type RetrievalRecord } from '../breaker-state.ts';
import { passageSetHash } from '../similarity/passage-set.ts';
import { textIdentity } from '../similarity/text-identity.ts';
import { sketchHashes, sketchJaccard, sketchOverlap } from '../similarity/token-sketch.ts';
import { stemHashes } from '../similarity/word-stems.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

/**
 * RAG fixation: `consecutive` retrievals in a row (since the last informative
 * user turn) that search for the same thing and retrieve nothing new.
 *
 * Retrieved documents are the stronger evidence. Queries that retrieve other
 * documents are exploring, however alike they read. Queries that retrieve the
 * very same passages (in any order, whatever scores are printed with them)
 * were judged equivalent by the retriever itself, so they need only be
 * related: most of the shorter query's word stems found in the other (a
 * paraphrase such as "webhook retry timeout" / "how are webhooks retried on
 * timeout" shares few exact words). When results are not reported, or nothing
 * was retrieved, the queries alone decide and must be near-identical. Queries
 * that name different things (numbers, paths, file names) are never the same
 * search.
 */
export function judgeRetrieval(
  state: BreakerSessionState,
  event: RetrievalEvent,
  seq: number,
  ctx: DetectorContext,
): { retrievals: readonly RetrievalRecord[]; novel: number | null; detection: Detection | null } {
  const { enabled, consecutive, similarity: nearIdentical, sameDocumentsSimilarity: related } = ctx.options.ragFixation;
  const record: RetrievalRecord = {
    s: seq,
    q: sketchHashes(stemHashes(event.query)),
    r: passageSetHash(event.results),
    k: textIdentity(event.query),
  };
  const retrievals = pushBounded(state.retrievals, record, LIMITS.retrievals);
  const novel = record.r !== null && record.r !== 0 && !state.seen.includes(record.r) ? record.r : null;
  if (!enabled) return { retrievals, novel, detection: null };

  const chain: RetrievalRecord[] = [record];
  let minSimilarity = 1;
  const sameDocuments = record.r !== null && record.r !== 0;
  for (let i = state.retrievals.length - 1; i >= 0 && chain.length < consecutive; i--) {
    const previous = state.retrievals[i]!;
    if (previous.s <= state.userSeq) break;
    if ((previous.k ?? 0) !== record.k) break;
    const reported = previous.r !== null && record.r !== null;
    if (reported && previous.r !== record.r) break;
    // Compared with every query of the chain: rewordings circle one question rather than drift in a line.
    let best = 0;
    for (const later of chain) {
      best = Math.max(best, sameDocuments && reported ? sketchOverlap(previous.q, later.q) : sketchJaccard(previous.q, later.q));
    }
    if (best < (sameDocuments && reported ? related : nearIdentical)) break;
    minSimilarity = Math.min(minSimilarity, best);
    chain.push(previous);
  }
  if (chain.length < consecutive) return { retrievals, novel, detection: null };
  const documents = chain.every((r) => r.r !== null && r.r !== 0);
  return {
    retrievals,
    novel,
    detection: {
      category: 'rag_fixation',
      key: `rag_fixation:${seq}`,
      evidence: {
        detail: documents
          ? `${chain.length} retrieval queries in a row asked for the same thing (related ≥ ${round2(minSimilarity)}) and retrieved the same documents`
          : `${chain.length} retrieval queries in a row were near-identical (similarity ≥ ${round2(minSimilarity)}) and retrieved nothing new`,
        pattern: documents ? 'same_documents' : 'near_identical_queries',
        repeats: chain.length,
        threshold: consecutive,
        similarity: round2(minSimilarity),
        similarityThreshold: documents ? related : nearIdentical,
      },
    },
  };
}
