import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';

import type { ScriptedModelServer } from './scripted-model-server.ts';

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * Sent as `Authorization: Bearer <apiKey>`. The stand-in ignores it (and redacts it in
   * `server.requests`); set it to check that your code sends credentials.
   * @default no Authorization header
   */
  apiKey?: string;
  /**
   * Extra request headers, e.g. to check that your code forwards them.
   * @default none
   */
  headers?: Record<string, string>;
}

/**
 * An AI SDK language model that talks to a {@link ScriptedModelServer} through the
 * real `@ai-sdk/openai-compatible` provider, so the provider's own HTTP, JSON and
 * streaming code runs against the scripted stand-in. Streams report usage.
 *
 * @param server a started server (its `baseURL` is read now)
 * @throws ScriptedModelServerError when the server has not been started
 */
export function scriptedModel(server: ScriptedModelServer, options: ScriptedModelOptions = {}): LanguageModelV4 {
  const provider = createOpenAICompatible({
    name: 'scripted',
    baseURL: server.baseURL,
    includeUsage: true,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
  return provider(server.modelId);
}
