import path from 'node:path';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { AgentBreakerOptions } from '../breaker/breaker-options.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import type { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { readOptionsFile } from '../runtime/read-options-file.ts';
import { codeOnlyOptionProblem, withoutCodeOnly } from '../runtime/code-only-options.ts';
import { CliUsageError } from './command-error.ts';

/** The breaker a server command runs with, and how to release its store. */
export interface FlagBreaker {
  readonly breaker: AgentBreaker;
  close(): Promise<void>;
}

/** The breaker flags the server commands share, as `parseArgs` gives them. */
export interface BreakerFlags {
  readonly config?: string | undefined;
  readonly store?: string | undefined;
  readonly storePrefix?: string | undefined;
  /** `--store-timeout MS`: the store's `timeoutMs`. */
  readonly storeTimeout?: string | undefined;
  readonly telemetry?: boolean;
  /** Breaker options this command defaults to, beneath those of `--config`. */
  readonly defaults?: Readonly<Record<string, unknown>>;
}

/**
 * Builds the breaker of `--config FILE` (JSON breaker options) and `--store
 * URL` (`redis://…` or `rediss://…`; default: in memory). With a shared
 * store, every check reads it (`checkFreshnessMs: 0` unless the config
 * says otherwise): replicas behind one balancer see each other's trips at once.
 *
 * @throws CliUsageError for an unreadable config, bad options, an unknown store,
 *   a malformed `--store-timeout`, or a store flag without `--store`
 */
export async function breakerFromFlags(flags: BreakerFlags, cwd: string): Promise<FlagBreaker> {
  // Without a store these would name nothing: state stays in this process, under no key, with no round trips.
  for (const [flag, value] of [
    ['--store-prefix', flags.storePrefix],
    ['--store-timeout', flags.storeTimeout],
  ] as const) {
    if (value !== undefined && flags.store === undefined) {
      throw new CliUsageError(`${flag} needs --store (a redis:// or rediss:// URL): without a store the breaker keeps its state in memory`);
    }
  }
  const timeoutMs = flags.storeTimeout === undefined ? undefined : storeTimeout(flags.storeTimeout);
  let options: Record<string, unknown> = {};
  if (flags.config !== undefined) {
    options = await readConfig(path.resolve(cwd, flags.config), flags.config);
    const problem = codeOnlyOptionProblem(options, flags.config, 'pass --store redis://… (with --store-prefix and --store-timeout) instead');
    if (problem !== undefined) throw new CliUsageError(problem);
  }
  options = { ...flags.defaults, ...options };
  if (flags.telemetry === true && options['telemetry'] === undefined) options = { ...options, telemetry: true };
  let store: RedisBreakerStore | undefined;
  if (flags.store !== undefined) {
    // A URL that does not parse is left to the store, which says what to percent-encode (a password's "/" or "@").
    const scheme = URL.canParse(flags.store) ? new URL(flags.store).protocol : 'redis:';
    if (scheme !== 'redis:' && scheme !== 'rediss:') throw new CliUsageError(`--store: unsupported store "${scheme}"; use a redis:// or rediss:// URL`);
    // Loaded only for --store: redis is an optional peer (a missing one is a MissingDependencyError naming it).
    const { RedisBreakerStore } = await import('../redis/index.ts');
    try {
      store = new RedisBreakerStore({
        url: flags.store,
        ...(flags.storePrefix === undefined ? {} : { keyPrefix: flags.storePrefix }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } catch (error) {
      throw new CliUsageError(`--store: ${error instanceof Error ? error.message : String(error)}`);
    }
    options = { checkFreshnessMs: 0, ...options, store };
  }
  let breaker: AgentBreaker;
  try {
    breaker = new AgentBreaker(options as AgentBreakerOptions);
  } catch (error) {
    await store?.close();
    throw new CliUsageError(
      `${flags.config === undefined ? 'breaker options' : `--config ${flags.config}`}: ${error instanceof Error ? withoutCodeOnly(error.message) : String(error)}`,
    );
  }
  return { breaker, close: async () => store?.close() };
}

/** `--store-timeout`'s milliseconds: a whole number from 1 to the longest timer Node allows. */
function storeTimeout(text: string): number {
  const ms = /^\d{1,10}$/.test(text) ? Number(text) : 0;
  if (ms < 1 || ms > MAX_TIMER_MS) {
    throw new CliUsageError(`--store-timeout must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (e.g. 500), not "${text}"`);
  }
  return ms;
}

async function readConfig(file: string, shown: string): Promise<Record<string, unknown>> {
  try {
    return await readOptionsFile(file, shown);
  } catch (error) {
    throw new CliUsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      // A second signal while the server closes means now. process.exit, not the signal's default, so that the
      // 'exit' handlers still run (the MCP proxy's ends the server's process group there).
      const now = (again: NodeJS.Signals): never => process.exit(again === 'SIGINT' ? 130 : 143);
      process.once('SIGINT', now);
      process.once('SIGTERM', now);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
