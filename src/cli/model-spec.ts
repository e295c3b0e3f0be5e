import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { GovernorError } from '../errors/governor-error.ts';
import { importOptional } from '../runtime/import-optional.ts';
import { redactUnparsedUrl } from '../redaction/redact.ts';

/** Thrown when a model spec cannot be turned into a model (unknown provider, missing key, bad URL). */
class ModelSpecError extends GovernorError {
  declare readonly code: 'GOVERNOR_MODEL_SPEC';
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

/**
 * A variable of the environment, or `undefined` when it is unset or empty:
 * `GOVERNOR_MODEL= governor run …` means the same as leaving it out, for every
 * variable the CLI reads.
 */
function variable(env: ModelSpecInput['env'], name: string): string | undefined {
  const value = env[name];
  return value === '' ? undefined : value;
}

function requireKey(env: ModelSpecInput['env'], name: string, provider: string): string {
  const key = variable(env, name);
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
 * An empty variable counts as unset, as in {@link resolveModelSpec}.
 */
export function hasModelConfiguration(input: ModelSpecInput): boolean {
  const { env } = input;
  return (
    input.model !== undefined ||
    input.baseURL !== undefined ||
    ['GOVERNOR_MODEL', 'GOVERNOR_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY'].some((name) => variable(env, name) !== undefined)
  );
}

/**
 * Turns `--model`/`--base-url` (or `GOVERNOR_MODEL`, `GOVERNOR_BASE_URL`,
 * `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) into a provider-package model.
 * The `openai:` and `anthropic:` providers are optional peer dependencies,
 * loaded only when named; a missing one rejects with `MissingDependencyError`.
 * An empty variable counts as unset; a flag counts as given, even empty.
 *
 * @throws ModelSpecError for an unknown provider, a missing key, or a base URL
 *   that is not an http(s) URL or holds credentials (`user:password@`, refused:
 *   fetch cannot send a request to it; the key goes in `GOVERNOR_API_KEY`)
 */
export async function resolveModelSpec(input: ModelSpecInput): Promise<ResolvedModelSpec> {
  const { env } = input;
  const baseURL = input.baseURL ?? variable(env, 'GOVERNOR_BASE_URL');
  let spec = input.model ?? variable(env, 'GOVERNOR_MODEL');
  if (baseURL !== undefined) {
    const url = checkedBaseUrl(baseURL, '--base-url or GOVERNOR_BASE_URL', 'GOVERNOR_API_KEY (or OPENAI_API_KEY), sent as a Bearer token');
    const modelId = spec?.replace(/^(openai-compatible|openai|ollama|vllm):/, '');
    if (!modelId) throw new ModelSpecError('With a base URL, name the model too: --model llama3.1 (or GOVERNOR_MODEL).');
    const apiKey = variable(env, 'GOVERNOR_API_KEY') ?? variable(env, 'OPENAI_API_KEY');
    const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL, apiKey, includeUsage: true });
    return { model: provider(modelId), label: `${modelId} at ${url.host}` };
  }
  if (spec === undefined) {
    if (variable(env, 'OPENAI_API_KEY') !== undefined) spec = 'openai:gpt-4o-mini';
    else if (variable(env, 'ANTHROPIC_API_KEY') !== undefined) spec = 'anthropic:claude-sonnet-4-5';
    else throw new ModelSpecError('No model configured: pass --model openai:gpt-4o (with OPENAI_API_KEY set), or --base-url for an OpenAI-compatible server.');
  }
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) {
    throw new ModelSpecError(`The model spec "${spec}" should look like provider:model-id, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5.`);
  }
  const provider = spec.slice(0, colon);
  const modelId = spec.slice(colon + 1);
  switch (provider) {
    // The provider packages read these variables themselves: checked here as the base URL is, and named in the header.
    case 'openai': {
      const apiKey = requireKey(env, 'OPENAI_API_KEY', 'OpenAI');
      const own = variable(env, 'OPENAI_BASE_URL');
      const host = own === undefined ? undefined : checkedBaseUrl(own, 'OPENAI_BASE_URL', 'OPENAI_API_KEY').host;
      const { createOpenAI } = await importOptional('@ai-sdk/openai', 'The openai: provider', () => import('@ai-sdk/openai'));
      return { model: createOpenAI({ apiKey, baseURL: own })(modelId), label: host === undefined ? spec : `${spec} at ${host}` };
    }
    case 'anthropic': {
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', 'Anthropic');
      const own = variable(env, 'ANTHROPIC_BASE_URL');
      const host = own === undefined ? undefined : checkedBaseUrl(own, 'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY').host;
      const { createAnthropic } = await importOptional('@ai-sdk/anthropic', 'The anthropic: provider', () => import('@ai-sdk/anthropic'));
      return { model: createAnthropic({ apiKey, baseURL: own })(modelId), label: host === undefined ? spec : `${spec} at ${host}` };
    }
    default:
      throw new ModelSpecError(`Unknown provider "${provider}" in "${spec}": use openai:, anthropic:, or --base-url for an OpenAI-compatible server.`);
  }
}

/**
 * A base URL, refused at once where every model call would fail, each after its retries: one that does not parse,
 * is not http(s), or holds credentials (fetch will not send a request to it). `source` names the setting, `key` where
 * the key goes instead. Never echoed beyond what cannot be a secret: whatever stands before an `@` may be a password.
 */
function checkedBaseUrl(value: string, source: string, key: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ModelSpecError(`The base URL "${redactUnparsedUrl(value)}" is not a valid URL (${source}; expected e.g. http://127.0.0.1:11434/v1).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ModelSpecError(`The base URL (${source}) must be an http: or https: URL, not ${url.protocol} (expected e.g. http://127.0.0.1:11434/v1).`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ModelSpecError(`The base URL (${source}) must not hold credentials (user:password@): set the key in ${key}.`);
  }
  return url;
}
