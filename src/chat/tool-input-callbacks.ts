import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import type { ChatClientRequest, GovernedTool } from './chat-client-request.ts';
import { toProviderToolChoice } from './model-options.ts';
import { toolContextOf, type GovernorToolContext } from './tool-context.ts';

/**
 * Calls a tool's `onInputStart` and `onInputDelta` as its arguments stream
 * in, as `streamText` does: awaited in stream order, with the messages sent
 * for the round, and a callback that throws fails the stream. With
 * `toolChoice: 'none'` the model is offered no tool to run, so, as in
 * `streamText`, none is called.
 */
export class ToolInputCallbacks {
  readonly #request: ChatClientRequest;
  readonly #off: boolean;
  /** Tool names of the calls whose arguments are streaming, by call id (deltas carry only the id). */
  readonly #streaming = new Map<string, string>();
  #messages: ModelMessage[] | undefined;
  #context: GovernorToolContext | undefined;

  constructor(request: ChatClientRequest) {
    this.#request = request;
    this.#off = toProviderToolChoice(request.options.toolChoice)?.type === 'none';
  }

  /** Whether `part` starts the arguments of a tool that listens to them: from then on the stream is not retried. */
  listensTo(part: LanguageModelV4StreamPart): boolean {
    if (part.type !== 'tool-input-start') return false;
    const tool = this.#tool(part.toolName);
    return tool?.onInputStart !== undefined || tool?.onInputDelta !== undefined;
  }

  /** Tells the tool a stream part is about. */
  async hear(part: LanguageModelV4StreamPart): Promise<void> {
    switch (part.type) {
      case 'tool-input-start': {
        this.#streaming.set(part.id, part.toolName);
        await this.#tool(part.toolName)?.onInputStart?.({ toolCallId: part.id, ...this.#options() });
        break;
      }
      case 'tool-input-delta': {
        const name = this.#streaming.get(part.id);
        const tool = name === undefined ? undefined : this.#tool(name);
        await tool?.onInputDelta?.({ inputTextDelta: part.delta, toolCallId: part.id, ...this.#options() });
        break;
      }
      case 'tool-call':
        this.#streaming.delete(part.toolCallId);
        break;
      default:
        break;
    }
  }

  /** Own keys only: a model naming `constructor` has no tool. */
  #tool(name: string): GovernedTool | undefined {
    if (this.#off || !Object.hasOwn(this.#request.tools, name)) return undefined;
    return this.#request.tools[name];
  }

  #options(): { messages: ModelMessage[]; abortSignal: AbortSignal | undefined; context: GovernorToolContext } {
    this.#messages ??= [...this.#request.messages];
    this.#context ??= toolContextOf(this.#request);
    return { messages: this.#messages, abortSignal: this.#request.abortSignal, context: this.#context };
  }
}
