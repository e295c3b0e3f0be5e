/**
 * A recorded agent run in the trajectory format (JSON Lines, one trajectory
 * per line): what `governor replay` and the detection benchmark read.
 */
export interface Trajectory {
  /** Unique in its file. */
  readonly id: string;
  /** Where it came from. */
  readonly source?: string;
  /** What the agent was asked. */
  readonly task?: string;
  /** The steps, in the order they happened. */
  readonly steps: readonly TrajectoryStep[];
  /** Anything (reward, resolved, …). */
  readonly outcome?: unknown;
  /** Evaluation label, only in labelled corpora. */
  readonly label?: TrajectoryLabel;
}

export type TrajectoryStep = ModelStep | ToolCallStep | RetrievalStep | DelegationStep | UserStep;

/** The step kinds of the format, in no particular order. */
export const STEP_KINDS = ['model', 'tool_call', 'retrieval', 'delegation', 'user'] as const;

export type StepKind = (typeof STEP_KINDS)[number];

/** One model round trip. Token counts are `null` when unknown. */
export interface ModelStep {
  readonly kind: 'model';
  readonly prompt_tokens: number | null;
  readonly completion_tokens: number | null;
  readonly text: string;
}

/** One tool execution requested by the preceding model step. */
export interface ToolCallStep {
  readonly kind: 'tool_call';
  readonly tool: string;
  /** A JSON object, or a string (raw JSON text or free text). */
  readonly args: Readonly<Record<string, unknown>> | string;
  readonly result: string | null;
  readonly error?: boolean;
}

/** One vector-store / retriever query. */
export interface RetrievalStep {
  readonly kind: 'retrieval';
  readonly query: string;
  readonly results?: readonly string[];
}

/** One call of a sub-agent. */
export interface DelegationStep {
  readonly kind: 'delegation';
  readonly agent: string;
  readonly input: string;
  readonly output: string;
}

/** A user turn, or an outside event the agent did not cause. */
export interface UserStep {
  readonly kind: 'user';
  readonly text: string;
}

/** Evaluation label of a trajectory. */
export interface TrajectoryLabel {
  readonly stuck: boolean;
  /** `tool_spiral | token_drift | rag_fixation | delegation_loop | other`; absent when not stuck. */
  readonly category?: string;
  /** 0-based index of the first step at which the loop is visible; absent when not stuck. */
  readonly first_stuck_step?: number;
}
