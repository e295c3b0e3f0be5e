import type { ModelPrice } from '../model/pricing.ts';

/**
 * The fewest output tokens a call is worth making for: a call the budget
 * allows fewer is refused rather than made and cut off mid-answer (a tool
 * call cut short is useless and still billed). A smaller `maxOutputTokens`
 * of the caller's own is taken as the minimum instead.
 */
const MIN_OUTPUT_TOKENS = 64;

/** What {@link callBudget} weighs. */
export interface CallBudgetInput {
  /** The model's price, and the most output tokens it writes per call when known (`maxOutputTokens`). */
  readonly price: ModelPrice;
  /** USD the run may still spend. */
  readonly remainingUsd: number;
  /** The projected size of the call's prompt, priced as uncached input. */
  readonly inputTokens: number;
  /** The caller's own bound on the call's output, never raised. */
  readonly maxOutputTokens: number | undefined;
}

/** The call may go, with this bound on its output (`undefined`: none needed), or it may not, and what its least would cost. */
export type CallBudget =
  | { readonly affordable: true; readonly maxOutputTokens: number | undefined }
  | { readonly affordable: false; readonly minimumUsd: number; readonly minimumOutputTokens: number };

/**
 * Whether the remaining budget pays for a call's projected input and at
 * least {@link MIN_OUTPUT_TOKENS} of output, and the output bound that keeps
 * the call within it: the output tokens what is left after the input pays
 * for, at the model's output price, or the caller's own bound when smaller.
 * A bound at or above the model's maximum (`price.maxOutputTokens`) is left
 * out: the model cannot write more, and some providers refuse it.
 */
export function callBudget(input: CallBudgetInput): CallBudget {
  const { price, remainingUsd, inputTokens, maxOutputTokens } = input;
  const inputUsd = (inputTokens * price.inputPerMillion) / 1_000_000;
  const perOutputToken = price.outputPerMillion / 1_000_000;
  const minimumOutputTokens = Math.min(MIN_OUTPUT_TOKENS, maxOutputTokens ?? MIN_OUTPUT_TOKENS);
  const minimumUsd = inputUsd + minimumOutputTokens * perOutputToken;
  if (minimumUsd > remainingUsd) return { affordable: false, minimumUsd, minimumOutputTokens };
  // Free output needs no bound; otherwise the whole tokens the rest pays for.
  const affordableOutput = perOutputToken === 0 ? Number.POSITIVE_INFINITY : Math.floor((remainingUsd - inputUsd) / perOutputToken);
  if (maxOutputTokens !== undefined && maxOutputTokens <= affordableOutput) return { affordable: true, maxOutputTokens };
  if (maxOutputTokens === undefined) {
    const modelMaximum = price.maxOutputTokens;
    if (!Number.isFinite(affordableOutput) || (modelMaximum !== undefined && affordableOutput >= modelMaximum)) {
      return { affordable: true, maxOutputTokens: undefined };
    }
  }
  return { affordable: true, maxOutputTokens: Math.max(minimumOutputTokens, Math.min(affordableOutput, Number.MAX_SAFE_INTEGER)) };
}
