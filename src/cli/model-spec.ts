import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { GovernorError } from '../errors/governor-error.ts';
import { importOptional } from '../errors/missing-dependency-error.ts';

/** Thrown when a model spec cannot be turned into a model (unknown provider, missing key, bad URL). */
export class ModelSpecError extends GovernorError {
  constructor(message: string) {
    super('GOVERNOR_MODEL_SPEC', message);
  }
}

/** Where the CLI looks for a model when no flag names one. */
export interface ModelSpecInput {
  /** `provider:model-id`, e.g. `openai:gpt-4o`, `anthropic:claude-sonnet-4-5`, or a bare model id with `baseURL`. */
  readonly model?: string | undefined;
  /** An OpenAI-compatible endpoint (Ollama, vLLM, …), e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseURL?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The resolved model and a label safe to print (never a key). */
export interface ResolvedModelSpec {
  readonly model: LanguageModelV4;
  readonly label: string;
}

function requireKey(env: ModelSpecInput['env'], name: string, provider: string): string {
  const key = env[name];
  if (!key) {
    throw new ModelSpecError(
      `No API key for ${provider}: set the ${name} environment variable, or use an OpenAI-compatible server with --base-url (or GOVERNOR_BASE_URL).`,
    );
  }
  return key;
}

/**
 * Whether the environment names any real model: a model flag, a base URL, or a
 * provider key. Without one the main job falls back to the scripted stand-in.
 */
export function hasModelConfiguration(input: ModelSpecInput): boolean {
  const { env } = input;
  return Boolean(input.model || input.baseURL || env.GOVERNOR_MODEL || env.GOVERNOR_BASE_URL || env.OPENAI_API_KEY || env.ANTHROPIC_API_KEY);
}

/**
 * Turns `--model`/`--base-url` (or `GOVERNOR_MODEL`, `GOVERNOR_BASE_URL`,
 * `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) into a provider-package model.
 * The `openai:` and `anthropic:` providers are optional peer dependencies,
 * loaded only when named; a missing one rejects with `MissingDependencyError`.
 */
export async function resolveModelSpec(input: ModelSpecInput): Promise<ResolvedModelSpec> {
  const { env } = input;
  const baseURL = input.baseURL ?? env.GOVERNOR_BASE_URL;
  let spec = input.model ?? env.GOVERNOR_MODEL;
  if (baseURL !== undefined) {
    try {
      new URL(baseURL);
    } catch {
      throw new ModelSpecError(`The base URL "${baseURL}" is not a valid URL (expected e.g. http://127.0.0.1:11434/v1).`);
    }
    const modelId = spec?.replace(/^(openai-compatible|openai|ollama|vllm):/, '');
    if (!modelId) throw new ModelSpecError('With a base URL, name the model too: --model llama3.1 (or GOVERNOR_MODEL).');
    const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey: env.GOVERNOR_API_KEY ?? env.OPENAI_API_KEY, includeUsage: true });
    return { model: provider(modelId), label: `${modelId} at ${new URL(baseURL).host}` };
  }
  if (spec === undefined) {
    if (env.OPENAI_API_KEY) spec = 'openai:gpt-4o-mini';
    else if (env.ANTHROPIC_API_KEY) spec = 'anthropic:claude-sonnet-4-5';
    else throw new ModelSpecError('No model configured: pass --model openai:gpt-4o (with OPENAI_API_KEY set), or --base-url for an OpenAI-compatible server.');
  }
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) {
    throw new ModelSpecError(`The model spec "${spec}" should look like provider:model-id, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5.`);
  }
  const provider = spec.slice(0, colon);
  const modelId = spec.slice(colon + 1);
  switch (provider) {
    case 'openai': {
      const apiKey = requireKey(env, 'OPENAI_API_KEY', 'OpenAI');
      const { createOpenAI } = await importOptional('@ai-sdk/openai', 'The openai: provider', () => import('@ai-sdk/openai'));
      return { model: createOpenAI({ apiKey, baseURL: env.OPENAI_BASE_URL })(modelId), label: spec };
    }
    case 'anthropic': {
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', 'Anthropic');
      const { createAnthropic } = await importOptional('@ai-sdk/anthropic', 'The anthropic: provider', () => import('@ai-sdk/anthropic'));
      return { model: createAnthropic({ apiKey })(modelId), label: spec };
    }
    default:
      throw new ModelSpecError(`Unknown provider "${provider}" in "${spec}": use openai:, anthropic:, or --base-url for an OpenAI-compatible server.`);
  }
}
