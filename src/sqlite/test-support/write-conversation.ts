/**
 * Child-process writer for the SQLite tests: writes to a database file and
 * exits, so the test process reads what another process wrote.
 *
 *   write-conversation.ts <db> <conversationId> sample
 *     appends the sample conversation.
 *   write-conversation.ts <db> <conversationId> batches <writer> <batches> <size>
 *     appends <batches> batches of <size> user messages "w<writer> b<i> m<k>".
 */
import { SqliteChatMemoryRepository } from '../sqlite-chat-memory-repository.ts';
import { sampleConversation, userText } from '../../memory/test-support/sample-messages.ts';

const [path, conversationId, mode, writer, batches, size] = process.argv.slice(2);
if (path === undefined || conversationId === undefined) throw new Error('usage: <db> <conversationId> <mode> ...');

const repository = new SqliteChatMemoryRepository({ path, busyTimeoutMs: 30_000 });
if (mode === 'sample') {
  await repository.append(conversationId, sampleConversation());
} else if (mode === 'batches') {
  for (let batch = 0; batch < Number(batches); batch++) {
    await repository.append(
      conversationId,
      Array.from({ length: Number(size) }, (_, k) => userText(`w${writer} b${batch} m${k}`)),
    );
  }
} else {
  throw new Error(`unknown mode ${String(mode)}`);
}
repository.close();
