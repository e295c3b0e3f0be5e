import type { Family } from './families.ts';

/** Loop categories of the trajectory format. */
export const CATEGORIES = ['tool_spiral', 'token_drift', 'rag_fixation', 'delegation_loop', 'other'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface ModelStep {
  kind: 'model';
  prompt_tokens: number | null;
  completion_tokens: number | null;
  text: string;
}
interface ToolCallStep {
  kind: 'tool_call';
  tool: string;
  args: Record<string, unknown> | string;
  result: string | null;
  error: boolean;
}
interface RetrievalStep {
  kind: 'retrieval';
  query: string;
  results: string[];
}
interface DelegationStep {
  kind: 'delegation';
  agent: string;
  input: string;
  output: string;
}
interface UserStep {
  kind: 'user';
  text: string;
}
export type Step = ModelStep | ToolCallStep | RetrievalStep | DelegationStep | UserStep;

export type CorpusLabel = { stuck: false } | { stuck: true; category: Category; first_stuck_step: number };

/**
 * One corpus line. Beyond the format's fields it carries `family` (the
 * scenario family), `variant` (how this instance differs) and `note` (what
 * repeats, or why it is not a loop), which readers ignore.
 */
export interface CorpusTrajectory {
  id: string;
  source: string;
  family: Family;
  variant: string;
  task: string;
  steps: Step[];
  outcome: Record<string, unknown>;
  label: CorpusLabel;
  note: string;
}

/** One JSON line, with a fixed key order so output is byte-stable. */
export function toJsonLine(t: CorpusTrajectory): string {
  return JSON.stringify({
    id: t.id,
    source: t.source,
    family: t.family,
    variant: t.variant,
    task: t.task,
    steps: t.steps,
    outcome: t.outcome,
    label: t.label,
    note: t.note,
  });
}
