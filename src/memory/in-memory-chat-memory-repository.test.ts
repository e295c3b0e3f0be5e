import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemoryChatMemoryRepository } from './in-memory-chat-memory-repository.ts';
import { chatMemoryRepositoryContract } from './test-support/chat-memory-repository-contract.ts';
import { sampleConversation, userText } from './test-support/sample-messages.ts';

chatMemoryRepositoryContract('InMemoryChatMemoryRepository', async () => {
  // One process, one map: every handle is the same repository.
  const repository = new InMemoryChatMemoryRepository();
  return { open: async () => repository, cleanup: async () => {} };
});

test('messages read back are copies: changing them does not change the store', async () => {
  const repository = new InMemoryChatMemoryRepository();
  const written = sampleConversation();
  await repository.append('c', written);

  const read = await repository.findByConversationId('c');
  read.push(userText('sneaked in'));
  const image = read[1]?.content[1];
  if (typeof image === 'object' && image.type === 'image' && image.image instanceof Uint8Array) image.image[0] = 42;
  written.pop();

  assert.deepStrictEqual(await repository.findByConversationId('c'), sampleConversation());
});
