import type { LanguageModelV2, LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { resolveLanguageModel } from 'ai/internal';
import { GovernorError } from '../errors/governor-error.ts';
import { describeValue } from '../errors/validate-options.ts';

/** The AI SDK language-model specifications Governor accepts. */
export const SUPPORTED_MODEL_SPECIFICATIONS = ['v2', 'v3', 'v4'] as const;

/** Any AI SDK language model Governor can drive. */
export type SupportedLanguageModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4;

/** Thrown when something that is not an AI SDK language model of a supported spec is passed as a model. */
export class UnsupportedModelError extends GovernorError {
  declare readonly code: 'GOVERNOR_UNSUPPORTED_MODEL';
  /** The `specificationVersion` found, if any. */
  readonly specificationVersion: string | undefined;

  constructor(found: string | undefined, what: string) {
    super(
      'GOVERNOR_UNSUPPORTED_MODEL',
      `${what} is not a supported AI SDK language model: expected specificationVersion ` +
        `${SUPPORTED_MODEL_SPECIFICATIONS.map((v) => `"${v}"`).join(', ')}` +
        (found === undefined ? '' : `, got "${found}"`) +
        '. Pass a model object from a provider package, e.g. openai("gpt-4o").',
    );
    this.specificationVersion = found;
  }
}

/**
 * Normalises any supported model to the V4 interface, once, at the boundary.
 * Strings are rejected on purpose: the AI SDK would resolve them through a
 * hosted gateway, which is a network dependency the caller did not ask for.
 */
export function resolveModel(model: unknown): LanguageModelV4 {
  if (typeof model !== 'object' || model === null) {
    throw new UnsupportedModelError(
      undefined,
      typeof model === 'string' ? `The string ${describeValue(model)}` : `A value of type ${model === null ? 'null' : typeof model}`,
    );
  }
  const candidate = model as { specificationVersion?: unknown; doGenerate?: unknown; doStream?: unknown };
  const version = typeof candidate.specificationVersion === 'string' ? candidate.specificationVersion : undefined;
  if (
    version === undefined ||
    !(SUPPORTED_MODEL_SPECIFICATIONS as readonly string[]).includes(version) ||
    typeof candidate.doGenerate !== 'function' ||
    typeof candidate.doStream !== 'function'
  ) {
    throw new UnsupportedModelError(version, 'The given model');
  }
  return resolveLanguageModel(model as SupportedLanguageModel);
}
