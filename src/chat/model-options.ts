import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, MAX_TIMER_MS, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { Advisor } from './advisor.ts';
import type { ModelOptions } from './chat-client-request.ts';

/** What each model setting accepts; provider-specific ranges are left to the provider. */
const MODEL_OPTION_RULES: OptionRules<ModelOptions> = {
  maxOutputTokens: is.integer(1),
  temperature: is.number(0),
  topP: is.number(0, 1),
  topK: is.integer(1),
  presencePenalty: is.number(-Number.MAX_VALUE),
  frequencyPenalty: is.number(-Number.MAX_VALUE),
  stopSequences: is.arrayOf(is.string()),
  seed: is.integer(Number.MIN_SAFE_INTEGER),
  toolChoice: is.having("a tool choice ({ type: 'auto' | 'none' | 'required' } or { type: 'tool', toolName })", 'type'),
  providerOptions: is.recordOf(is.object()),
  headers: is.recordOf((value, path) => {
    if (value !== undefined) is.string()(value, path);
  }),
  maxRetries: is.integer(0, 100),
  retryDelayMs: is.integer(0, MAX_TIMER_MS),
  stallTimeoutMs: is.timeMs(),
};

/**
 * Checks model settings where they are given (builder or request), so a typo
 * or a bad value fails there, not as a provider error mid-run.
 * @throws InvalidOptionError naming the setting
 */
export function validateModelOptions(options: ModelOptions): void {
  validateOptions('the model settings', options, MODEL_OPTION_RULES);
}

/** Advisors must at least name themselves and have a numeric order to be sorted. */
export function validateAdvisors(advisors: readonly unknown[], path: string): void {
  advisors.forEach((advisor, i) => {
    const a = advisor as Partial<Advisor> | null;
    if (typeof a !== 'object' || a === null || typeof a.name !== 'string' || typeof a.order !== 'number' || Number.isNaN(a.order)) {
      throw new InvalidOptionError(`${path}[${i}]`, `must be an Advisor (an object with a name and a numeric order), got ${describeValue(advisor)}`);
    }
  });
}
