/**
 * Child-process writer for the SQLite tests: writes to a database file and
 * exits, so the test process reads what another process wrote.
 *
 *   write-conversation.ts <db> <conversationId> sample
 *     appends the sample conversation.
 *   write-conversation.ts <db> <conversationId> batches <writer> <batches> <size>
 *     appends <batches> batches of <size> user messages "w<writer> b<i> m<k>".
 *   write-conversation.ts <dir> <conversationId> first-appends <writer> <files> <startAt>
 *     at <startAt> + 40 ms * i (epoch ms), opens <dir>/first-<i>.db for each i below <files>, new or
 *     not, and appends "w<writer> f<i>" with a fresh repository each time: first appends
 *     racing other processes opening the same new file.
 */
import { join } from 'node:path';
import { SqliteChatMemoryRepository } from '../sqlite-chat-memory-repository.ts';
import { sampleConversation, userText } from '../../memory/test-support/sample-messages.ts';

const [path, conversationId, mode, writer, batches, size] = process.argv.slice(2);
if (path === undefined || conversationId === undefined) throw new Error('usage: <db> <conversationId> <mode> ...');

// Default options: the busy handling under test is what every user gets.
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
} else if (mode === 'first-appends') {
  const [files, startAt] = [Number(batches), Number(size)];
  for (let file = 0; file < files; file++) {
    // Each file at its own moment, the same in every process: the opens coincide.
    const at = startAt + file * 40;
    while (Date.now() < at) await new Promise((resolve) => setTimeout(resolve, 1));
    using own = new SqliteChatMemoryRepository({ path: join(path, `first-${file}.db`) });
    await own.append(conversationId, [userText(`w${writer} f${file}`)]);
  }
} else {
  throw new Error(`unknown mode ${String(mode)}`);
}
repository.close();
