import { InvalidOptionError } from '../../errors/governor-error.ts';
import { describeValue, is, validateOptions, type OptionRules } from '../../errors/validate-options.ts';
import { redact } from '../../redaction/redact.ts';
import type { Judge, JudgeInput, Verdict } from './judge.ts';

/** How a {@link Jury} combines the votes (`pass`/`fail` verdicts) of its judges. */
export type JuryStrategy = 'majority' | 'average' | 'weighted' | 'median' | 'unanimous';

const STRATEGIES: readonly JuryStrategy[] = ['majority', 'average', 'weighted', 'median', 'unanimous'];
const SCORED: readonly JuryStrategy[] = ['average', 'weighted', 'median'];

/** Options of {@link Jury}. */
export interface JuryOptions {
  /** The judges, run in parallel; names must be unique. */
  judges: readonly Judge[];
  /**
   * - `majority`: passes when more votes pass than fail; a tie fails (a jury
   *   that cannot decide must not approve).
   * - `unanimous`: passes when every vote passes.
   * - `average` / `median`: the mean / median vote score must reach `threshold`.
   * - `weighted`: the weighted mean vote score must reach `threshold`.
   *
   * Abstentions and errors are not votes: they are reported and left out, never
   * counted as a zero score. A vote without a score counts 1 (pass) or 0 (fail).
   * A `fail` vote never helps a result pass: where its score reaches the
   * threshold, it counts as a score just below it (so a jury whose only vote
   * fails, fails, whatever score came with that vote).
   */
  strategy: JuryStrategy;
  /**
   * Weight per judge name, for `weighted` only; weights must be >= 0 and name
   * existing judges. A judge not listed weighs 1.
   * @default every judge weighs 1
   */
  weights?: Readonly<Record<string, number>>;
  /**
   * Lowest passing score for `average`, `weighted` and `median` (0 to 1).
   * @default 0.5
   */
  threshold?: number;
  /** @default `jury (<strategy>)` */
  name?: string;
  /**
   * Longest wait for one judge's verdict (ms). A judge that has not answered
   * by then (a hung command, a stalled judging model) is an `error` verdict
   * saying so, and its signal is aborted; the others still vote.
   * @default no limit
   */
  judgeTimeoutMs?: number;
}

const JURY_RULES: OptionRules<JuryOptions> = {
  judges: is.arrayOf(is.having('a judge: { name, judge(input) }', 'name', 'judge')),
  strategy: is.oneOf(...STRATEGIES),
  weights: is.recordOf(is.number(0)),
  threshold: is.number(0, 1),
  name: is.string({ nonEmpty: true }),
  judgeTimeoutMs: is.timeMs(),
};

interface Vote {
  name: string;
  score: number;
  pass: boolean;
}

/** A vote's score as a scored strategy counts it: a fail at or above the threshold counts just below it. */
interface Counted {
  /** The score, a fail's capped at the threshold. */
  value: number;
  /** A fail capped at the threshold: it counts as just below `value`. */
  below: boolean;
}

/**
 * Runs judges in parallel and combines their verdicts into one. A Jury is a
 * {@link Judge}, so juries nest. A judge that throws becomes an `error` verdict;
 * when no judge votes, the jury abstains. The jury's verdict lists every judge's
 * verdict in `details`, in the order the judges were given.
 */
export class Jury implements Judge {
  readonly name: string;
  readonly strategy: JuryStrategy;
  readonly #judges: readonly Judge[];
  readonly #weights: Readonly<Record<string, number>>;
  readonly #threshold: number;
  readonly #judgeTimeoutMs: number | undefined;

  /** @throws InvalidOptionError for empty or duplicate judges, an unknown strategy, bad weights or threshold. */
  constructor(options: JuryOptions) {
    validateOptions('Jury', options, JURY_RULES, { required: ['judges', 'strategy'] });
    const { judges, strategy, weights, threshold } = options;
    if (!Array.isArray(judges) || judges.length === 0) throw new InvalidOptionError('judges', 'must be a non-empty array of judges');
    const names = new Set<string>();
    judges.forEach((judge: Judge, i) => {
      if (typeof judge?.judge !== 'function' || typeof judge.name !== 'string' || judge.name === '') {
        throw new InvalidOptionError(`judges[${i}]`, 'must be a judge: { name: non-empty string, judge(input) }');
      }
      if (names.has(judge.name)) throw new InvalidOptionError(`judges[${i}].name`, `"${judge.name}" is used by another judge; names must be unique`);
      names.add(judge.name);
    });
    if (weights !== undefined) {
      if (strategy !== 'weighted') throw new InvalidOptionError('weights', `only apply to strategy "weighted", not "${strategy}"`);
      for (const judgeName of Object.keys(weights)) {
        if (!names.has(judgeName)) throw new InvalidOptionError(`weights.${judgeName}`, 'names no judge of this jury');
      }
    }
    if (threshold !== undefined && !SCORED.includes(strategy)) {
      throw new InvalidOptionError('threshold', `only applies to strategies ${SCORED.join(', ')}`);
    }
    this.#judges = [...judges];
    this.strategy = strategy;
    this.#weights = { ...weights };
    this.#threshold = threshold ?? 0.5;
    this.name = options.name ?? `jury (${strategy})`;
    this.#judgeTimeoutMs = options.judgeTimeoutMs;
  }

  /** One judge's verdict, within `judgeTimeoutMs` when set: a judge that ignores its signal cannot hold the jury. */
  async #verdictOf(judge: Judge, input: JudgeInput, signal: AbortSignal | undefined): Promise<Verdict> {
    const limit = this.#judgeTimeoutMs;
    if (limit === undefined) return judge.judge(input, signal);
    const timeout = AbortSignal.timeout(limit);
    const work = judge.judge(input, signal === undefined ? timeout : AbortSignal.any([signal, timeout]));
    try {
      return await untilAborted(work, timeout);
    } catch (error) {
      if (!timeout.aborted || signal?.aborted === true) throw error;
      return { judge: judge.name, status: 'error', reasoning: `No verdict within ${limit} ms (judgeTimeoutMs).` };
    }
  }

  async judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict> {
    signal?.throwIfAborted();
    const settled = await untilAborted(Promise.allSettled(this.#judges.map(async (judge) => this.#verdictOf(judge, input, signal))), signal);
    // A name is shown as the reasoning is (a command judge's holds its command); weights refer to it as given.
    const details = settled.map((outcome, i) => normalise(redact(this.#judges[i]?.name ?? ''), outcome));
    const votes: Vote[] = details.flatMap((v, i) =>
      v.status === 'pass' || v.status === 'fail'
        ? [{ name: this.#judges[i]?.name ?? '', pass: v.status === 'pass', score: v.score ?? (v.status === 'pass' ? 1 : 0) }]
        : [],
    );
    const abstained = details.filter((v) => v.status === 'abstain').length;
    const errored = details.filter((v) => v.status === 'error').length;
    const tally = `${votes.length} of ${details.length} judges voted (${abstained} abstained, ${errored} errored)`;
    const listing = details.map((v) => `- ${v.judge}: ${v.status}${v.score === undefined ? '' : ` (${round(v.score)})`}: ${firstLine(v.reasoning)}`).join('\n');
    if (votes.length === 0) {
      return { judge: this.name, status: 'abstain', reasoning: `No judge voted; ${tally}.\n${listing}`, details };
    }
    const decision = this.#decide(votes);
    if (decision === undefined) {
      return { judge: this.name, status: 'abstain', reasoning: `Every voting judge has weight 0; ${tally}.\n${listing}`, details };
    }
    return {
      judge: this.name,
      status: decision.pass ? 'pass' : 'fail',
      score: decision.score,
      reasoning: `${this.strategy}: ${decision.summary}; ${tally}.\n${listing}`,
      details,
    };
  }

  #decide(votes: Vote[]): { pass: boolean; score: number; summary: string } | undefined {
    const passes = votes.filter((v) => v.pass).length;
    const fails = votes.length - passes;
    const threshold = this.#threshold;
    const count = (v: Vote): Counted => (!v.pass && v.score >= threshold ? { value: threshold, below: true } : { value: v.score, below: false });
    const capped = votes.filter((v) => !v.pass && v.score >= threshold).length;
    const note = capped === 0 ? '' : ` (${capped} fail vote${capped === 1 ? '' : 's'} scored at or above it, counted just below)`;
    // Reaching the threshold only with a capped fail's score is falling just short of it.
    const reaches = (raw: number, below: boolean): boolean => {
      const score = settled(raw);
      return score > threshold || (score >= threshold && !below);
    };
    switch (this.strategy) {
      case 'majority':
        return {
          pass: passes > fails,
          score: passes / votes.length,
          summary: `${passes} pass, ${fails} fail${passes === fails ? ' (a tie fails)' : ''}`,
        };
      case 'unanimous':
        return { pass: fails === 0, score: passes / votes.length, summary: `${passes} pass, ${fails} fail` };
      case 'average': {
        const counted = votes.map(count);
        const score = counted.reduce((sum, c) => sum + c.value, 0) / votes.length;
        const below = counted.some((c) => c.below);
        const pass = passes > 0 && reaches(score, below);
        return { pass, score, summary: `mean score ${round(score)} against threshold ${threshold}${note}` };
      }
      case 'median': {
        // A capped fail sorts before an uncapped score equal to its value: it is just below it.
        const sorted = votes.map(count).sort((a, b) => a.value - b.value || Number(b.below) - Number(a.below));
        const mid = Math.floor(sorted.length / 2);
        const middle = sorted.length % 2 === 1 ? sorted.slice(mid, mid + 1) : sorted.slice(mid - 1, mid + 1);
        const score = middle.reduce((sum, c) => sum + c.value, 0) / middle.length;
        const below = middle.some((c) => c.below);
        const pass = passes > 0 && reaches(score, below);
        return { pass, score, summary: `median score ${round(score)} against threshold ${threshold}${note}` };
      }
      case 'weighted': {
        const weightOf = (v: Vote): number => this.#weights[v.name] ?? 1;
        const total = votes.reduce((sum, v) => sum + weightOf(v), 0);
        if (total === 0) return undefined;
        const score = votes.reduce((sum, v) => sum + weightOf(v) * count(v).value, 0) / total;
        const voting = votes.filter((v) => weightOf(v) > 0);
        const below = voting.some((v) => count(v).below);
        const pass = voting.some((v) => v.pass) && reaches(score, below);
        return { pass, score, summary: `weighted score ${round(score)} against threshold ${threshold}${note}` };
      }
    }
  }
}

/**
 * A mean of scores without the last bits of floating-point error, to compare
 * with the threshold: three votes of 0.7 average 0.6999999999999998, which
 * reaches a threshold of 0.7.
 */
function settled(score: number): number {
  return Number(score.toFixed(12));
}

const STATUSES = new Set(['pass', 'fail', 'abstain', 'error']);

/**
 * `work`, or the signal's reason as soon as it aborts: a judge that ignores
 * the signal (a model call of its own without it) cannot hold the jury.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) reject(signal.reason);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A judge's settled outcome as a well-formed verdict under the judge's own name. */
function normalise(name: string, outcome: PromiseSettledResult<Verdict>): Verdict {
  if (outcome.status === 'rejected') {
    const reason: unknown = outcome.reason;
    return { judge: name, status: 'error', reasoning: redact(`The judge threw: ${reason instanceof Error ? reason.message : String(reason)}`) };
  }
  const verdict = outcome.value as Partial<Verdict> | undefined;
  if (typeof verdict !== 'object' || verdict === null || !STATUSES.has(verdict.status ?? '')) {
    return { judge: name, status: 'error', reasoning: 'The judge returned something that is not a verdict.' };
  }
  if (verdict.score !== undefined && typeof verdict.score !== 'number') {
    return {
      judge: name,
      status: 'error',
      reasoning: `The judge returned a score that is not a number (${describeValue(verdict.score)}); a score is a number from 0 to 1.`,
    };
  }
  if (verdict.score !== undefined && !(verdict.score >= 0 && verdict.score <= 1)) {
    return { judge: name, status: 'error', reasoning: `The judge returned score ${String(verdict.score)}, outside 0..1.` };
  }
  // Reasoning is read by people and logged: a judge quoting the agent's output may quote a secret.
  return { ...(verdict as Verdict), judge: name, reasoning: typeof verdict.reasoning === 'string' ? redact(verdict.reasoning) : '' };
}

function round(score: number): string {
  return String(Math.round(score * 1000) / 1000);
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
