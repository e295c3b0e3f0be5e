import type { LanguageModelV4Usage } from '@ai-sdk/provider';

/**
 * Token usage. Every field is `undefined` when the provider did not report it:
 * an unknown count stays unknown and is never treated as zero.
 */
export interface Usage {
  /** Prompt tokens, cached ones included. */
  readonly inputTokens: number | undefined;
  /** Completion tokens (reasoning included). */
  readonly outputTokens: number | undefined;
  /** Prompt tokens read from the provider's cache (a subset of `inputTokens`). */
  readonly cachedInputTokens: number | undefined;
}

/** Usage of nothing at all: zero of everything, all known. */
export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };

function addCount(a: number | undefined, b: number | undefined): number | undefined {
  // A sum with an unknown term is unknown: reporting the known part alone
  // would understate spend, which is exactly what a budget must not do.
  return a === undefined || b === undefined ? undefined : a + b;
}

/** Sums two usages field by field; a field unknown on either side is unknown in the sum. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: addCount(a.inputTokens, b.inputTokens),
    outputTokens: addCount(a.outputTokens, b.outputTokens),
    cachedInputTokens: addCount(a.cachedInputTokens, b.cachedInputTokens),
  };
}

/** Total tokens (input + output), or `undefined` when either is unknown. */
export function totalTokens(usage: Usage): number | undefined {
  return addCount(usage.inputTokens, usage.outputTokens);
}

/** Converts a provider-level (V4) usage report. */
export function fromProviderUsage(usage: LanguageModelV4Usage | undefined): Usage {
  if (usage === undefined) return { inputTokens: undefined, outputTokens: undefined, cachedInputTokens: undefined };
  return {
    inputTokens: usage.inputTokens.total,
    outputTokens: usage.outputTokens.total,
    cachedInputTokens: usage.inputTokens.cacheRead,
  };
}
