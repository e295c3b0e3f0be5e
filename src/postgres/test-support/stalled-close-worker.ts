/**
 * A process that reads a conversation with a PostgresChatMemoryRepository
 * (`timeoutMs` 300) through a relay to the server at WORKER_DATABASE_URL,
 * then stalls the relay as a stopped server would (it holds every connection
 * open, answers nothing, not even a FIN), closes the repository and prints
 * `closed in <ms>`. The relay keeps nothing alive itself: the process exits
 * by itself exactly when the repository has let go of its connections.
 */
import net from 'node:net';
import { PostgresChatMemoryRepository } from '../postgres-chat-memory-repository.ts';

const target = new URL(process.env['WORKER_DATABASE_URL'] ?? '');
const tableName = process.env['WORKER_TABLE'];
if (target.port === '' || !tableName) throw new Error('WORKER_DATABASE_URL (with its port) and WORKER_TABLE are required');

let stalled = false;
const relay = net.createServer({ allowHalfOpen: true }, (socket) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  for (const end of [socket, upstream]) {
    end.on('error', () => {});
    end.unref();
  }
  socket.on('data', (chunk) => stalled || upstream.write(chunk));
  upstream.on('data', (chunk) => stalled || socket.write(chunk));
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
relay.unref();

const through = new URL(target);
through.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
const repository = new PostgresChatMemoryRepository({ connectionString: through.toString(), tableName, connectTimeoutMs: 2000, timeoutMs: 300 });
await repository.findByConversationId('c');
stalled = true;
const started = performance.now();
await repository.close();
console.log(`closed in ${Math.round(performance.now() - started)}`);
