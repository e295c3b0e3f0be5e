import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Counts the tokens of a text, for token budgets. Plug in your model's real tokenizer for exact counts. */
export interface Tokenizer {
  count(text: string): number;
}

/** Options of {@link CharsPerTokenEstimator}. */
export interface CharsPerTokenEstimatorOptions {
  /**
   * Characters (UTF-16 code units) per token. Four is the usual rule of thumb
   * for English text with GPT-style tokenizers; code, JSON and non-Latin
   * scripts usually have fewer characters per token.
   * @default 4
   */
  charsPerToken?: number;
}

/** What each option of CharsPerTokenEstimator accepts. */
const CHARS_PER_TOKEN_ESTIMATOR_OPTION_RULES: OptionRules<CharsPerTokenEstimatorOptions> = {
  charsPerToken: is.number(0, Number.MAX_VALUE, { exclusiveMin: true }),
};

/**
 * An ESTIMATE, not a tokenizer: `ceil(text.length / charsPerToken)`. Needs no
 * model files and no network, which is why it is the default; budgets built on
 * it are approximate. Use a real tokenizer where a ceiling must be exact.
 */
export class CharsPerTokenEstimator implements Tokenizer {
  readonly #charsPerToken: number;

  constructor(options: CharsPerTokenEstimatorOptions = {}) {
    validateOptions('CharsPerTokenEstimator', options, CHARS_PER_TOKEN_ESTIMATOR_OPTION_RULES);
    this.#charsPerToken = options.charsPerToken ?? 4;
  }

  count(text: string): number {
    return Math.ceil(text.length / this.#charsPerToken);
  }
}
