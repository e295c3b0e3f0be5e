import type { ModelMessage } from 'ai';
import type { ChatMemory } from '../chat-memory.ts';
import { MessageWindowChatMemory } from '../message-window-chat-memory.ts';

/** A real chat memory that also counts how often it is read and written. */
export class RecordingChatMemory implements ChatMemory {
  gets = 0;
  adds = 0;
  readonly #inner: ChatMemory;

  constructor(inner: ChatMemory = new MessageWindowChatMemory({ maxMessages: 100 })) {
    this.#inner = inner;
  }

  add(conversationId: string, messages: readonly ModelMessage[]): Promise<void> {
    this.adds += 1;
    return this.#inner.add(conversationId, messages);
  }

  get(conversationId: string): Promise<ModelMessage[]> {
    this.gets += 1;
    return this.#inner.get(conversationId);
  }

  clear(conversationId: string): Promise<void> {
    return this.#inner.clear(conversationId);
  }
}
