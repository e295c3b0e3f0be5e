import type { BreakerEvidence } from '../breaker-decision.ts';
import { LIMITS, pushBounded, type BreakerSessionState, type TextRecord } from '../breaker-state.ts';
import { splitSentences, stripStructuredMarkdown } from '../similarity/prose.ts';
import { sketchHashes, sketchJaccard } from '../similarity/token-sketch.ts';
import { tokenHashes, tokenize } from '../similarity/tokenize.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

const SENTENCE_MIN_TOKENS = 4;
const SENTENCE_MAX_REPEATS = 3;
const NGRAM = 5;
const NGRAM_MIN_TOKENS = 40;
const NGRAM_MIN_DISTINCT = 0.5;

/**
 * Text repetition in the model's own words. Within one reply: a sentence of
 * four or more words said three times or more, or a reply whose 5-grams are
 * mostly repeats (degenerate output). Across replies: `repeats` substantive
 * replies in a row that are near-identical with nothing happening in between
 * — no tool call, retrieval, sub-agent call or user turn: the model talking
 * to itself. (Replies that accompany repeated tool calls are judged through
 * those calls, whose detectors know about retries and progress.) Code blocks,
 * tables and list items are stripped first.
 */
export function judgeText(
  state: BreakerSessionState,
  text: string,
  seq: number,
  ctx: DetectorContext,
): { texts: readonly TextRecord[]; detection: Detection | null } {
  const { enabled, repeats, similarity: threshold, minTokens, withinText } = ctx.options.textRepetition;
  if (!enabled || text.length === 0) return { texts: state.texts, detection: null };
  const prose = stripStructuredMarkdown(text.length > 32_768 ? text.slice(0, 32_768) : text);
  const hashes = tokenHashes(prose);
  if (hashes.length < minTokens) return { texts: state.texts, detection: null };

  const record: TextRecord = { s: seq, k: sketchHashes(hashes) };
  const texts = pushBounded(state.texts, record, LIMITS.texts);

  if (withinText) {
    const within = repetitionWithin(prose, hashes);
    if (within !== null) {
      return {
        texts,
        detection: { category: 'text_repetition', key: `text_repetition:within:${seq}`, evidence: within },
      };
    }
  }

  const earlier = state.texts.filter((t) => t.s > lastOtherEvent(state)).slice(-(repeats - 1));
  if (earlier.length < repeats - 1) return { texts, detection: null };
  let minSimilarity = 1;
  for (const previous of earlier) {
    minSimilarity = Math.min(minSimilarity, sketchJaccard(previous.k, record.k));
    if (minSimilarity < threshold) return { texts, detection: null };
  }
  return {
    texts,
    detection: {
      category: 'text_repetition',
      key: `text_repetition:across:${seq}`,
      evidence: {
        pattern: 'across_replies',
        detail: `the last ${repeats} replies are near-identical (similarity ≥ ${round2(minSimilarity)}) with nothing new learned in between`,
        repeats,
        threshold: repeats,
        similarity: round2(minSimilarity),
        similarityThreshold: threshold,
      },
    },
  };
}

/** Sequence number of the latest event other than a model round. */
function lastOtherEvent(state: BreakerSessionState): number {
  return Math.max(
    state.userSeq,
    state.tools.at(-1)?.s ?? 0,
    state.retrievals.at(-1)?.s ?? 0,
    state.delegations.at(-1)?.s ?? 0,
  );
}

function repetitionWithin(prose: string, hashes: readonly number[]): BreakerEvidence | null {
  if (hashes.length < SENTENCE_MIN_TOKENS * SENTENCE_MAX_REPEATS) return null;
  // A sentence said three times repeats all its 4-grams three times: only then look at sentences.
  const short = gramStats(hashes, SENTENCE_MIN_TOKENS);
  if (short.max >= SENTENCE_MAX_REPEATS) {
    const sentence = repeatedSentence(prose);
    if (sentence !== null) return sentence;
  }
  if (hashes.length >= NGRAM_MIN_TOKENS) {
    const total = hashes.length - NGRAM + 1;
    // Equal n-grams start with equal 4-grams, so there are at least as many
    // distinct n-grams as distinct 4-grams, less the few 4-grams too close to
    // the end to start one. When that already clears the bar (ordinary prose),
    // counting the n-grams cannot find degenerate output.
    if ((short.distinct - (NGRAM - SENTENCE_MIN_TOKENS)) / total >= NGRAM_MIN_DISTINCT) return null;
    const distinct = gramStats(hashes, NGRAM).distinct / total;
    if (distinct < NGRAM_MIN_DISTINCT) {
      return {
        pattern: 'within_reply',
        detail: `the reply keeps repeating itself: only ${Math.round(distinct * 100)}% of its ${NGRAM}-word sequences are distinct`,
        similarity: round2(1 - distinct),
        threshold: NGRAM_MIN_DISTINCT,
      };
    }
  }
  return null;
}

function gramHash(hashes: readonly number[], start: number, n: number): number {
  let h = 0x9e3779b9;
  for (let j = 0; j < n; j++) h = Math.imul(h ^ hashes[start + j]!, 0x85ebca6b) ^ (h >>> 13);
  return h >>> 0;
}

// Open-addressing table of n-gram hashes and their counts, reused across
// replies (judging is synchronous). A Map or Set keyed by unsigned 32-bit
// hashes boxes most keys as heap numbers, which made counting the n-grams of
// a long reply the costliest step of a model round.
let gramKeys = new Int32Array(1024);
let gramCounts = new Uint32Array(1024);

/** How many distinct `n`-grams `hashes` has, and how often the most frequent one occurs. */
function gramStats(hashes: readonly number[], n: number): { distinct: number; max: number } {
  const total = hashes.length - n + 1;
  // A table at least twice the n-gram count keeps probe runs short.
  let bits = 10;
  while (1 << bits < total * 2) bits++;
  const size = 1 << bits;
  if (gramKeys.length < size) {
    gramKeys = new Int32Array(size);
    gramCounts = new Uint32Array(size);
  }
  gramCounts.fill(0, 0, size);
  const mask = size - 1;
  let distinct = 0;
  let max = 0;
  for (let i = 0; i < total; i++) {
    const h = gramHash(hashes, i, n) | 0;
    let slot = Math.imul(h, 0x9e3779b1) >>> (32 - bits);
    while (gramCounts[slot] !== 0 && gramKeys[slot] !== h) slot = (slot + 1) & mask;
    const count = gramCounts[slot]! + 1;
    if (count === 1) {
      gramKeys[slot] = h;
      distinct++;
    }
    gramCounts[slot] = count;
    if (count > max) max = count;
  }
  return { distinct, max };
}

function repeatedSentence(prose: string): BreakerEvidence | null {
  const counts = new Map<string, number>();
  for (const sentence of splitSentences(prose)) {
    const key = sentence.toLowerCase().replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ').trim();
    if (wordCount(key) < SENTENCE_MIN_TOKENS) continue;
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n >= SENTENCE_MAX_REPEATS) {
      return {
        pattern: 'within_reply',
        detail: `one sentence of the reply is repeated ${n} times: "${key.slice(0, 80)}"`,
        repeats: n,
        threshold: SENTENCE_MAX_REPEATS,
      };
    }
  }
  return null;
}

function wordCount(text: string): number {
  if (text === '') return 0;
  // Unspaced scripts have no spaces to count: count their tokens (character bigrams).
  if (/[^\x00-\x7f]/.test(text)) return tokenize(text).length;
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 32) n++;
  return n;
}
