import type { BreakerEvidence } from '../breaker-decision.ts';
import { redact } from '../../redaction/redact.ts';
import { LIMITS, pushBounded, type BreakerSessionState, type TextRecord, type UserTurnsState } from '../breaker-state.ts';
import { splitSentences, splitStructuredMarkdown } from '../similarity/prose.ts';
import { packSketch, sketchHashes, sketchJaccard } from '../similarity/token-sketch.ts';
import { isUnspacedToken, tokenHashes, tokenize } from '../similarity/tokenize.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

const SENTENCE_MIN_TOKENS = 4;
const SENTENCE_MAX_REPEATS = 3;
const NGRAM = 5;
const NGRAM_MIN_TOKENS = 40;
const NGRAM_MIN_DISTINCT = 0.5;

/** Tokens of a reply entered in its filter: later tokens count as unseen, which can only make a user turn look newer. */
const REPLY_FILTER_TOKENS = 128;
/** Filter bits per token: with two bits set per token, about 5% false "seen". */
const FILTER_BITS_PER_TOKEN = 8;
/** Size of one generation of the user-turn filter, in 32-bit words. */
const USER_FILTER_WORDS = (LIMITS.userVocab * FILTER_BITS_PER_TOKEN) / 32;
/** Characters of a user turn read: enough for the tokens that are remembered or counted. */
const USER_SCAN_CHARS = 4096;

const EMPTY: readonly number[] = [];

/**
 * Text repetition in the model's own words. Within one reply: a sentence of
 * four or more words said three times or more, or a reply whose 5-grams are
 * mostly repeats (degenerate output). Across replies: the same substantive
 * reply (near-identical prose) for the `repeats`-th time, in a row or with
 * other replies between, since anything new happened — a tool call,
 * retrieval or sub-agent call (replies that accompany calls are judged
 * through those calls, whose detectors know about retries and progress), or
 * a user turn that brought new information (see {@link noteUserTurn}): the
 * model saying the same thing again whatever it is told. Similarity is
 * judged on the prose, with code blocks, tables and list items stripped;
 * replies whose structured parts differ (a new code block is a new attempt)
 * are never the same reply.
 */
export function judgeText(
  state: BreakerSessionState,
  text: string,
  seq: number,
  ctx: DetectorContext,
): { texts: readonly TextRecord[]; detection: Detection | null } {
  const { enabled, repeats, similarity: threshold, minTokens, withinText, userTurnNewTokens } = ctx.options.textRepetition;
  if (!enabled || text.length === 0) return { texts: state.texts, detection: null };
  const split = splitStructuredMarkdown(text.length > 32_768 ? text.slice(0, 32_768) : text);
  const hashes = tokenHashes(split.prose);
  const structured = split.structured.length > 0 ? tokenHashes(split.structured) : EMPTY;
  const hasProse = hashes.length >= minTokens;
  if (!hasProse && structured.length < minTokens) return { texts: state.texts, detection: null };

  const filter = replyFilter(hashes, structured);
  const previous = state.texts.at(-1);
  const turns = state.userTurns;
  // Whether the user turns reach this detector with their text. If not, the
  // session's own notion of a user turn with news (userSeq) resets the evidence.
  const turnsJudged = (turns?.s ?? 0) >= state.userSeq;
  const userBefore = turns !== undefined && turnsJudged && turns.s > (previous?.s ?? 0);
  // Taking up a fresh token is checked exactly: a false "taken up" would hide a loop.
  const news = userBefore && (turns.w >= userTurnNewTokens || turns.f.some((h) => hashes.includes(h) || structured.includes(h)));
  const c = structured.length > 0 ? sequenceHash(structured) : 0;
  const k = hasProse ? packSketch(sketchHashes(hashes)) : '';
  // Optional fields only when set, so that the stored state stays small.
  let record: TextRecord;
  if (c === 0) record = news ? { s: seq, k, u: 1, b: filter } : { s: seq, k, b: filter };
  else record = news ? { s: seq, k, c, u: 1, b: filter } : { s: seq, k, c, b: filter };
  const texts = pushBounded(withoutFilter(state.texts), record, ctx.options.windows.texts);

  if (withinText && hasProse) {
    const within = repetitionWithin(split.prose, hashes);
    if (within !== null) {
      return {
        texts,
        detection: { category: 'text_repetition', key: `text_repetition:within:${seq}`, evidence: within },
      };
    }
  }

  if (news) return { texts, detection: null };
  const since = Math.max(turnsJudged ? 0 : state.userSeq, state.tools.at(-1)?.s ?? 0, state.retrievals.at(-1)?.s ?? 0, state.delegations.at(-1)?.s ?? 0);
  let chain = state.texts.filter((t) => t.s > since);
  const restart = chain.findLastIndex((t) => t.u === 1);
  if (restart > 0) chain = chain.slice(restart);
  if (chain.length < repeats - 1) return { texts, detection: null };
  // The same reply again, however many other replies came between: a model
  // alternating between two wordings of its apology repeats itself as surely
  // as one that says it the same way each time.
  let same = 0;
  let first = seq;
  let minSimilarity = 1;
  for (const other of chain) {
    if ((other.c ?? 0) !== c) continue;
    const similarity = sketchJaccard(other.k, record.k);
    if (similarity < threshold) continue;
    same++;
    first = Math.min(first, other.s);
    minSimilarity = Math.min(minSimilarity, similarity);
  }
  if (same < repeats - 1) return { texts, detection: null };
  const quietUsers = turns !== undefined && turnsJudged && turns.s > first;
  const said = `the same reply ${same + 1} times (similarity ≥ ${round2(minSimilarity)})`;
  return {
    texts,
    detection: {
      category: 'text_repetition',
      key: `text_repetition:across:${seq}`,
      evidence: {
        pattern: 'across_replies',
        detail: quietUsers ? `${said} although the user turns in between brought nothing new` : `${said} with nothing new learned in between`,
        repeats: same + 1,
        threshold: repeats,
        similarity: round2(minSimilarity),
        similarityThreshold: threshold,
      },
    },
  };
}

/**
 * Notes a user turn (or outside event) for {@link judgeText}: which of its
 * tokens the conversation has not used lately — not in the user's recent
 * turns, not in the model's latest reply. Whether the turn was new
 * information is decided at the next reply: it was if it added at least
 * `userTurnNewTokens` such tokens, or if the reply takes up any of them. A
 * bare nudge, a complaint or the same facts given again add few tokens, in
 * any language, and the model repeating itself does not take them up; a new
 * request, fact or argument adds many, or gets an answer that uses its words.
 * Cost is linear in the turn (its first 4,096 characters); the state kept is
 * bounded (two small filters and at most 16 tokens).
 */
export function noteUserTurn(
  state: BreakerSessionState,
  text: string,
  seq: number,
  ctx: DetectorContext,
): Pick<BreakerSessionState, 'userTurns'> | Record<string, never> {
  if (!ctx.options.textRepetition.enabled) return {};
  const prev: UserTurnsState | undefined = state.userTurns;
  const reply = state.texts.at(-1);
  // Fresh tokens add up over consecutive user turns, until the model replies.
  const continuing = prev !== undefined && prev.s > (reply?.s ?? 0);
  const fresh = continuing ? prev.f.slice() : [];
  let weight = continuing ? prev.w : 0;
  let current = prev?.v[0];
  const older = prev?.v[1];
  const head = text.length > USER_SCAN_CHARS ? text.slice(0, USER_SCAN_CHARS) : text;
  const hashes = tokenHashes(head);
  // Only text in other scripts needs the tokens themselves, to weigh them.
  const tokens = NON_ASCII.test(head) ? tokenize(head) : null;
  const seen = new Set<number>();
  const remembered: number[] = [];
  for (let i = 0; i < hashes.length; i++) {
    const h = hashes[i]!;
    if (seen.has(h)) continue;
    seen.add(h);
    if (remembered.length < LIMITS.userVocab) remembered.push(h);
    const known =
      (current !== undefined && filterHas(current, h)) || (older !== undefined && filterHas(older, h)) || (reply?.b !== undefined && filterHas(reply.b, h));
    if (known) continue;
    weight += tokens !== null && isUnspacedToken(tokens[i]!) ? 0.5 : 1;
    if (fresh.length < LIMITS.userFresh) fresh.push(h);
  }
  let count = prev?.n ?? 0;
  let generations: (readonly number[])[];
  if (current === undefined || count + remembered.length > LIMITS.userVocab) {
    generations = current === undefined ? [] : [current];
    current = new Array<number>(USER_FILTER_WORDS).fill(0);
    count = 0;
  } else {
    generations = older === undefined ? [] : [older];
    current = current.slice();
  }
  const words = current as number[];
  for (const h of remembered) filterAdd(words, h);
  return { userTurns: { s: seq, f: fresh, w: weight, v: [words, ...generations], n: count + remembered.length } };
}

const NON_ASCII = /[^\x00-\x7f]/;

/** The records with the filter dropped from the newest, which is about to stop being the newest. */
function withoutFilter(texts: readonly TextRecord[]): readonly TextRecord[] {
  const last = texts.at(-1);
  if (last?.b === undefined) return texts;
  const out = texts.slice();
  const kept: { s: number; k: TextRecord['k']; c?: number; u?: 1 } = { s: last.s, k: last.k };
  if (last.c !== undefined) kept.c = last.c;
  if (last.u !== undefined) kept.u = last.u;
  out[out.length - 1] = kept;
  return out;
}

/**
 * A Bloom filter of a reply's tokens, sized to them (a power of two of
 * 32-bit words, 4 to 32), so that a short reply stores little.
 */
function replyFilter(prose: readonly number[], structured: readonly number[]): number[] {
  const count = Math.min(REPLY_FILTER_TOKENS, prose.length + structured.length);
  let words = 4;
  while (words * 32 < count * FILTER_BITS_PER_TOKEN) words *= 2;
  const filter = new Array<number>(words).fill(0);
  let added = 0;
  for (const list of [prose, structured]) {
    for (let i = 0; i < list.length && added < REPLY_FILTER_TOKENS; i++, added++) filterAdd(filter, list[i]!);
  }
  return filter;
}

function filterAdd(filter: number[], h: number): void {
  const mask = filter.length * 32 - 1;
  const a = mixA(h) & mask;
  const b = mixB(h) & mask;
  filter[a >>> 5] = filter[a >>> 5]! | (1 << (a & 31));
  filter[b >>> 5] = filter[b >>> 5]! | (1 << (b & 31));
}

function filterHas(filter: readonly number[], h: number): boolean {
  if (filter.length === 0) return false;
  const mask = filter.length * 32 - 1;
  const a = mixA(h) & mask;
  const b = mixB(h) & mask;
  return (filter[a >>> 5]! & (1 << (a & 31))) !== 0 && (filter[b >>> 5]! & (1 << (b & 31))) !== 0;
}

function mixA(h: number): number {
  return Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
}

function mixB(h: number): number {
  const x = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Hash of a token sequence: equal for the same code block or table however it is spaced, different for any changed token. */
function sequenceHash(hashes: readonly number[]): number {
  let h = 0x9e3779b9;
  for (let i = 0; i < hashes.length; i++) h = Math.imul(h ^ hashes[i]!, 0x85ebca6b) ^ (h >>> 13);
  return h >>> 0 || 1;
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
    const key = sentence
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ')
      .trim();
    if (wordCount(key) < SENTENCE_MIN_TOKENS) continue;
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n >= SENTENCE_MAX_REPEATS) {
      const said = `one sentence of the reply is repeated ${n} times`;
      const quote = quotable(sentence, prose);
      return {
        pattern: 'within_reply',
        detail: quote === undefined ? said : `${said}: "${quote}"`,
        repeats: n,
        threshold: SENTENCE_MAX_REPEATS,
      };
    }
  }
  return null;
}

/**
 * The sentence as written, redacted before it is cut (a lowercased key no
 * longer matches secret patterns), or undefined when it is part of a secret
 * only its surroundings show: a line of a private key is a sentence of its
 * own, and redacted alone it looks like any other text.
 */
function quotable(sentence: string, prose: string): string | undefined {
  const redacted = redact(sentence);
  if (redacted === sentence && !redact(prose).includes(sentence)) return undefined;
  return redacted.replace(/\s+/g, ' ').trim().slice(0, 80);
}

function wordCount(text: string): number {
  if (text === '') return 0;
  // Unspaced scripts have no spaces to count: count their tokens (character bigrams).
  if (/[^\x00-\x7f]/.test(text)) return tokenize(text).length;
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 32) n++;
  return n;
}
