import type { LanguageModelV4Content, LanguageModelV4Reasoning, LanguageModelV4StreamPart, LanguageModelV4Text } from '@ai-sdk/provider';

/**
 * Gathers a streamed round into the content `doGenerate` would have returned
 * for it, as the AI SDK's `streamText` does: each text or reasoning block is
 * one part, placed where the block started, and carries the latest provider
 * metadata its start, deltas or end reported (Anthropic sends a thinking
 * block's signature on its last delta, OpenAI a reasoning item's encrypted
 * content on its end). Whole parts (tool calls, hosted tools' results,
 * files, sources) are kept in stream order.
 */
export class StreamedContent {
  readonly #parts: LanguageModelV4Content[] = [];
  /** Blocks started and not yet ended, by kind and stream id. */
  readonly #open = new Map<string, LanguageModelV4Text | LanguageModelV4Reasoning>();

  /** The parts so far, in stream order. */
  get parts(): readonly LanguageModelV4Content[] {
    return this.#parts;
  }

  /** Records a stream part; parts that are not content (usage, metadata, errors) are ignored. */
  add(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        this.#start(part.type === 'text-start' ? 'text' : 'reasoning', part.id, part.providerMetadata);
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.#block(part.type === 'text-delta' ? 'text' : 'reasoning', part.id);
        block.text += part.delta;
        if (part.providerMetadata !== undefined) block.providerMetadata = part.providerMetadata;
        break;
      }
      case 'text-end':
      case 'reasoning-end': {
        const kind = part.type === 'text-end' ? 'text' : 'reasoning';
        const block = this.#open.get(`${kind}:${part.id}`);
        if (part.providerMetadata !== undefined) {
          if (block === undefined) this.#start(kind, part.id, part.providerMetadata);
          else block.providerMetadata = part.providerMetadata;
        }
        this.#open.delete(`${kind}:${part.id}`);
        break;
      }
      case 'tool-call':
      case 'tool-result':
      case 'tool-approval-request':
      case 'custom':
      case 'file':
      case 'reasoning-file':
      case 'source':
        this.#parts.push(part);
        break;
      default:
        break;
    }
  }

  #start(kind: 'text' | 'reasoning', id: string, providerMetadata: LanguageModelV4Text['providerMetadata']): LanguageModelV4Text | LanguageModelV4Reasoning {
    const block: LanguageModelV4Text | LanguageModelV4Reasoning = { type: kind, text: '', ...(providerMetadata === undefined ? {} : { providerMetadata }) };
    this.#parts.push(block);
    this.#open.set(`${kind}:${id}`, block);
    return block;
  }

  /** The open block of that id; a delta without a start (some models skip it) starts one. */
  #block(kind: 'text' | 'reasoning', id: string): LanguageModelV4Text | LanguageModelV4Reasoning {
    return this.#open.get(`${kind}:${id}`) ?? this.#start(kind, id, undefined);
  }
}
