/** What a breaker can tell its caller to do. */
export type BreakerAction = 'allow' | 'steer' | 'block' | 'stop';

/** The kinds of loop (and the budget) the breaker tells apart. */
export type BreakerCategory = 'tool_spiral' | 'cycle' | 'error_loop' | 'token_drift' | 'rag_fixation' | 'delegation_loop' | 'text_repetition' | 'budget';

/** Every {@link BreakerCategory}, in a stable order. */
export const BREAKER_CATEGORIES: readonly BreakerCategory[] = [
  'tool_spiral',
  'cycle',
  'error_loop',
  'token_drift',
  'rag_fixation',
  'delegation_loop',
  'text_repetition',
  'budget',
];

/** The circuit state of one session's breaker. */
export type BreakerStatus = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/**
 * Why a decision is not `allow`:
 * - `detection`: a detector saw a loop (or the budget ran out) just now;
 * - `breaker_open`: the session's breaker is OPEN and rejects everything;
 * - `store_unavailable`: the state store failed and the breaker fails closed.
 */
export type BreakerDecisionReason = 'detection' | 'breaker_open' | 'store_unavailable';

/**
 * The numbers behind a decision. Which fields are present depends on the
 * category; `detail` always says it in one line.
 */
export interface BreakerEvidence {
  /** One-line human-readable summary of what was seen. */
  readonly detail: string;
  /**
   * Which pattern of the category was seen: `identical_calls`,
   * `near_identical_calls` (tool_spiral); `same_error`, `outage` (error_loop);
   * `cycle`; `growth` (token_drift); `same_documents`,
   * `near_identical_queries` (rag_fixation);
   * `reask`, `same_answer` (delegation_loop); `across_replies`,
   * `within_reply` (text_repetition); `wrap_up`, `tools_blocked`,
   * `exhausted` (budget).
   */
  readonly pattern?: string;
  /** Tool whose calls repeat. */
  readonly tool?: string;
  /** Sub-agent being re-asked. */
  readonly agent?: string;
  /** How many times the pattern has now occurred (including the judged one). */
  readonly repeats?: number;
  /** The repeat count at which the detector fires. */
  readonly threshold?: number;
  /** Lowest similarity between the repeated items (0–1). */
  readonly similarity?: number;
  /** How many recent calls the detector looked back over. */
  readonly window?: number;
  /** The similarity threshold in force. */
  readonly similarityThreshold?: number;
  /** Length of a cycle (number of distinct steps that repeat). */
  readonly period?: number;
  /** Tools of one cycle period, in order. */
  readonly sequence?: readonly string[];
  /** The repeated error, normalised and shortened. */
  readonly error?: string;
  /** True when the repeated error is an outage (429, 5xx, timeout). */
  readonly transient?: boolean;
  /** Prompt tokens of the rounds that grew. */
  readonly promptTokens?: readonly number[];
  /** Growth factor between consecutive rounds. */
  readonly growth?: readonly number[];
  /** Session tokens used so far (budget). */
  readonly tokens?: number;
  /** Session cost so far in USD (budget). */
  readonly costUsd?: number;
  /** The token cap (budget). */
  readonly maxTokens?: number;
  /** The cost cap (budget). */
  readonly maxCostUsd?: number;
  /** How many times this category has been detected in the session, this one included. */
  readonly detection?: number;
}

/** The fields any {@link BreakerDecision} may carry; each action says which of them it always has. */
interface BreakerDecisionFields {
  /**
   * - `allow`: go on;
   * - `steer`: go on, but give the model `message` (it says what repeats and what to do instead);
   * - `block`: do not run the judged tool call; answer the model with `message` as the call's result;
   * - `stop`: end the agent's run; throw {@link breakerErrorFor}(decision).
   */
  readonly action: BreakerAction;
  /** The loop type; absent for `allow` and for a store outage. */
  readonly category?: BreakerCategory;
  /** Text for the model (steer, block) or for people (stop), worded for the loop type. */
  readonly message?: string;
  /** The numbers behind the decision. */
  readonly evidence?: BreakerEvidence;
  /** Why the decision is not `allow`. */
  readonly reason?: BreakerDecisionReason;
  /** True on the first model call let through after the breaker half-opened. */
  readonly probe?: boolean;
}

/** Go on. */
export interface BreakerAllowDecision extends BreakerDecisionFields {
  readonly action: 'allow';
}

/** Go on with `message` for the model (`steer`), or answer the judged tool call with it instead of running it (`block`). */
export interface BreakerSteerDecision extends BreakerDecisionFields {
  readonly action: 'steer' | 'block';
  readonly category: BreakerCategory;
  readonly message: string;
}

/** End the agent's run: throw {@link breakerErrorFor}(decision). `category` is absent when the store failed. */
export interface BreakerStopDecision extends BreakerDecisionFields {
  readonly action: 'stop';
}

/**
 * What the breaker answers to a check or an observation. Testing `action`
 * narrows it: a steer's or a block's `category` and `message` are always there.
 */
export type BreakerDecision = BreakerAllowDecision | BreakerSteerDecision | BreakerStopDecision;

/** The decision that lets everything through. */
export const ALLOW: BreakerDecision = Object.freeze({ action: 'allow' });
