import { clip, LIMITS, pushBounded, type BreakerSessionState, type DelegationRecord } from '../breaker-state.ts';
import { hashSequence } from '../similarity/hash.ts';
import { nameWords } from '../similarity/name-spans.ts';
import { isTransientError, looksLikeError } from '../similarity/result-hash.ts';
import { textIdentity } from '../similarity/text-identity.ts';
import {
  DEFAULT_SKETCH_SIZE,
  packSketch,
  sketchHashes,
  sketchJaccard,
  sketchOverlap,
  unpackSketch,
  type AnySketch,
  type PackedSketch,
  type TokenSketch,
} from '../similarity/token-sketch.ts';
import { tokenHashes } from '../similarity/tokenize.ts';
import { stemHashes } from '../similarity/word-stems.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

const MIN_ANSWER_TOKENS = 5;
const MAX_TASK_CHARS = 16_384;
const MAX_DEPTH = 8;

/**
 * A sub-agent task as text, whatever shape the call's input has: a string as
 * it is (JSON text is read as JSON), an object as its values in key order.
 * Keys and JSON syntax are left out: they are the same in every call of one
 * tool and say nothing about what was asked.
 */
function taskText(input: unknown): string {
  let value = input;
  if (typeof input === 'string') {
    const trimmed = input.trim();
    if (!(trimmed.startsWith('{') || trimmed.startsWith('[')) || trimmed.length > MAX_TASK_CHARS) return clipTask(input);
    try {
      value = JSON.parse(trimmed) as unknown;
    } catch {
      return clipTask(input);
    }
  }
  const parts: string[] = [];
  collectValues(value, parts, 0, { left: MAX_TASK_CHARS });
  return parts.join('\n');
}

function clipTask(text: string): string {
  return text.length > MAX_TASK_CHARS ? text.slice(0, MAX_TASK_CHARS) : text;
}

function collectValues(value: unknown, out: string[], depth: number, budget: { left: number }): void {
  if (budget.left <= 0 || value === null || value === undefined) return;
  if (typeof value === 'object') {
    if (depth >= MAX_DEPTH) return;
    if (Array.isArray(value)) {
      for (const item of value) collectValues(item, out, depth + 1, budget);
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) collectValues(record[key], out, depth + 1, budget);
    return;
  }
  const text = String(value);
  const kept = text.length > budget.left ? text.slice(0, budget.left) : text;
  budget.left -= kept.length;
  out.push(kept);
}

/**
 * What a task is compared by: the sketch of its word stems and what it names
 * exactly (see textIdentity). When the task names someone or something by a
 * proper name, `sketch` goes on after the stems' packed sketch with a `|` and
 * the packed sketch of the stems of those names' words (see nameWords): one
 * string, so that a print and a record carry it wherever they go. A sketch
 * without the `|` (a task naming nobody, or one recorded by an older version)
 * names no one.
 */
export interface TaskPrint {
  readonly sketch: PackedSketch;
  readonly identity: number;
}

/** Separates the stems' sketch from the names' in a task's sketch (not a digit of a packed sketch). */
const NAMES_MARK = '|';
/** Name words of a task kept: a request names a few things at most. */
const MAX_NAME_WORDS = 12;

/** A task's sketch with the stems of the words of the names it names (see {@link TaskPrint}). */
function taskSketch(text: string): PackedSketch {
  const stems = packSketch(sketchHashes(stemHashes(text, 4096, true)));
  const names: number[] = [];
  for (const word of nameWords(text, MAX_NAME_WORDS)) names.push(...stemHashes(word));
  return names.length === 0 ? stems : `${stems}${NAMES_MARK}${packSketch(sketchHashes(names, MAX_NAME_WORDS))}`;
}

/** A task's sketch split: its word stems' sketch, and the (cut) stem hashes of the names it names, ascending. */
interface TaskParts {
  readonly stems: AnySketch;
  readonly names: TokenSketch;
}

function taskParts(sketch: AnySketch): TaskParts {
  if (typeof sketch !== 'string') return { stems: sketch, names: [] };
  const mark = sketch.indexOf(NAMES_MARK);
  if (mark === -1) return { stems: sketch, names: [] };
  return { stems: sketch.slice(0, mark), names: unpackSketch(sketch.slice(mark + 1)) };
}

/**
 * Whether two tasks are about different things by name: each names someone
 * or something (a company, a person, a product) that the other does not
 * mention at all. A task that names all the other one names, and more
 * ("… of Acme Corp; check LinkedIn"), or names nothing, is not: it may be
 * the same request reworded.
 */
function namesOtherThings(a: TaskParts, b: TaskParts): boolean {
  return a.names.length > 0 && b.names.length > 0 && namesUnmentioned(a, b) && namesUnmentioned(b, a);
}

/** Whether `a` names a word that `b` mentions nowhere, as a name or as another word. */
function namesUnmentioned(a: TaskParts, b: TaskParts): boolean {
  const stems = unpackSketch(b.stems);
  // The stems' sketch holds every stem of the text up to its largest hash (all of them when it is not full).
  const known = stems.length < DEFAULT_SKETCH_SIZE ? Number.POSITIVE_INFINITY : stems.at(-1)!;
  for (const name of a.names) {
    if (b.names.includes(name) || stems.includes(name)) continue;
    // Beyond what b's sketch holds, only its names are known, and only when it names fewer than the most kept.
    if (name > known && b.names.length >= MAX_NAME_WORDS) continue;
    return true;
  }
  return false;
}

// The last task printed: one sub-agent call is printed by its check, by the
// re-ask test of its observation and by its record — once is enough.
let lastTask: { text: string; print: TaskPrint } | undefined;

/** What an answer is compared by: its sketch, size, hash (0 = no answer) and whether it was an outage. */
export interface AnswerPrint {
  readonly o: PackedSketch;
  readonly n: number;
  readonly h: number;
  readonly e?: 2;
}

/** Print of a sub-agent's answer. */
export function answerPrint(output: string | null): AnswerPrint {
  const tokens = tokenHashes(output ?? '');
  const print = { o: packSketch(sketchHashes(tokens)), n: tokens.length, h: output ? hashSequence(tokens) || 1 : 0 };
  return isOutage(output) ? { ...print, e: 2 } : print;
}

/** Print of a sub-agent task (memoised, so it stays a pure function of the task). */
export function taskPrint(input: unknown): TaskPrint {
  // Keyed on the text, never on the object: a loop may reuse one object and change what it asks.
  const text = taskText(input);
  if (lastTask?.text !== text) lastTask = { text, print: { sketch: taskSketch(text), identity: textIdentity(text) } };
  return lastTask.print;
}

function settings(agent: string, ctx: DetectorContext) {
  const base = ctx.options.delegation;
  const own = base.perAgent[agent];
  return {
    enabled: base.enabled && own?.enabled !== false,
    maxCalls: own?.maxCalls ?? base.maxCalls,
    answerSimilarity: own?.answerSimilarity ?? base.answerSimilarity,
    inputSimilarity: base.inputSimilarity,
  };
}

type Settings = ReturnType<typeof settings>;

/**
 * How alike two tasks are (0–1): the share of the shorter one's word stems
 * found in the other, or 0 when they name different things (another file,
 * chunk, id or year, another company or person is another task, however
 * alike the wording).
 */
function taskSimilarity(a: DelegationRecord, b: TaskPrint): number {
  if ((a.k ?? 0) !== b.identity) return 0;
  const earlier = taskParts(a.i);
  const later = taskParts(b.sketch);
  if (namesOtherThings(earlier, later)) return 0;
  return sketchOverlap(earlier.stems, later.stems);
}

/** Whether two recorded asks gave (nearly) the same, substantive answer. */
function sameAnswer(a: DelegationRecord, b: DelegationRecord, s: Settings): boolean {
  return a.n >= MIN_ANSWER_TOKENS && b.n >= MIN_ANSWER_TOKENS && sketchJaccard(a.o, b.o) >= s.answerSimilarity;
}

/**
 * Before a sub-agent runs: would this be the `maxCalls`-th time since the last
 * informative user turn that this sub-agent is given the same task, with
 * nothing new coming back?
 *
 * Walks back over the sub-agent's earlier asks of a similar task. An ask
 * repeated in the same words counts whatever it returned: sending the very
 * same request again and again is the loop. A reworded ask counts only when
 * it got the answer the ask before it got: a different answer shows that it
 * was a different question (another company in a sweep of look-alike
 * requests) or that asking again brought something new. Asks that failed
 * with a transient error are an outage, neither a repeat nor news.
 */
export function detectReask(state: BreakerSessionState, agentName: string, input: unknown, ctx: DetectorContext, printed?: TaskPrint): Detection | null {
  const agent = clip(agentName, LIMITS.name);
  const s = settings(agent, ctx);
  if (!s.enabled) return null;
  const task = printed ?? taskPrint(input);
  const chain: DelegationRecord[] = [];
  let minSimilarity = 1;
  for (let i = state.delegations.length - 1; i >= 0; i--) {
    const d = state.delegations[i]!;
    if (d.s <= state.userSeq) break;
    if (d.g !== agent || d.e === 2) continue; // an outage is neither a repeat nor news
    const similarity = taskSimilarity(d, task);
    if (similarity < s.inputSimilarity) continue;
    const later = chain.at(-1);
    if (later !== undefined && !(sameTask(d, later) || sameAnswer(d, later, s))) break;
    chain.push(d);
    minSimilarity = Math.min(minSimilarity, similarity);
  }
  const calls = chain.length + 1;
  if (calls < s.maxCalls) return null;
  return {
    category: 'delegation_loop',
    key: `delegation_loop:ask:${agent}:${chain[0]!.s}:${calls}`,
    evidence: {
      detail: `sub-agent ${agent} would be given the same task for the ${ordinal(calls)} time since the last user turn`,
      pattern: 'reask',
      agent,
      tool: agent,
      repeats: calls,
      threshold: s.maxCalls,
      similarity: round2(minSimilarity),
      similarityThreshold: s.inputSimilarity,
    },
  };
}

/** Whether two recorded asks were the very same task (same words, same identity). */
function sameTask(a: DelegationRecord, b: DelegationRecord): boolean {
  if ((a.k ?? 0) !== (b.k ?? 0)) return false;
  const first = taskParts(a.i);
  const second = taskParts(b.i);
  return sketchJaccard(first.stems, second.stems) === 1 && !namesOtherThings(first, second);
}

/**
 * After a sub-agent answered: records the call and reports a loop when it was
 * re-asked a similar task and answered (nearly) what it answered last time.
 */
export function judgeDelegation(
  state: BreakerSessionState,
  agentName: string,
  input: unknown,
  output: string | null,
  seq: number,
  ctx: DetectorContext,
  printed?: { readonly task: TaskPrint; readonly answer: AnswerPrint },
): { delegations: readonly DelegationRecord[]; novel: number | null; detection: Detection | null } {
  const agent = clip(agentName, LIMITS.name);
  const task = printed?.task ?? taskPrint(input);
  const answer = printed?.answer ?? answerPrint(output);
  const record: DelegationRecord = {
    s: seq,
    g: agent,
    i: task.sketch,
    o: answer.o,
    n: answer.n,
    k: task.identity,
    ...(answer.e === 2 ? { e: 2 as const } : {}),
  };
  const delegations = pushBounded(state.delegations, record, ctx.options.windows.delegations);
  if (record.e === 2) return { delegations, novel: null, detection: null };
  const answerHash = answer.h;
  const novel = answerHash !== 0 && !state.seen.includes(answerHash) ? answerHash : null;
  const s = settings(agent, ctx);
  if (!s.enabled || record.n < MIN_ANSWER_TOKENS) return { delegations, novel, detection: null };
  for (let i = state.delegations.length - 1; i >= 0; i--) {
    const previous = state.delegations[i]!;
    if (previous.s <= state.userSeq) break;
    if (previous.g !== agent || previous.e === 2) continue;
    // Asks of other tasks in between (the next item of a sweep) are not this task's history.
    if (taskSimilarity(previous, task) < s.inputSimilarity) continue;
    if (!sameAnswer(previous, record, s)) break;
    const similarity = sketchJaccard(previous.o, record.o);
    return {
      delegations,
      novel,
      detection: {
        category: 'delegation_loop',
        key: `delegation_loop:answer:${agent}:${seq}`,
        evidence: {
          detail: `sub-agent ${agent} was re-asked the same task and answered the same (similarity ${round2(similarity)})`,
          pattern: 'same_answer',
          agent,
          tool: agent,
          repeats: 2,
          similarity: round2(similarity),
          similarityThreshold: s.answerSimilarity,
        },
      },
    };
  }
  return { delegations, novel, detection: null };
}

/**
 * Whether a sub-agent's answer is a transient failure (rate limit, 5xx,
 * timeout): retrying an outage a few times is not a loop, and its error text
 * repeated is not the same answer.
 */
function isOutage(output: string | null): boolean {
  return output !== null && looksLikeError(output) && isTransientError(output);
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
