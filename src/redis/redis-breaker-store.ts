import { createHash } from 'node:crypto';
import { createClient } from './redis-module.ts';
import { GovernorError, InvalidOptionError } from '../errors/governor-error.ts';
import type { BreakerSessionState, BreakerStore, StoredSession } from '../breaker/breaker-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/**
 * The part of a node-redis client the store uses. A `RedisClientType` from
 * `createClient()` fits, and so does anything else that can send a raw command.
 */
export interface RedisCommandClient {
  sendCommand(args: ReadonlyArray<string>, options?: { timeout?: number }): Promise<unknown>;
}

/** Options of {@link RedisBreakerStore}. Pass `client` or `url`, not both. */
export interface RedisBreakerStoreOptions {
  /**
   * A connected node-redis client to use. The store neither connects nor
   * closes it; its owner should listen to its `error` events and may want
   * `disableOfflineQueue: true` so an outage is reported at once instead of
   * commands waiting for a reconnect.
   */
  readonly client?: RedisCommandClient;
  /**
   * Redis URL (`redis://[[user]:password@]host:port[/db]`) to connect to with a
   * client the store creates, connects lazily and closes in {@link RedisBreakerStore.close}.
   */
  readonly url?: string;
  /**
   * Prefix of every key the store writes: sessions live at
   * `<prefix>session:<id>`, the set of open sessions at `<prefix>open-sessions`.
   * @default 'governor:breaker:'
   */
  readonly keyPrefix?: string;
  /**
   * A session's state expires after this long without a write, so abandoned
   * sessions clean themselves up. @default 86_400_000 (24 h)
   */
  readonly ttlMs?: number;
  /**
   * Longest wait for one Redis round trip; past it the operation fails with
   * a {@link BreakerStoreError} (the breaker then fails open or closed as
   * configured). @default 2000
   */
  readonly timeoutMs?: number;
  /**
   * Tells whether a stored state is an open (tripped) breaker, for
   * {@link RedisBreakerStore.listOpen}. @default state => state.status === 'OPEN'
   */
  readonly isOpen?: (state: BreakerSessionState) => boolean;
}

/**
 * A Redis operation failed (connection lost, timeout, server error). The
 * breaker decides whether that fails open or closed; the message never holds
 * credentials.
 */
export class BreakerStoreError extends GovernorError {
  /** Which store operation failed: `load`, `compareAndSet`, `delete`, `listOpen` or `ping`. */
  readonly operation: string;

  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super('GOVERNOR_BREAKER_STORE', `Breaker store ${operation} failed: ${message}`, options);
    this.operation = operation;
  }
}

const DEFAULT_KEY_PREFIX = 'governor:breaker:';
const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_TIMEOUT_MS = 2000;

/**
 * KEYS[1] session hash {v: version, s: state JSON}; KEYS[2] set of open session ids.
 * ARGV: expected version ('' = must not exist), next state JSON, ttl ms,
 * session id, '1' if the next state is open.
 * Replies {1, newVersion} or {0, currentVersion|nil, currentState|nil}.
 * Version check, write, expiry and open-set upkeep in one atomic round trip.
 */
const COMPARE_AND_SET = `
local current = redis.call('HMGET', KEYS[1], 'v', 's')
local expected = ARGV[1]
if (expected == '' and current[1]) or (expected ~= '' and current[1] ~= expected) then
  return {0, current[1], current[2]}
end
local version = (tonumber(current[1]) or 0) + 1
redis.call('HSET', KEYS[1], 'v', version, 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] == '1' then
  redis.call('SADD', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
else
  redis.call('SREM', KEYS[2], ARGV[4])
end
return {1, version}
`;

/** KEYS[1] open set; ARGV[1] key prefix. Drops ids whose session expired, returns the rest. */
const LIST_OPEN = `
local ids = redis.call('SMEMBERS', KEYS[1])
local open = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then
    table.insert(open, id)
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return open
`;

/** KEYS[1] session hash, KEYS[2] open set; ARGV[1] session id. */
const DELETE = `
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
`;

interface Script {
  readonly source: string;
  readonly sha1: string;
}

function script(source: string): Script {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

const SCRIPTS = {
  compareAndSet: script(COMPARE_AND_SET),
  listOpen: script(LIST_OPEN),
  delete: script(DELETE),
};

function createOwnedClient(url: string, timeoutMs: number) {
  return createClient({
    url,
    // An outage must fail fast (the breaker decides open/closed), not queue.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeoutMs,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
    },
  });
}

type OwnedClient = ReturnType<typeof createOwnedClient>;

function defaultIsOpen(state: BreakerSessionState): boolean {
  return state.status === 'OPEN';
}

/** What each option of RedisBreakerStore accepts. */
const REDIS_BREAKER_STORE_OPTION_RULES: OptionRules<RedisBreakerStoreOptions> = {
  client: is.object(),
  url: is.string({ nonEmpty: true }),
  keyPrefix: is.string(),
  ttlMs: is.integer(1),
  timeoutMs: is.timeMs(),
  isOpen: is.function(),
};

/**
 * Keeps AgentBreaker session state in Redis so every replica behind a load
 * balancer shares one breaker per session. Each session is one hash with its
 * version and state; {@link compareAndSet} checks the version, writes the
 * state, refreshes the idle expiry and maintains the set of open sessions in a
 * single Lua script (one round trip, atomic); {@link load} is one round trip.
 * Every failure surfaces as a {@link BreakerStoreError}.
 *
 * `listOpen` keeps one set per key prefix: it needs a non-cluster Redis (or
 * every key on one slot).
 */
export class RedisBreakerStore implements BreakerStore {
  readonly #sessionPrefix: string;
  readonly #openSetKey: string;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #isOpen: (state: BreakerSessionState) => boolean;
  readonly #client: RedisCommandClient;
  /** Set when the store created the client: it connects and closes it. */
  readonly #owned: OwnedClient | undefined;
  #connecting: Promise<unknown> | undefined;
  #closed = false;

  constructor(options: RedisBreakerStoreOptions) {
    validateOptions('RedisBreakerStore', options, REDIS_BREAKER_STORE_OPTION_RULES);
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('options', 'pass { client } or { url }');
    }
    if (options.client !== undefined && options.url !== undefined) {
      throw new InvalidOptionError('url', 'pass either client or url, not both');
    }
    if (options.client === undefined && options.url === undefined) {
      throw new InvalidOptionError('client', 'pass a node-redis client or a url');
    }
    if (options.client !== undefined && typeof options.client.sendCommand !== 'function') {
      throw new InvalidOptionError('client', 'must be a node-redis client (it has no sendCommand method)');
    }
    const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (typeof keyPrefix !== 'string') throw new InvalidOptionError('keyPrefix', 'must be a string');
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    if (!Number.isInteger(ttlMs) || ttlMs <= 0) throw new InvalidOptionError('ttlMs', 'must be a positive integer (milliseconds)');
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new InvalidOptionError('timeoutMs', 'must be a positive number (milliseconds)');
    if (options.isOpen !== undefined && typeof options.isOpen !== 'function') {
      throw new InvalidOptionError('isOpen', 'must be a function');
    }

    // Separate namespaces: no session id can collide with the set's key.
    this.#sessionPrefix = `${keyPrefix}session:`;
    this.#openSetKey = `${keyPrefix}open-sessions`;
    this.#ttlMs = ttlMs;
    this.#timeoutMs = timeoutMs;
    this.#isOpen = options.isOpen ?? defaultIsOpen;

    if (options.client !== undefined) {
      this.#client = options.client;
      this.#owned = undefined;
    } else {
      const url = options.url as string;
      try {
        new URL(url);
      } catch {
        throw new InvalidOptionError('url', 'is not a valid URL (expected redis://host:port)');
      }
      const client = createOwnedClient(url, timeoutMs);
      // Without a listener node-redis would crash the process on a lost connection.
      client.on('error', () => {});
      this.#owned = client;
      this.#client = client as unknown as RedisCommandClient;
    }
  }

  /** Key of a session's hash. */
  #key(sessionId: string): string {
    return this.#sessionPrefix + sessionId;
  }

  async #ready(): Promise<void> {
    const owned = this.#owned;
    if (this.#closed) throw new Error('the store is closed');
    // Open but not ready means reconnecting: the command then fails at once
    // (no offline queue), which is what an outage should look like.
    if (owned === undefined || owned.isOpen) return;
    this.#connecting ??= owned.connect().finally(() => {
      this.#connecting = undefined;
    });
    await this.#connecting;
  }

  async #send(operation: string, args: string[]): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no reply within ${this.#timeoutMs} ms`)), this.#timeoutMs);
        timer.unref();
      });
      return await Promise.race([
        (async () => {
          await this.#ready();
          return this.#client.sendCommand(args, { timeout: this.#timeoutMs });
        })(),
        timeout,
      ]);
    } catch (error) {
      throw new BreakerStoreError(operation, describeRedisError(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** EVALSHA, and EVAL only when the server has not cached the script yet (NOSCRIPT). */
  async #evalScript(operation: string, s: Script, keys: string[], args: string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.#send(operation, ['EVALSHA', s.sha1, ...tail]);
    } catch (error) {
      if (error instanceof BreakerStoreError && /NOSCRIPT/.test(String((error.cause as Error | undefined)?.message))) {
        return this.#send(operation, ['EVAL', s.source, ...tail]);
      }
      throw error;
    }
  }

  /** One round trip (HMGET). */
  async load(sessionId: string): Promise<StoredSession | undefined> {
    const reply = await this.#send('load', ['HMGET', this.#key(sessionId), 'v', 's']);
    if (!Array.isArray(reply)) throw new BreakerStoreError('load', 'unexpected reply from Redis');
    return decodeStored('load', reply[0], reply[1]);
  }

  /**
   * Writes `next` if the stored version still is `expectedVersion`
   * (`undefined`: the session must not exist yet), in one round trip. On a
   * conflict returns the current stored session so the caller can merge and retry.
   */
  async compareAndSet(
    sessionId: string,
    expectedVersion: number | undefined,
    next: BreakerSessionState,
  ): Promise<{ ok: true; version: number } | { ok: false; current: StoredSession | undefined }> {
    let json: string;
    let open: boolean;
    try {
      json = JSON.stringify(next);
      open = this.#isOpen(next);
    } catch (error) {
      throw new BreakerStoreError('compareAndSet', `state is not serialisable: ${describeRedisError(error)}`, { cause: error });
    }
    const reply = await this.#evalScript(
      'compareAndSet',
      SCRIPTS.compareAndSet,
      [this.#key(sessionId), this.#openSetKey],
      [expectedVersion === undefined ? '' : String(expectedVersion), json, String(this.#ttlMs), sessionId, open ? '1' : '0'],
    );
    if (!Array.isArray(reply)) throw new BreakerStoreError('compareAndSet', 'unexpected reply from Redis');
    if (Number(reply[0]) === 1) return { ok: true, version: Number(reply[1]) };
    return { ok: false, current: decodeStored('compareAndSet', reply[1], reply[2]) };
  }

  /** Removes a session's state (and its open mark). */
  async delete(sessionId: string): Promise<void> {
    await this.#evalScript('delete', SCRIPTS.delete, [this.#key(sessionId), this.#openSetKey], [sessionId]);
  }

  /** Ids of sessions whose breaker is open and whose state has not expired. */
  async listOpen(): Promise<string[]> {
    const reply = await this.#evalScript('listOpen', SCRIPTS.listOpen, [this.#openSetKey], [this.#sessionPrefix]);
    if (!Array.isArray(reply)) throw new BreakerStoreError('listOpen', 'unexpected reply from Redis');
    return reply.map((id) => text(id)).filter((id): id is string => id !== undefined).sort();
  }

  /**
   * One round trip (PING), for health checks: resolves when the server
   * answers, otherwise fails with a {@link BreakerStoreError} (credentials masked).
   */
  async ping(): Promise<void> {
    const reply = text(await this.#send('ping', ['PING']));
    if (reply !== 'PONG') throw new BreakerStoreError('ping', 'unexpected reply from Redis');
  }

  /** Closes the client the store created from `url`; a passed-in client is left alone. */
  async close(): Promise<void> {
    this.#closed = true;
    const owned = this.#owned;
    if (owned === undefined) return;
    if (owned.isOpen) {
      await owned.close().catch(() => owned.destroy());
    }
  }
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number') return String(value);
  return undefined;
}

function decodeStored(operation: string, rawVersion: unknown, rawState: unknown): StoredSession | undefined {
  const version = text(rawVersion);
  const state = text(rawState);
  if (version === undefined || state === undefined) return undefined;
  try {
    return { version: Number(version), state: JSON.parse(state) as BreakerSessionState };
  } catch (error) {
    throw new BreakerStoreError(operation, 'stored state is not valid JSON', { cause: error });
  }
}

/** A Redis error's message, with any URL credentials masked. */
function describeRedisError(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return message.replace(/\/\/[^@/\s]*@/g, '//***@');
}
