/**
 * Where tests find the real servers they need (Redis, PostgreSQL), and a
 * guard that fails a test at once, naming the server, when it is not there —
 * instead of letting the test hang until the runner's timeout. Also a
 * Redis server of a test's own, and a port where no server is.
 *
 * `npm test` starts both servers first (scripts/test-services.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

/** Redis used by tests unless `GOVERNOR_TEST_REDIS_URL` says otherwise. */
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6390';

/** PostgreSQL used by tests unless `GOVERNOR_TEST_DATABASE_URL` says otherwise. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5439/governor_test';

/** A loopback port nothing listens on now: for a server that is not there, or one a test starts itself. */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** How long a reachability check may take before the server counts as unreachable. */
const CHECK_TIMEOUT_MS = 3000;

/** The Redis URL tests should use. */
export function testRedisUrl(): string {
  return process.env['GOVERNOR_TEST_REDIS_URL'] || DEFAULT_TEST_REDIS_URL;
}

/** The PostgreSQL URL tests should use. */
export function testDatabaseUrl(): string {
  return process.env['GOVERNOR_TEST_DATABASE_URL'] || DEFAULT_TEST_DATABASE_URL;
}

/** A URL with its password replaced, safe for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * Resolves when a Redis server answers PING at `url`; otherwise rejects with
 * an error that names the server and says how to start it.
 */
export async function requireRedis(url: string = testRedisUrl()): Promise<string> {
  const problem = await pingRedis(url);
  if (problem !== undefined) {
    throw new Error(
      `Redis test server not reachable at ${redactUrl(url)} (${problem}). ` +
        'Start it with `node scripts/test-services.ts` (npm test does this) or set GOVERNOR_TEST_REDIS_URL.',
    );
  }
  return url;
}

/**
 * Resolves when PostgreSQL accepts a connection at `url`; otherwise rejects
 * with an error that names the server and says how to start it.
 */
export async function requirePostgres(url: string = testDatabaseUrl()): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  // A refused connection also emits 'error' on some paths; never let it escape.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `PostgreSQL test server not reachable at ${redactUrl(url)} (${describe(error)}). ` +
        'Start it with `node scripts/test-services.ts` (npm test does this) or set GOVERNOR_TEST_DATABASE_URL.',
    );
  } finally {
    await client.end().catch(() => {});
  }
  return url;
}

/**
 * Sends an inline PING over a raw socket: no client library, no retry loop,
 * so an absent server is reported within the timeout. Resolves to a
 * description of the problem, or undefined when the server answered.
 */
export function pingRedis(url: string, timeoutMs: number = CHECK_TIMEOUT_MS): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve('not a valid URL');
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(parsed.port || 6379);
  const password = decodeURIComponent(parsed.password);
  const user = decodeURIComponent(parsed.username);
  return new Promise((resolve) => {
    const socket = net.createConnection({ host, port });
    let received = '';
    const finish = (problem: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('connect', () => {
      const auth = password ? respCommand(user ? ['AUTH', user, password] : ['AUTH', password]) : '';
      socket.write(auth + respCommand(['PING']));
    });
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (received.includes('+PONG')) finish(undefined);
      else if (received.startsWith('-') && received.includes('\r\n')) {
        finish(`server replied ${received.split('\r\n')[0]}`);
      }
    });
    socket.on('error', (error) => finish(describe(error)));
  });
}

function respCommand(parts: readonly string[]): string {
  return `*${parts.length}\r\n` + parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('');
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

function redisServerBinary(): string {
  for (const dir of [...(process.env['PATH'] ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin']) {
    const candidate = path.join(dir, 'redis-server');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  throw new Error('redis-server binary not found: run `node scripts/test-services.ts` (npm test does this) to install it');
}

/**
 * A Redis server of the test's own, on its own port, without persistence: one
 * it may kill, restart or configure (`config`: more redis-server arguments).
 */
export async function startDedicatedRedis(port: number, config: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(redisServerBinary(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...config], {
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  while ((await pingRedis(`redis://127.0.0.1:${port}`, 500)) !== undefined) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dedicated redis-server on port ${port} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

/** Kills a child process at once and waits until it has exited. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
