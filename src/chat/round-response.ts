import type {
  JSONValue,
  LanguageModelV4Content,
  LanguageModelV4File,
  LanguageModelV4ReasoningFile,
  SharedV4ProviderMetadata,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { convertUint8ArrayToBase64 } from '@ai-sdk/provider-utils';
import type { AssistantContent, ModelMessage, ToolResultPart } from 'ai';
import { DEFAULT_MAX_NESTING_DEPTH, jsonNestsDeeperThan } from '../errors/nesting-depth.ts';
import type { Usage } from '../model/usage.ts';
import type { GovernedToolSet } from './chat-client-request.ts';
import type { ChatResponse, FinishReason, ToolCallRequest } from './chat-response.ts';

type AssistantPart = Exclude<AssistantContent, string>[number];

/** What one model round reported besides its content. */
export interface RoundOutcome {
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly modelId: string;
  readonly warnings: readonly SharedV4Warning[];
}

/**
 * One model round as a response. Its message is built as the AI SDK's
 * `generateText` builds `response.messages` (see {@link assistantTurn}), so
 * that memory and the tool loop's next round send the turn back as the
 * provider produced it.
 *
 * @param tools the request's tools: a hosted tool's `toModelOutput` shapes its result
 */
export async function buildResponse(content: readonly LanguageModelV4Content[], outcome: RoundOutcome, tools: GovernedToolSet): Promise<ChatResponse> {
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  const { assistant, toolCalls } = await assistantTurn(content, tools);
  const messages: ModelMessage[] = assistant.length > 0 ? [{ role: 'assistant', content: assistant }] : [];
  return {
    text,
    content,
    toolCalls,
    finishReason: outcome.finishReason,
    usage: outcome.usage,
    totalUsage: outcome.usage,
    rounds: 1,
    messages,
    modelId: outcome.modelId,
    warnings: outcome.warnings,
  };
}

/** Parses a model's JSON-encoded tool input; an empty string means no arguments. */
export function toToolCallRequest(part: { toolCallId: string; toolName: string; input: string }): ToolCallRequest {
  let input: unknown = part.input;
  if (part.input.trim() === '') input = {};
  else if (jsonNestsDeeperThan(part.input, DEFAULT_MAX_NESTING_DEPTH)) {
    // Left as text, never parsed: every consumer of parsed arguments (schema checks, the breaker's fingerprints) recurses.
  } else {
    try {
      input = JSON.parse(part.input);
    } catch {
      // Left as text: the tool loop reports invalid arguments to the model.
    }
  }
  return { toolCallId: part.toolCallId, toolName: part.toolName, input, rawInput: part.input };
}

/**
 * The assistant message parts of one round, as `generateText` keeps them,
 * and the calls of client tools among them, for the tool loop to run:
 * every part keeps its `providerMetadata` as `providerOptions`, because
 * providers need it back and refuse the next request without it (Anthropic's
 * thinking signatures, Gemini's thought signatures, OpenAI's reasoning item
 * ids). Reasoning stays even with empty text (redacted or encrypted
 * reasoning carries only metadata); so do generated files and the calls and
 * results of tools the provider ran itself. Sources are left out, as no
 * provider expects them back, and so are a provider's own approval requests,
 * which the tool loop does not answer.
 */
async function assistantTurn(
  content: readonly LanguageModelV4Content[],
  tools: GovernedToolSet,
): Promise<{ assistant: AssistantPart[]; toolCalls: ToolCallRequest[] }> {
  const parts: AssistantPart[] = [];
  const toolCalls: ToolCallRequest[] = [];
  const hostedInputs = new Map<string, unknown>();
  for (const part of content) {
    switch (part.type) {
      case 'text':
        // An empty text block is noise unless it carries metadata (a Gemini thought signature can come alone).
        if (part.text.length > 0 || part.providerMetadata !== undefined) parts.push({ type: 'text', text: part.text, ...options(part.providerMetadata) });
        break;
      case 'reasoning':
        parts.push({ type: 'reasoning', text: part.text, ...options(part.providerMetadata) });
        break;
      case 'custom':
        parts.push({ type: 'custom', kind: part.kind, ...options(part.providerMetadata) });
        break;
      case 'file':
        parts.push({ type: 'file', data: fileData(part), mediaType: part.mediaType, ...options(part.providerMetadata) });
        break;
      case 'reasoning-file':
        parts.push({ type: 'reasoning-file', data: fileData(part), mediaType: part.mediaType, ...options(part.providerMetadata) });
        break;
      case 'tool-call': {
        const call = toToolCallRequest(part);
        const hosted = part.providerExecuted === true;
        if (hosted) hostedInputs.set(call.toolCallId, call.input);
        else toolCalls.push(call);
        parts.push({
          type: 'tool-call',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          ...(hosted ? { providerExecuted: true } : {}),
          ...options(part.providerMetadata),
        });
        break;
      }
      case 'tool-result':
        // A model reports only the results of tools its provider ran; client tools' results come from the tool loop.
        parts.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: await hostedOutput(part.toolCallId, part.toolName, hostedInputs.get(part.toolCallId), part.result, part.isError === true, tools),
          ...options(part.providerMetadata),
        });
        break;
      default:
        break;
    }
  }
  return { assistant: parts, toolCalls };
}

function options(metadata: SharedV4ProviderMetadata | undefined): { providerOptions?: SharedV4ProviderMetadata } {
  return metadata === undefined ? {} : { providerOptions: metadata };
}

/** Bytes as base64, as `generateText` keeps them, so that the message stays plain JSON. */
function fileData(part: LanguageModelV4File | LanguageModelV4ReasoningFile): string | URL {
  if (part.data.type === 'url') return part.data.url;
  return typeof part.data.data === 'string' ? part.data.data : convertUint8ArrayToBase64(part.data.data);
}

/** A hosted tool's result as the model is sent it back, as the AI SDK's `createToolModelOutput` makes it. */
async function hostedOutput(
  toolCallId: string,
  toolName: string,
  input: unknown,
  result: NonNullable<JSONValue>,
  isError: boolean,
  tools: GovernedToolSet,
): Promise<ToolResultPart['output']> {
  if (isError) return { type: 'error-json', value: result };
  const tool = Object.hasOwn(tools, toolName) ? tools[toolName] : undefined;
  if (tool?.toModelOutput !== undefined) return tool.toModelOutput({ toolCallId, input, output: result });
  return typeof result === 'string' ? { type: 'text', value: result } : { type: 'json', value: result };
}
