/**
 * Makes sure the servers the tests need are running on loopback:
 *   - Redis on 127.0.0.1:6390 (no persistence),
 *   - PostgreSQL on 127.0.0.1:5439 with a `governor_test` database, trust auth.
 *
 * Installs the Debian packages when the binaries are missing and we may (root
 * with apt-get). Data lives in `.services/` under the repository root. Fast
 * and idempotent when both servers already answer. One line per service;
 * exits non-zero with a message naming the service that could not be started.
 *
 * When GOVERNOR_TEST_REDIS_URL / GOVERNOR_TEST_DATABASE_URL point elsewhere,
 * those servers are only checked, never started.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseCommandArgs } from '../src/test-support/command-args.ts';
import { DEFAULT_TEST_DATABASE_URL, DEFAULT_TEST_REDIS_URL, pingRedis, redactUrl, testDatabaseUrl, testRedisUrl } from '../src/test-support/services.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const servicesDir = path.join(repoRoot, '.services');
const REDIS_PORT = 6390;
const PG_PORT = 5439;
const PG_DATABASE = 'governor_test';
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

class ServiceError extends Error {
  readonly service: string;
  constructor(service: string, message: string) {
    super(message);
    this.service = service;
  }
}

let aptUpdated = false;

function run(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; quiet?: boolean; cwd?: string } = {},
): { status: number; output: string } {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    env: options.env ?? process.env,
    cwd: options.cwd ?? repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.error) return { status: 127, output: result.error.message };
  return { status: result.status ?? 1, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

function which(binary: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, binary);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/sbin', '/bin']) {
    const candidate = path.join(dir, binary);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

function canInstall(): boolean {
  return isRoot && which('apt-get') !== undefined;
}

/** Installs Debian packages non-interactively (root only). */
function aptInstall(service: string, packages: readonly string[]): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    const update = run('apt-get', ['update'], { env });
    if (update.status !== 0) {
      throw new ServiceError(service, `apt-get update failed:\n${tail(update.output)}`);
    }
    aptUpdated = true;
  }
  const install = run(
    'apt-get',
    ['install', '-y', '--no-install-recommends', '-o', 'Dpkg::Options::=--force-confdef', '-o', 'Dpkg::Options::=--force-confold', ...packages],
    { env },
  );
  if (install.status !== 0) {
    throw new ServiceError(service, `apt-get install ${packages.join(' ')} failed:\n${tail(install.output)}`);
  }
}

function tail(text: string, lines = 15): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

// ---------------------------------------------------------------- Redis

async function ensureRedis(): Promise<string> {
  const url = testRedisUrl();
  if ((await pingRedis(url, 1000)) === undefined) return `redis: ready at ${redactUrl(url)} (already running)`;
  if (url !== DEFAULT_TEST_REDIS_URL) {
    throw new ServiceError('redis', `GOVERNOR_TEST_REDIS_URL=${redactUrl(url)} does not answer PING; start that server or unset the variable.`);
  }

  let binary = which('redis-server');
  let installed = false;
  if (binary === undefined) {
    if (!canInstall()) {
      throw new ServiceError('redis', 'redis-server is not installed; install the `redis-server` package (needs root and apt-get to do it automatically).');
    }
    // Both at once: one apt transaction on a fresh machine.
    aptInstall('redis', postgresBinDir() === undefined ? ['redis-server', 'postgresql'] : ['redis-server']);
    installed = true;
    binary = which('redis-server');
    if (binary === undefined) throw new ServiceError('redis', 'redis-server still not found after installing the package.');
  }

  const dir = path.join(servicesDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const started = run(binary, [
    '--port',
    String(REDIS_PORT),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'yes',
    '--dir',
    dir,
    '--pidfile',
    path.join(dir, 'redis.pid'),
    '--logfile',
    path.join(dir, 'redis.log'),
  ]);
  if (started.status !== 0) {
    throw new ServiceError('redis', `redis-server failed to start:\n${tail(started.output)}`);
  }
  const up = await waitFor(async () => (await pingRedis(url, 500)) === undefined, 10_000);
  if (!up) {
    const log = safeRead(path.join(dir, 'redis.log'));
    throw new ServiceError('redis', `redis-server started but does not answer PING on port ${REDIS_PORT}:\n${tail(log)}`);
  }
  return `redis: ready at ${url} (${installed ? 'installed and ' : ''}started, data in .services/redis)`;
}

// ----------------------------------------------------------- PostgreSQL

function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  let versions: string[];
  try {
    versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'pg_ctl')));
  } catch {
    versions = [];
  }
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0] !== undefined) return path.join(base, versions[0], 'bin');
  const pgCtl = which('pg_ctl');
  if (pgCtl !== undefined && fs.existsSync(path.join(path.dirname(pgCtl), 'initdb'))) return path.dirname(pgCtl);
  return undefined;
}

/** Returns undefined when a connection to `database` works, else the problem. */
async function tryPostgres(url: string, database?: string): Promise<string | undefined> {
  const target = new URL(url);
  if (database !== undefined) target.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: target.toString(), connectionTimeoutMillis: 1500 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function createDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [PG_DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${PG_DATABASE}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs a PostgreSQL tool as `postgres` when we are root (the server refuses to run as root). */
function runAsPostgres(command: string, args: readonly string[]): { status: number; output: string } {
  if (!isRoot) return run(command, args);
  const runuser = which('runuser');
  if (runuser !== undefined) return run(runuser, ['-u', 'postgres', '--', command, ...args], { cwd: '/' });
  return run('su', ['postgres', '-s', '/bin/sh', '-c', [command, ...args].map(shellQuote).join(' ')], { cwd: '/' });
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * `.services/pg` unless the `postgres` user cannot reach it (e.g. the
 * repository sits in a private home directory): then a directory of ours in
 * the system temp dir, keyed by the repository path.
 */
function postgresDataDir(): string {
  const preferred = path.join(servicesDir, 'pg');
  if (!isRoot) return preferred;
  fs.mkdirSync(preferred, { recursive: true, mode: 0o700 });
  run('chown', ['postgres:postgres', preferred]);
  if (runAsPostgres('test', ['-w', preferred]).status === 0) return preferred;
  const key = Buffer.from(repoRoot).toString('base64url').slice(-24);
  const fallback = path.join(os.tmpdir(), `governor-test-pg-${key}`);
  fs.mkdirSync(fallback, { recursive: true, mode: 0o700 });
  run('chown', ['postgres:postgres', fallback]);
  return fallback;
}

async function ensurePostgres(): Promise<string> {
  const url = testDatabaseUrl();
  const first = await tryPostgres(url);
  if (first === undefined) return `postgres: ready at ${redactUrl(url)} (already running)`;
  if (first === '3D000') {
    // Server is up, only the database is missing.
    await createDatabase(url).catch((error: unknown) => {
      throw new ServiceError('postgres', `server is up but creating database ${PG_DATABASE} failed: ${String(error)}`);
    });
    return `postgres: ready at ${redactUrl(url)} (created database ${PG_DATABASE})`;
  }
  if (url !== DEFAULT_TEST_DATABASE_URL) {
    throw new ServiceError(
      'postgres',
      `GOVERNOR_TEST_DATABASE_URL=${redactUrl(url)} does not accept connections (${first}); start that server or unset the variable.`,
    );
  }

  let bin = postgresBinDir();
  let installed = false;
  if (bin === undefined) {
    if (!canInstall()) {
      throw new ServiceError('postgres', 'PostgreSQL is not installed; install the `postgresql` package (needs root and apt-get to do it automatically).');
    }
    aptInstall('postgres', ['postgresql']);
    installed = true;
    bin = postgresBinDir();
    if (bin === undefined) throw new ServiceError('postgres', 'pg_ctl still not found after installing the package.');
  }

  const dataDir = postgresDataDir();
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (isRoot) run('chown', ['-R', 'postgres:postgres', dataDir]);

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const init = runAsPostgres(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale']);
    if (init.status !== 0) throw new ServiceError('postgres', `initdb failed:\n${tail(init.output)}`);
    // Loopback TCP only, no unix socket (its path could exceed the length limit);
    // durability is irrelevant for a throwaway test server.
    fs.appendFileSync(
      path.join(dataDir, 'postgresql.conf'),
      [
        '',
        '# test server settings',
        `port = ${PG_PORT}`,
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'max_connections = 200',
        '',
      ].join('\n'),
    );
  }

  const logFile = path.join(dataDir, 'server.log');
  const start = runAsPostgres(path.join(bin, 'pg_ctl'), ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60']);
  if (start.status !== 0) {
    throw new ServiceError('postgres', `pg_ctl start failed:\n${tail(start.output)}\n${tail(safeRead(logFile))}`);
  }
  const up = await waitFor(async () => {
    const problem = await tryPostgres(url, 'postgres');
    return problem === undefined;
  }, 20_000);
  if (!up) throw new ServiceError('postgres', `server started but does not accept connections on port ${PG_PORT}:\n${tail(safeRead(logFile))}`);
  await createDatabase(url).catch((error: unknown) => {
    throw new ServiceError('postgres', `creating database ${PG_DATABASE} failed: ${String(error)}`);
  });
  const where = dataDir.startsWith(repoRoot) ? path.relative(repoRoot, dataDir) : dataDir;
  return `postgres: ready at ${url} (${installed ? 'installed and ' : ''}started, data in ${where})`;
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  let failed = false;
  // Sequential: a fresh machine installs both packages in the first apt run.
  for (const ensure of [ensureRedis, ensurePostgres]) {
    try {
      console.log(await ensure());
    } catch (error) {
      failed = true;
      if (error instanceof ServiceError) console.error(`${error.service}: FAILED to provide the test server: ${error.message}`);
      else console.error(`test services: unexpected failure: ${error instanceof Error ? error.stack : String(error)}`);
    }
  }
  if (failed) process.exitCode = 1;
}

parseCommandArgs('usage: node scripts/test-services.ts  (no flags; GOVERNOR_TEST_REDIS_URL and GOVERNOR_TEST_DATABASE_URL point it at other servers)', {});
await main();
