import type { LanguageModelV4Content } from '@ai-sdk/provider';
import { ToolChoiceViolationError } from 'ai';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatResponse } from './chat-response.ts';
import { toProviderToolChoice } from './model-options.ts';

/**
 * Context key a tool loop sets once it sends its rounds with `toolChoice:
 * 'none'` of its own accord (a limit was hit): it handles a provider that
 * ignores that itself, so those rounds are not held to it here.
 */
export const LOOP_FORCED_NO_TOOLS = 'governor.loopForcedNoTools';

/**
 * The AI SDK's `ToolChoiceViolationError` when a round did not do what the
 * request's `toolChoice` demanded, as `generateText` and `streamText` throw
 * it: a call of the named tool (`{ type: 'tool' }`), any call (`'required'`),
 * or none (`'none'`). A round the provider cut short (`interrupted`) is not
 * held to a required call.
 */
export function toolChoiceViolation(
  request: ChatClientRequest,
  response: ChatResponse,
  content: readonly LanguageModelV4Content[],
  model: { readonly provider: string; readonly modelId: string },
): ToolChoiceViolationError | undefined {
  const choice = toProviderToolChoice(request.options.toolChoice);
  if (choice === undefined || choice.type === 'auto') return undefined;
  const calls = content.filter((part) => part.type === 'tool-call' && part.providerExecuted !== true);
  const violated =
    choice.type === 'none'
      ? calls.length > 0 && request.context.get(LOOP_FORCED_NO_TOOLS) !== true
      : response.finishReason !== 'interrupted' &&
        !calls.some((call) => call.type === 'tool-call' && (choice.type === 'required' || call.toolName === choice.toolName));
  if (!violated) return undefined;
  return new ToolChoiceViolationError({
    toolChoice: choice,
    finishReason: response.finishReason,
    provider: model.provider,
    modelId: response.modelId || model.modelId,
    content: [...content],
  });
}
