import type { RetrievalEvent } from '../breaker-event.ts';
import { LIMITS, pushBounded, type BreakerSessionState, type RetrievalRecord } from '../breaker-state.ts';
import { isFailedSearch } from '../similarity/failed-search.ts';
import { passageSetHash } from '../similarity/passage-set.ts';
import { textIdentity } from '../similarity/text-identity.ts';
import { sketchHashes, sketchJaccard, sketchOverlap } from '../similarity/token-sketch.ts';
import { stemHashes } from '../similarity/word-stems.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

/** Stems of a failed search's answer kept to see whether the next query takes up what it suggested. */
const SUGGESTION_STEMS = 64;

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
 * timeout" shares few exact words). A search that answers that it found
 * nothing ("Could not find [X]. Similar: …") has judged the query too: such
 * answers are one outcome however they are worded, so related queries that
 * each fail are the same search reworded, unless a query takes up what the
 * failed search suggested (its new words come from that answer): then the
 * agent followed the environment's feedback. When results are not reported,
 * or an empty list came back, the queries alone decide and must be
 * near-identical. Queries that name different things (numbers, paths, file
 * names) are never the same search.
 */
export function judgeRetrieval(
  state: BreakerSessionState,
  event: RetrievalEvent,
  seq: number,
  ctx: DetectorContext,
): { retrievals: readonly RetrievalRecord[]; novel: number | null; detection: Detection | null } {
  const { enabled, consecutive, similarity: nearIdentical, sameDocumentsSimilarity: related } = ctx.options.ragFixation;
  const failed = event.results !== undefined && event.results.length > 0 && event.results.every(isFailedSearch);
  const queryStems = stemHashes(event.query);
  const newest = state.retrievals.at(-1);
  const followed = newest?.a !== undefined && takesUpSuggestion(queryStems, newest.q, newest.a);
  const record: RetrievalRecord = {
    s: seq,
    q: sketchHashes(queryStems),
    r: failed ? 0 : passageSetHash(event.results),
    k: textIdentity(event.query),
    ...(failed ? { f: 1 as const, a: suggestionStems(event.results!) } : {}),
    ...(followed ? { t: 1 as const } : {}),
  };
  const retrievals = pushBounded(withoutSuggestions(state.retrievals), record, LIMITS.retrievals);
  const novel = record.r !== null && record.r !== 0 && !state.seen.includes(record.r) ? record.r : null;
  if (!enabled || followed) return { retrievals, novel, detection: null };

  const chain: RetrievalRecord[] = [record];
  let minSimilarity = 1;
  // The backend judged these queries alike: it returned the same passages, or answered each that it found nothing.
  const judged = (record.r !== null && record.r !== 0) || failed;
  for (let i = state.retrievals.length - 1; i >= 0 && chain.length < consecutive; i--) {
    const previous = state.retrievals[i]!;
    if (previous.s <= state.userSeq) break;
    if ((previous.k ?? 0) !== record.k) break;
    if ((previous.f ?? 0) !== (record.f ?? 0)) break;
    const reported = previous.r !== null && record.r !== null;
    if (reported && previous.r !== record.r) break;
    // Compared with every query of the chain: rewordings circle one question rather than drift in a line.
    // Failed searches are compared with the next query only: a query that names one more thing than the last is
    // a rewording, one that shares a word with some earlier query in the chain is often another target.
    let best = 0;
    for (const later of failed ? chain.slice(-1) : chain) {
      best = Math.max(best, judged && reported ? sketchOverlap(previous.q, later.q) : sketchJaccard(previous.q, later.q));
    }
    if (best < (judged && reported ? related : nearIdentical) || (failed && best <= related)) break;
    minSimilarity = Math.min(minSimilarity, best);
    chain.push(previous);
    // The agent came to this query by taking up a suggestion: what it searched before was another search.
    if (previous.t === 1) break;
  }
  if (chain.length < consecutive) return { retrievals, novel, detection: null };
  const pattern = failed ? 'failed_searches' : chain.every((r) => r.r !== null && r.r !== 0) ? 'same_documents' : 'near_identical_queries';
  const detail =
    pattern === 'failed_searches'
      ? `${chain.length} related retrieval queries in a row (related ≥ ${round2(minSimilarity)}) each found nothing, and none took up what the search suggested`
      : pattern === 'same_documents'
        ? `${chain.length} retrieval queries in a row asked for the same thing (related ≥ ${round2(minSimilarity)}) and retrieved the same documents`
        : `${chain.length} retrieval queries in a row were near-identical (similarity ≥ ${round2(minSimilarity)}) and retrieved nothing new`;
  return {
    retrievals,
    novel,
    detection: {
      category: 'rag_fixation',
      key: `rag_fixation:${seq}`,
      evidence: {
        detail,
        pattern,
        repeats: chain.length,
        threshold: consecutive,
        similarity: round2(minSimilarity),
        similarityThreshold: pattern === 'near_identical_queries' ? nearIdentical : related,
      },
    },
  };
}

/** The distinct stems of a failed search's answer (its suggestions), sorted, at most {@link SUGGESTION_STEMS}. */
function suggestionStems(results: readonly string[]): number[] {
  const stems = new Set<number>();
  for (const result of results) {
    for (const h of stemHashes(result, 512)) {
      stems.add(h);
      if (stems.size >= SUGGESTION_STEMS) break;
    }
  }
  return [...stems].sort((a, b) => a - b);
}

/**
 * Whether every new word of a query (those the previous query did not have)
 * comes from the previous search's answer: the agent searched for an
 * alternative it was shown. The answer echoes the previous query, so only
 * the alternatives it listed can supply a new word.
 */
function takesUpSuggestion(query: readonly number[], previous: readonly number[], suggested: readonly number[]): boolean {
  let added = 0;
  let taken = 0;
  for (const h of new Set(query)) {
    if (previous.includes(h)) continue;
    added++;
    if (suggested.includes(h)) taken++;
  }
  return added > 0 && taken === added;
}

/** Suggestions matter for the next query only: older records drop them, which keeps the state small. */
function withoutSuggestions(records: readonly RetrievalRecord[]): readonly RetrievalRecord[] {
  const last = records.at(-1);
  if (last?.a === undefined) return records;
  const { a: _dropped, ...kept } = last;
  return [...records.slice(0, -1), kept];
}
