import { clip, LIMITS, pushBounded, type BreakerSessionState, type DelegationRecord } from '../breaker-state.ts';
import { canonicalJson } from '../similarity/args-fingerprint.ts';
import { hashSequence } from '../similarity/hash.ts';
import { sketchHashes, sketchJaccard, type TokenSketch } from '../similarity/token-sketch.ts';
import { tokenHashes } from '../similarity/tokenize.ts';
import { round2, type Detection, type DetectorContext } from './detection.ts';

const MIN_ANSWER_TOKENS = 5;

/** A sub-agent task as text, whatever shape the call's input has. */
export function taskText(input: unknown): string {
  if (typeof input === 'string') return input;
  return canonicalJson(input ?? '', 16_384);
}

// The last task sketched: one sub-agent call is sketched by its check, by the
// re-ask test of its observation and by its record — once is enough. The
// input object itself is the first key, as serialising a large task only to
// find it unchanged costs as much as sketching it; the text is the second, so
// an equal task in a new object still hits.
let lastTask: { input: unknown; text: string; sketch: TokenSketch } | undefined;

/** Sketch of a sub-agent task (memoised, so it stays a pure function of the task). */
function taskSketch(input: unknown): TokenSketch {
  if (lastTask !== undefined && lastTask.input === input && typeof input === 'object' && input !== null) {
    return lastTask.sketch;
  }
  const text = taskText(input);
  if (lastTask?.text !== text) lastTask = { input, text, sketch: sketchHashes(tokenHashes(text)) };
  else lastTask = { ...lastTask, input };
  return lastTask.sketch;
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

/**
 * Before a sub-agent runs: would this be the `maxCalls`-th time since the last
 * user turn that this sub-agent is given a similar task?
 */
export function detectReask(state: BreakerSessionState, agentName: string, input: unknown, ctx: DetectorContext): Detection | null {
  const agent = clip(agentName, LIMITS.name);
  const s = settings(agent, ctx);
  if (!s.enabled) return null;
  const task = taskSketch(input);
  let asked = 0;
  let last = 0;
  let minSimilarity = 1;
  for (const d of state.delegations) {
    if (d.s <= state.userSeq || d.g !== agent) continue;
    const similarity = sketchJaccard(d.i, task);
    if (similarity < s.inputSimilarity) continue;
    asked++;
    last = d.s;
    minSimilarity = Math.min(minSimilarity, similarity);
  }
  const calls = asked + 1;
  if (calls < s.maxCalls) return null;
  return {
    category: 'delegation_loop',
    key: `delegation_loop:ask:${agent}:${last}:${calls}`,
    evidence: {
      detail: `sub-agent ${agent} would be asked a similar task for the ${ordinal(calls)} time since the last user turn`,
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
): { delegations: readonly DelegationRecord[]; novel: number | null; detection: Detection | null } {
  const agent = clip(agentName, LIMITS.name);
  const answerTokens = tokenHashes(output ?? '');
  const record: DelegationRecord = {
    s: seq,
    g: agent,
    i: taskSketch(input),
    o: sketchHashes(answerTokens),
    n: answerTokens.length,
  };
  const delegations = pushBounded(state.delegations, record, LIMITS.delegations);
  const answerHash = output ? hashSequence(answerTokens) || 1 : 0;
  const novel = answerHash !== 0 && !state.seen.includes(answerHash) ? answerHash : null;
  const s = settings(agent, ctx);
  if (!s.enabled || record.n < MIN_ANSWER_TOKENS) return { delegations, novel, detection: null };
  for (let i = state.delegations.length - 1; i >= 0; i--) {
    const previous = state.delegations[i]!;
    if (previous.s <= state.userSeq) break;
    if (previous.g !== agent) continue;
    if (sketchJaccard(previous.i, record.i) < s.inputSimilarity || previous.n < MIN_ANSWER_TOKENS) break;
    const similarity = sketchJaccard(previous.o, record.o);
    if (similarity < s.answerSimilarity) break;
    return {
      delegations,
      novel,
      detection: {
        category: 'delegation_loop',
        key: `delegation_loop:answer:${agent}:${seq}`,
        evidence: {
          detail: `sub-agent ${agent} was re-asked a similar task and answered the same (similarity ${round2(similarity)})`,
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

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
