/**
 * One writer of the contention benchmark (see contention.ts) in a process of
 * its own: its own RedisBreakerStore and connection, like a replica. Driven
 * over IPC: it warms up, says `{ ready }`, runs its steps on the shared session
 * when told `{ go }`, answers `{ result }` and exits.
 */
import { createClient } from 'redis';
import { runWriter } from './contention.ts';

const url = process.env['CONTENTION_REDIS_URL'];
const keyPrefix = process.env['CONTENTION_KEY_PREFIX'];
const sessionId = process.env['CONTENTION_SESSION'];
const writer = Number(process.env['CONTENTION_WRITER']);
const events = Number(process.env['CONTENTION_EVENTS']);
const argBytes = Number(process.env['CONTENTION_ARG_BYTES']);
if (!url || !keyPrefix || !sessionId) throw new Error('CONTENTION_REDIS_URL, CONTENTION_KEY_PREFIX and CONTENTION_SESSION are required');

const client = createClient({ url });
client.on('error', () => {});
await client.connect();
const go = new Promise<void>((resolve) => {
  process.on('message', (m: unknown) => {
    if ((m as { go?: boolean }).go) resolve();
  });
});
const result = await runWriter({ client, keyPrefix, sessionId, writer, events, argBytes, ready: () => process.send?.({ ready: true }), go });
process.send?.({ result });
await client.close();
process.disconnect();
