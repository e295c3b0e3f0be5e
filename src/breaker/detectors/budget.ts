import type { BreakerEvidence } from '../breaker-decision.ts';
import type { ModelEvent } from '../breaker-event.ts';
import type { BudgetState } from '../breaker-state.ts';
import type { Detection, DetectorContext } from './detection.ts';

function overBudget(budget: BudgetState, ctx: DetectorContext): boolean {
  const { maxTokens, maxCostUsd } = ctx.options.budget;
  return budget.tokens >= maxTokens || (maxCostUsd !== undefined && budget.costUsd >= maxCostUsd);
}

export function budgetEvidence(budget: BudgetState, ctx: DetectorContext, pattern: 'wrap_up' | 'tools_blocked' | 'exhausted', detail: string): BreakerEvidence {
  const { maxTokens, maxCostUsd } = ctx.options.budget;
  return {
    detail,
    pattern,
    tokens: budget.tokens,
    maxTokens,
    ...(budget.costUsd > 0 ? { costUsd: Math.round(budget.costUsd * 1e6) / 1e6 } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
  };
}

/**
 * Adds a model round to the session budget. The first crossing asks for a
 * wrap-up (steer; tool calls are blocked from then on); the round after it is
 * the wrap-up round; a round after that is stopped. Counting never stops,
 * whatever the breaker's state.
 */
export function advanceBudget(budget: BudgetState, event: ModelEvent, seq: number, ctx: DetectorContext): { budget: BudgetState; detection: Detection | null } {
  const tokens = budget.tokens + (event.spentTokens ?? finite(event.promptTokens) + finite(event.completionTokens));
  const costUsd = budget.costUsd + finite(event.costUsd);
  const counted: BudgetState = { tokens, costUsd, phase: budget.phase };
  if (!ctx.options.budget.enabled) return { budget: counted, detection: null };
  if (budget.phase === 2) {
    return { budget: counted, detection: stopDetection(counted, ctx, seq, 'a model round ran after the wrap-up round') };
  }
  if (budget.phase === 1) return { budget: { ...counted, phase: 2 }, detection: null };
  if (!overBudget(counted, ctx)) return { budget: counted, detection: null };
  if (!ctx.options.budget.wrapUpTurn) {
    return { budget: { ...counted, phase: 2 }, detection: stopDetection(counted, ctx, seq, 'the session budget is spent') };
  }
  return {
    budget: { ...counted, phase: 1 },
    detection: {
      category: 'budget',
      key: `budget:crossed:${seq}`,
      action: 'steer',
      evidence: budgetEvidence(counted, ctx, 'wrap_up', 'the session budget is spent; one wrap-up round is left'),
    },
  };
}

export function stopDetection(budget: BudgetState, ctx: DetectorContext, seq: number, detail: string): Detection {
  return { category: 'budget', key: `budget:stop:${seq}`, action: 'stop', evidence: budgetEvidence(budget, ctx, 'exhausted', detail) };
}

function finite(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}
