import assert from 'node:assert/strict';
import { settlesWithin } from '../../test-support/settles-within.ts';
import { ChatMemoryStoreError } from '../chat-memory-errors.ts';
import type { ChatMemoryRepository } from '../chat-memory-repository.ts';
import { userText } from './sample-messages.ts';

/** The call was refused because the repository had been closed: nothing was sent. */
export function closedRefusal(error: unknown): true {
  assert.ok(ChatMemoryStoreError.isInstance(error), String(error));
  assert.match(error.message, /the repository has been closed/);
  assert.equal(error.mayBeApplied, false);
  return true;
}

/** Every method of a closed repository, and disposing of it again, fails at once saying that it was closed. */
export async function assertRefusedWhenClosed(repository: ChatMemoryRepository & AsyncDisposable): Promise<void> {
  const calls: (() => Promise<unknown>)[] = [
    () => repository.findConversationIds(),
    () => repository.findByConversationId('c'),
    () => repository.append('c', [userText('refused')]),
    () => repository.saveAll('c', [userText('refused')]),
    () => repository.deleteByConversationId('c'),
    async () => {
      await repository[Symbol.asyncDispose]();
      return repository.findConversationIds();
    },
  ];
  for (const call of calls) await assert.rejects(settlesWithin(call(), 2000, 'the call'), closedRefusal);
}
