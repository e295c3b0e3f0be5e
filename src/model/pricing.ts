import { InvalidOptionError } from '../errors/governor-error.ts';

/** Prices of one model, in US dollars per million tokens. */
export interface ModelPrice {
  /** Price of a million non-cached input (prompt) tokens. */
  inputPerMillion: number;
  /** Price of a million output (completion, including reasoning) tokens. */
  outputPerMillion: number;
  /**
   * Price of a million input tokens read from the provider's prompt cache.
   * When absent, cached tokens are priced as ordinary input (an upper bound).
   */
  cachedInputPerMillion?: number;
  /**
   * The most output tokens the model writes per call. A cost limit bounds a
   * call's output to what the budget pays for, and leaves out a bound at or
   * above this (some providers refuse one above the model's maximum: OpenAI
   * answers 400). When absent, the bound is sent as it is.
   */
  maxOutputTokens?: number;
}

/** Prices by model id (for example `gpt-4o` or `claude-sonnet-4`). */
export type PriceTable = Record<string, ModelPrice>;

/**
 * Token counts of one or more model calls. A count the provider did not report
 * stays `undefined`: it is unknown, not zero.
 */
export interface TokenUsage {
  /** All input tokens, cached ones included (the AI SDK's convention). */
  inputTokens: number | undefined;
  /** All output tokens, reasoning included. */
  outputTokens: number | undefined;
  /** The part of `inputTokens` that was read from the prompt cache. */
  cachedInputTokens: number | undefined;
}

/** A cost in US dollars, or the honest admission that it cannot be computed. */
export type CostEstimate =
  | {
      usd: number;
      /**
       * Set when the figure may be higher than the truth: cached input was priced
       * as ordinary input because the cached count or the cached price is unknown.
       */
      upperBound?: true;
    }
  | { usd: 'unknown'; reason: string };

/**
 * List prices (standard tier, USD per million tokens) as published by OpenAI and
 * Anthropic in 2025. Providers change prices: override them with your own table
 * (see {@link estimateCost}). Not modelled: batch discounts, Anthropic's cache
 * *write* surcharge, and long-context tiers (prompts over 200k tokens cost more
 * on some models), so estimates for such calls are low.
 */
export const DEFAULT_PRICES: Readonly<PriceTable> = Object.freeze({
  'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25, maxOutputTokens: 16_384 },
  // The first gpt-4o snapshot kept its launch price; an exact id wins over the family.
  'gpt-4o-2024-05-13': { inputPerMillion: 5, outputPerMillion: 15, maxOutputTokens: 4_096 },
  'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6, cachedInputPerMillion: 0.075, maxOutputTokens: 16_384 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5, maxOutputTokens: 32_768 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6, cachedInputPerMillion: 0.1, maxOutputTokens: 32_768 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4, cachedInputPerMillion: 0.025, maxOutputTokens: 32_768 },
  'gpt-5': { inputPerMillion: 1.25, outputPerMillion: 10, cachedInputPerMillion: 0.125, maxOutputTokens: 128_000 },
  'gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2, cachedInputPerMillion: 0.025, maxOutputTokens: 128_000 },
  'gpt-5-nano': { inputPerMillion: 0.05, outputPerMillion: 0.4, cachedInputPerMillion: 0.005, maxOutputTokens: 128_000 },
  o3: { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5, maxOutputTokens: 100_000 },
  'o3-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4, cachedInputPerMillion: 0.55, maxOutputTokens: 100_000 },
  'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4, cachedInputPerMillion: 0.275, maxOutputTokens: 100_000 },
  'claude-opus-4': { inputPerMillion: 15, outputPerMillion: 75, cachedInputPerMillion: 1.5, maxOutputTokens: 32_000 },
  'claude-opus-4-0': { inputPerMillion: 15, outputPerMillion: 75, cachedInputPerMillion: 1.5, maxOutputTokens: 32_000 },
  'claude-opus-4-1': { inputPerMillion: 15, outputPerMillion: 75, cachedInputPerMillion: 1.5, maxOutputTokens: 32_000 },
  'claude-sonnet-4': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3, maxOutputTokens: 64_000 },
  'claude-sonnet-4-0': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3, maxOutputTokens: 64_000 },
  'claude-sonnet-4-5': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3, maxOutputTokens: 64_000 },
  'claude-3-7-sonnet': { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3, maxOutputTokens: 64_000 },
  'claude-haiku-4-5': { inputPerMillion: 1, outputPerMillion: 5, cachedInputPerMillion: 0.1, maxOutputTokens: 64_000 },
  'claude-3-5-haiku': { inputPerMillion: 0.8, outputPerMillion: 4, cachedInputPerMillion: 0.08, maxOutputTokens: 8_192 },
});

/**
 * Returns the defaults with `overrides` merged over them, after checking every
 * override. Keys are matched case-insensitively.
 *
 * @throws InvalidOptionError when a price is negative or not a finite number.
 */
export function mergePrices(overrides?: PriceTable): PriceTable {
  if (overrides === undefined) return { ...DEFAULT_PRICES };
  if (typeof overrides !== 'object' || overrides === null) {
    throw new InvalidOptionError('prices', 'must be an object mapping model ids to prices');
  }
  for (const [id, price] of Object.entries(overrides)) validatePrice(id, price);
  return { ...DEFAULT_PRICES, ...overrides };
}

function validatePrice(id: string, price: ModelPrice): void {
  if (typeof price !== 'object' || price === null) {
    throw new InvalidOptionError(`prices.${id}`, 'must be an object with inputPerMillion and outputPerMillion');
  }
  for (const field of ['inputPerMillion', 'outputPerMillion', 'cachedInputPerMillion'] as const) {
    const value = price[field];
    if (value === undefined && field === 'cachedInputPerMillion') continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new InvalidOptionError(`prices.${id}.${field}`, 'must be a finite number >= 0 (USD per million tokens)');
    }
  }
  const max = price.maxOutputTokens;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
    throw new InvalidOptionError(`prices.${id}.maxOutputTokens`, 'must be a whole number of tokens >= 1');
  }
}

// Suffixes that name a snapshot of the same model, never a different model:
// `-2024-08-06`, `-20250514`, `@20250514` (Vertex), `-latest`, `-v1:0` (Bedrock).
const SNAPSHOT_SUFFIX = /(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|latest))?(?:-v\d+(?::\d+)?)?$/;

/**
 * The ids to try for `modelId`, most specific first: as given, without a
 * provider prefix (`openai:`, `openai/`, `anthropic.`, `us.anthropic.`), then
 * without a snapshot suffix. Only those affixes are removed, so `gpt-4o-mini`
 * can never be priced as `gpt-4o`.
 */
function candidateIds(modelId: string): string[] {
  const lower = modelId.trim().toLowerCase();
  const unprefixed = lower.replace(/^.*[/:](?=[^/:]*[a-z][^/:]*(?::\d+)?$)/, '').replace(/^(?:[a-z]{2,4}\.)?(?:anthropic|openai)\./, '');
  const unsuffixed = unprefixed.replace(SNAPSHOT_SUFFIX, '');
  return [...new Set([lower, unprefixed, unsuffixed])].filter((id) => id.length > 0);
}

/** The price entry that applies to `modelId`, or `undefined` when none does. */
export function findPrice(modelId: string, prices: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const byLowerId = new Map<string, ModelPrice>();
  for (const [id, price] of Object.entries(prices)) byLowerId.set(id.toLowerCase(), price);
  for (const id of candidateIds(modelId)) {
    const price = byLowerId.get(id);
    if (price !== undefined) return price;
  }
  return undefined;
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * Cost of `usage` on `modelId`: non-cached input at the input price, cached input
 * at the cached price, output at the output price. Says `'unknown'` (with the
 * reason) rather than guess when the model has no price or the input or output
 * count is unknown; never reports 0 for something it could not price.
 *
 * @param prices overrides merged over {@link DEFAULT_PRICES}.
 * @throws InvalidOptionError when an override is invalid.
 */
export function estimateCost(usage: TokenUsage, modelId: string, prices?: PriceTable): CostEstimate {
  const price = findPrice(modelId, mergePrices(prices));
  if (price === undefined) {
    return { usd: 'unknown', reason: `no price for model "${modelId}"; add it to the price table` };
  }
  return priceUsage(usage, price);
}

/** Cost of `usage` at `price`; `'unknown'` when a needed token count is missing or inconsistent. */
export function priceUsage(usage: TokenUsage, price: ModelPrice): CostEstimate {
  const { inputTokens, outputTokens, cachedInputTokens } = usage;
  if (!isCount(inputTokens)) return { usd: 'unknown', reason: 'the input token count is unknown' };
  if (!isCount(outputTokens)) return { usd: 'unknown', reason: 'the output token count is unknown' };
  if (cachedInputTokens !== undefined && !isCount(cachedInputTokens)) {
    return { usd: 'unknown', reason: 'the cached input token count is not a valid count' };
  }
  if (cachedInputTokens !== undefined && cachedInputTokens > inputTokens) {
    return { usd: 'unknown', reason: 'cached input tokens exceed input tokens; the usage is inconsistent' };
  }
  const cached = cachedInputTokens ?? 0;
  const cachedRate = price.cachedInputPerMillion ?? price.inputPerMillion;
  const usd = ((inputTokens - cached) * price.inputPerMillion + cached * cachedRate + outputTokens * price.outputPerMillion) / 1_000_000;
  const upperBound =
    (cachedInputTokens === undefined && price.cachedInputPerMillion !== undefined) || (cached > 0 && price.cachedInputPerMillion === undefined);
  return upperBound ? { usd, upperBound: true } : { usd };
}

const lookups = new WeakMap<object, Map<string, ModelPrice | null>>();
const DEFAULTS_KEY = {};

/**
 * {@link findPrice} over `overrides` merged with the defaults, remembered per
 * table and model id: for callers that price every model call (telemetry), where
 * re-merging and re-scanning the table each time would cost more than the call
 * it measures. The table must not change after its first use here.
 */
export function cachedPrice(modelId: string, overrides?: PriceTable): ModelPrice | undefined {
  const key = overrides ?? DEFAULTS_KEY;
  let byModel = lookups.get(key);
  if (byModel === undefined) {
    byModel = new Map();
    lookups.set(key, byModel);
  }
  let price = byModel.get(modelId);
  if (price === undefined) {
    price = findPrice(modelId, mergePrices(overrides)) ?? null;
    if (byModel.size < 1000) byModel.set(modelId, price);
  }
  return price ?? undefined;
}

/** What {@link projectCallCost} needs to know about the call before it. */
export interface CallProjectionInput {
  /** Model the next call goes to. */
  modelId: string;
  /** Input tokens of the previous call in this loop (its whole prompt). */
  lastInputTokens: number | undefined;
  /** Output tokens of the previous call; they become part of the next prompt. */
  lastOutputTokens?: number | undefined;
  /**
   * The output ceiling the next call is sent with. When absent, the previous
   * call's output is used instead and the projection is no longer a bound.
   */
  maxOutputTokens?: number | undefined;
  /** Price overrides merged over {@link DEFAULT_PRICES}. */
  prices?: PriceTable;
}

/**
 * A deliberately pessimistic estimate of the next call's cost, for a loop that
 * must not start a call that would foreseeably overshoot its cost limit. The next
 * prompt is at least the previous prompt plus the previous answer, priced with
 * no cache discount; its output is priced at `maxOutputTokens`. Tool results added
 * in between are not known in advance, so this is conservative about prices and
 * output, not a guarantee.
 */
export function projectCallCost(input: CallProjectionInput): CostEstimate {
  const { modelId, lastInputTokens, lastOutputTokens, maxOutputTokens, prices } = input;
  if (!isCount(lastInputTokens)) {
    return { usd: 'unknown', reason: 'no previous prompt size to project from' };
  }
  const output = isCount(maxOutputTokens) ? maxOutputTokens : lastOutputTokens;
  if (!isCount(output)) {
    return { usd: 'unknown', reason: 'neither maxOutputTokens nor the previous output size is known' };
  }
  const projected = estimateCost(
    { inputTokens: lastInputTokens + (isCount(lastOutputTokens) ? lastOutputTokens : 0), outputTokens: output, cachedInputTokens: 0 },
    modelId,
    prices,
  );
  return typeof projected.usd === 'number' ? { usd: projected.usd } : projected;
}
