import type { RetrievalEvent } from '../breaker-event.ts';
import { pushBounded, type BreakerSessionState, type RetrievalRecord } from '../breaker-state.ts';
import { isFailedSearch } from '../similarity/failed-search.ts';
import { knownName, NAME_NUMBERS, offeredNames, queryNames, queryNameWords } from '../similarity/name-spans.ts';
import { passageSetHash } from '../similarity/passage-set.ts';
import { textIdentity } from '../similarity/text-identity.ts';
import { packSketch, sketchHashes, sketchJaccard, sketchOverlap } from '../similarity/token-sketch.ts';
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
 * timeout" shares few exact words). A search that answers that it found
 * nothing ("Could not find [X]. Similar: …") has judged the query too: such
 * answers are one outcome however they are worded (they echo the query and
 * list other titles), so queries that each fail are the same search reworded
 * when each keeps most of the word stems of the next (more than
 * `sameDocumentsSimilarity` of the shorter one's): adding a word, fixing a
 * spelling, quoting it. Searches for other targets that share a word with it
 * are not. When results are not reported,
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
  const names = failed ? queryNames(event.query) : [];
  const { names: nameWords, first, words } = queryNameWords(event.query);
  const offered = failed ? offeredNames(event.results!.join('\n'), names) : [];
  const record: RetrievalRecord = {
    s: seq,
    q: packSketch(sketchHashes(stemHashes(event.query))),
    r: failed ? 0 : passageSetHash(event.results),
    k: textIdentity(event.query),
    ...(failed ? { f: 1 as const } : {}),
    ...(names.length > 0 ? { n: names } : {}),
    ...(offered.length > 0 ? { o: offered } : {}),
    ...(words.length > 0 ? { w: nameWords, v: words, ...(first === 0 ? {} : { c: first }) } : {}),
  };
  const retrievals = pushBounded(state.retrievals, record, ctx.options.windows.retrievals);
  const novel = record.r !== null && record.r !== 0 && !state.seen.includes(record.r) ? record.r : null;
  if (!enabled) return { retrievals, novel, detection: null };

  const { chain, minSimilarity } = failed
    ? failedSearches(state, record, consecutive, related)
    : sameSearches(state, record, consecutive, related, nearIdentical);
  if (chain.length < consecutive) return { retrievals, novel, detection: null };
  const pattern = failed ? 'failed_searches' : chain.every((r) => r.r !== null && r.r !== 0) ? 'same_documents' : 'near_identical_queries';
  const detail =
    pattern === 'failed_searches'
      ? `${chain.length} reworded retrieval queries in a row (related ≥ ${round2(minSimilarity)}) each found nothing`
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

interface Chain {
  /** The newest retrieval first, then the earlier ones judged the same search. */
  readonly chain: readonly RetrievalRecord[];
  readonly minSimilarity: number;
}

/**
 * Retrievals in a row, back from `record`, that asked for the same thing and
 * got the same (or unreported) results. A failed search in between is
 * skipped, as {@link failedSearches} skips one for another target: it brought
 * nothing that could change the outcome, so an agent alternating between a
 * search that works and a lookup that fails goes round in circles.
 */
function sameSearches(state: BreakerSessionState, record: RetrievalRecord, consecutive: number, related: number, nearIdentical: number): Chain {
  const chain: RetrievalRecord[] = [record];
  let minSimilarity = 1;
  // The backend judged these queries alike when it returned the same passages.
  const sameDocuments = record.r !== null && record.r !== 0;
  for (let i = state.retrievals.length - 1; i >= 0 && chain.length < consecutive; i--) {
    const previous = state.retrievals[i]!;
    if (previous.s <= state.userSeq) break;
    if (previous.f === 1) continue;
    if ((previous.k ?? 0) !== record.k || namesDiffer(previous, record)) break;
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
  return { chain, minSimilarity };
}

/**
 * Failed searches, back from the failed `record`, for the same target: each
 * keeps more than `related` of the word stems of the one after it. A failed
 * search for another target in between is skipped (it brought nothing that
 * could change the outcome); a search that found something ends the chain.
 * Queries naming different things (two different years) are other targets;
 * one that adds a year to the other narrows the same search. So is a search
 * that leaves the name the earlier one searched for a name a failed search
 * offered instead (a "Similar:" title): it follows the search's lead.
 */
function failedSearches(state: BreakerSessionState, record: RetrievalRecord, consecutive: number, related: number): Chain {
  const chain: RetrievalRecord[] = [record];
  let minSimilarity = 1;
  for (let i = state.retrievals.length - 1; i >= 0 && chain.length < consecutive; i--) {
    const previous = state.retrievals[i]!;
    if (previous.s <= state.userSeq) break;
    if (previous.f !== 1) break;
    const next = chain.at(-1)!;
    const namesOther =
      ((previous.k ?? 0) !== 0 && (next.k ?? 0) !== 0 && previous.k !== next.k) || namesDiffer(previous, next) || followsLead(state, previous, next);
    const similarity = sketchOverlap(previous.q, next.q);
    if (namesOther || similarity <= related) continue;
    minSimilarity = Math.min(minSimilarity, similarity);
    chain.push(previous);
  }
  return { chain, minSimilarity };
}

/**
 * Whether two queries name different things: each names something, and
 * neither holds a word the other names it with, in any case, nor an acronym
 * of it ("Marie Curie lecture", "Niels Bohr lecture"; see queryNameWords).
 * Searches for other targets, as two years are, however many of their other
 * words they share. A capitalised first word alone may be a name or the start
 * of a sentence: it names another target only when it is all that differs
 * ("Acme annual revenue", "Globex annual revenue"), not in a rewording
 * ("Password reset steps", "Reset password instructions"). Queries that share
 * a name ("Arun Date", "Marathi songs by Arun Date in India") circle one target.
 */
function namesDiffer(a: RetrievalRecord, b: RetrievalRecord): boolean {
  if (a.v === undefined || b.v === undefined) return false;
  const aNames = a.w ?? [];
  const bNames = b.w ?? [];
  if (aNames.length > 0 && bNames.length > 0) return !aNames.some((key) => b.v!.includes(key)) && !bNames.some((key) => a.v!.includes(key));
  if (a.c === undefined || b.c === undefined || a.c === b.c || aNames.length + bNames.length > 0) return false;
  const rest = (words: readonly number[], first: number) => words.filter((key) => key !== first);
  const aRest = rest(a.v, a.c);
  const bRest = rest(b.v, b.c);
  return aRest.length === bRest.length && aRest.every((key) => bRest.includes(key));
}

/**
 * Whether the later failed search names someone or something the earlier
 * one did not, which an earlier failed search offered instead ("Could not
 * find [Scatman]. Similar: ['Scatman John', …]" and then a search for
 * Scatman John): taking up the search's suggestion is a search for another
 * target, however alike the words. A name respelled, an acronym spelled
 * out, or a name the agent brought itself is not a lead taken.
 */
function followsLead(state: BreakerSessionState, earlier: RetrievalRecord, later: RetrievalRecord): boolean {
  const names = later.n;
  const before = earlier.n;
  if (names === undefined || before === undefined) return false;
  // Still naming everything the earlier search named, it narrows that search rather than leaving it.
  let keeps = true;
  for (let at = 0; at < before.length && keeps; at += NAME_NUMBERS) keeps = knownName(before, at, names);
  if (keeps) return false;
  for (let at = 0; at < names.length; at += NAME_NUMBERS) {
    if (knownName(names, at, before)) continue;
    for (const r of state.retrievals) {
      if (r.s > state.userSeq && r.s < later.s && r.o?.includes(names[at]!) === true) return true;
    }
  }
  return false;
}
