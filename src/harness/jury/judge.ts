/**
 * What a judge looks at: the goal an agent was given and what it produced.
 * An `AgentLoopResult` is a `result` as it is: the optional fields take
 * `undefined` too, also under `exactOptionalPropertyTypes`.
 */
export interface JudgeInput {
  /** The task the agent was given. */
  goal: string;
  /** The agent's result, when there is one. */
  result?:
    | {
        /** How the run ended, e.g. `completed` or `timeout`. */
        status?: string | undefined;
        /** The agent's final answer or summary. */
        output?: string | undefined;
      }
    | undefined;
  /** Directory the agent worked in; relative paths of file and command judges resolve against it. */
  workingDirectory?: string | undefined;
}

/**
 * One judge's opinion. `pass` and `fail` are votes; `abstain` (nothing to judge)
 * and `error` (the judge itself failed) are not, and a jury never counts them
 * as a score of zero.
 */
export interface Verdict {
  /** Name of the judge that gave it. */
  judge: string;
  status: 'pass' | 'fail' | 'abstain' | 'error';
  /**
   * How good the result is, from 0 to 1, when the judge grades. The status is
   * the vote: a jury never lets a `fail` vote's score carry a result past its
   * threshold (it counts just below it).
   */
  score?: number;
  /** Why, for people reading the report. */
  reasoning: string;
  /** The verdicts a jury combined (juries nest). */
  details?: Verdict[];
}

/** Anything that can judge an agent's result; a Jury is one too. */
export interface Judge {
  /** Unique within a jury; weights refer to judges by it. */
  readonly name: string;
  /** Rejects only when `signal` aborts; failures are `error` verdicts. */
  judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict>;
}
