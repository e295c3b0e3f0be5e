import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, MAX_TIMER_MS, validateOptions, type OptionRule, type OptionRules } from '../errors/validate-options.ts';
import type { LanguageModelV4ToolChoice } from '@ai-sdk/provider';
import type { Advisor } from './advisor.ts';
import type { ModelOptions } from './chat-client-request.ts';

const TOOL_CHOICES: ReadonlySet<unknown> = new Set(['auto', 'none', 'required']);

/** Either form of a tool choice; a `tool` choice must name its tool, or the provider fails mid-run. */
const isToolChoice: OptionRule = (value, path) => {
  if (TOOL_CHOICES.has(value)) return;
  const choice = value as { type?: unknown; toolName?: unknown } | null;
  if (typeof choice === 'object' && choice !== null) {
    if (TOOL_CHOICES.has(choice.type)) return;
    if (choice.type === 'tool' && typeof choice.toolName === 'string' && choice.toolName !== '') return;
  }
  throw new InvalidOptionError(
    path,
    `must be a tool choice ('auto' | 'none' | 'required', { type: 'auto' | 'none' | 'required' } or { type: 'tool', toolName }), got ${describeValue(value)}`,
  );
};

/** A tool choice as providers take it: the AI SDK's strings become their object form, as `generateText` does. */
export function toProviderToolChoice(choice: ModelOptions['toolChoice']): LanguageModelV4ToolChoice | undefined {
  return typeof choice === 'string' ? { type: choice } : choice;
}

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
  toolChoice: isToolChoice,
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

/** Advisors must name themselves, have a numeric order to be sorted, and a method to run. */
export function validateAdvisors(advisors: readonly unknown[], path: string): void {
  advisors.forEach((advisor, i) => {
    const a = advisor as Partial<Advisor> | null;
    if (typeof a !== 'object' || a === null || typeof a.name !== 'string' || typeof a.order !== 'number' || Number.isNaN(a.order)) {
      throw new InvalidOptionError(`${path}[${i}]`, `must be an Advisor (an object with a name and a numeric order), got ${describeValue(advisor)}`);
    }
    // Usually a misspelt method: accepted, the advisor would never run. (One with only `observe` is an observation sink.)
    if (typeof a.adviseCall !== 'function' && typeof a.adviseStream !== 'function' && typeof (a as { observe?: unknown }).observe !== 'function') {
      throw new InvalidOptionError(
        `${path}[${i}]`,
        `advisor "${a.name}" has no adviseCall, adviseStream or observe method, so it would never run; check their spelling`,
      );
    }
  });
}
