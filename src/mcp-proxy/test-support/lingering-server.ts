/**
 * The looping test server as a stdio program that outlives the end of its
 * input, as a server holding a file watcher or a connection pool does: only
 * a signal ends it. It writes its pid to the file named by its first
 * argument, so that a test can tell whether it is still running. With
 * `stubborn` as its second argument it ignores SIGTERM too: only SIGKILL ends it.
 */
import { writeFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loopingServer } from './looping-server.ts';

const [pidFile, mode] = process.argv.slice(2);
if (pidFile === undefined) throw new Error('usage: lingering-server.ts PID_FILE [stubborn]');
if (mode === 'stubborn') process.on('SIGTERM', () => {});
writeFileSync(pidFile, String(process.pid));
setInterval(() => {}, 60_000);
await loopingServer().connect(new StdioServerTransport());
