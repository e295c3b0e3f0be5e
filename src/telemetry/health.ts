import { redact } from '../redaction/redact.ts';
import type { BreakerHealth } from '../breaker/agent-breaker.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** `UP` when every component is; `DOWN` when any is not (the Spring Boot Actuator vocabulary). */
export type HealthStatus = 'UP' | 'DOWN';

/** Anything that reports breaker health (an `AgentBreaker`). */
export interface BreakerHealthSource {
  health(): Promise<BreakerHealth>;
}

/** Options of {@link health} and {@link healthHandler}. */
export interface HealthOptions {
  /**
   * Breakers to report, by a name of your choice: each is `DOWN` when its
   * store does not answer; open breakers are listed but are not a failure
   * (an agent going round in circles is the breaker working), and neither is
   * a cost cap that cannot be enforced (`costBudget: 'not_enforceable'`, with
   * the `unpricedModels` and a line in `warnings`).
   * @default none
   */
  readonly breakers?: Readonly<Record<string, BreakerHealthSource>>;
  /**
   * More components, by name: a function that resolves when the dependency
   * is reachable and throws (or rejects) when it is not, e.g.
   * `{ memory: () => pool.query('SELECT 1') }`.
   * @default none
   */
  readonly checks?: Readonly<Record<string, () => unknown>>;
  /** Longest wait for one component; a slower one is `DOWN`. @default 3000 */
  readonly timeoutMs?: number;
  /** Most open session ids listed per breaker (the count is always complete). @default 20 */
  readonly maxListedSessions?: number;
}

/** One component of a {@link HealthReport}. */
export interface ComponentHealth {
  readonly status: HealthStatus;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What {@link health} reports; safe to serve: it holds no URLs, credentials or prompts. */
export interface HealthReport {
  readonly status: HealthStatus;
  readonly components: Readonly<Record<string, ComponentHealth>>;
}

const COST_WARNING = 'budget.maxCostUsd is not enforceable: some rounds cannot be priced (pass prices for their models, or their cost).';

const DEFAULT_TIMEOUT_MS = 3000;
const DEFAULT_MAX_LISTED = 20;

const HEALTH_RULES: OptionRules<HealthOptions> = {
  breakers: is.recordOf((value, path) => {
    if (typeof (value as Partial<BreakerHealthSource> | null)?.health !== 'function')
      throw new InvalidOptionError(path, 'must have a health() method (an AgentBreaker)');
  }),
  checks: is.recordOf(is.function()),
  timeoutMs: is.timeMs(),
  maxListedSessions: is.integer(0),
};

/** @throws InvalidOptionError naming the bad option */
export function validateHealthOptions(options: HealthOptions): void {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object with breakers and/or checks');
  validateOptions('health', options, HEALTH_RULES);
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return withoutAddresses(redact(message)).slice(0, 500);
}

/**
 * `text` without the addresses it names. A driver's message may carry the
 * URL it failed to reach (its password, and its host and path, which a
 * public health endpoint should not show either) or, as Node's socket errors
 * do, the bare host or IP address after the error's code (`connect
 * ECONNREFUSED 10.0.0.5:6379`, `getaddrinfo ENOTFOUND db.internal`). The
 * scheme and the code stay, to tell which kind of service failed and how.
 */
function withoutAddresses(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s"'`<>]+/gi, '$1***')
    .replace(/\b(E[A-Z]{4,}) (?![a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s"'`<>()]+/g, '$1 ***')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '***');
}

function withTimeout<T>(work: () => T | Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  return Promise.race([Promise.resolve().then(work), timeout]).finally(() => clearTimeout(timer));
}

async function breakerComponent(source: BreakerHealthSource, timeoutMs: number, maxListed: number): Promise<ComponentHealth> {
  try {
    const h = await withTimeout(() => source.health(), timeoutMs);
    const up = h.storeReachable !== false && h.status === 'ok';
    return {
      status: up ? 'UP' : 'DOWN',
      details: {
        openSessions: h.open.length,
        // Session ids are the caller's (a header, a user name): a secret in one is masked, as in logs.
        open: h.open.slice(0, maxListed).map((id) => withoutAddresses(redact(id))),
        storeReachable: h.storeReachable !== false,
        storeErrors: h.storeErrors,
        ...(h.storeError === undefined ? {} : { error: describe(h.storeError) }),
        // Reported only when there is something to say, so a healthy report stays as it was.
        ...(h.unjudged ? { unjudged: h.unjudged } : {}),
        // The store answers again: what failed before, so that `unjudged` has its reason.
        ...(h.lastStoreError === undefined || h.storeError !== undefined ? {} : { lastStoreError: describe(h.lastStoreError) }),
        ...(h.storeRestarted ? { storeRestarted: true } : {}),
        ...(h.sessionsLost ? { sessionsLost: h.sessionsLost } : {}),
        ...(h.heldOverCap ? { heldOverCap: h.heldOverCap } : {}),
        ...(h.storeEvictionPolicy === undefined ? {} : { storeEvictionPolicy: h.storeEvictionPolicy }),
        // A cost cap that cannot be enforced is a misconfiguration to see, not an outage: the component stays UP.
        ...(h.costBudget === 'not_enforceable'
          ? { costBudget: h.costBudget, unpricedModels: h.unpricedModels.slice(0, maxListed).map((id) => redact(id)), warnings: [COST_WARNING] }
          : {}),
      },
    };
  } catch (error) {
    return { status: 'DOWN', details: { error: describe(error) } };
  }
}

async function checkComponent(check: () => unknown, timeoutMs: number): Promise<ComponentHealth> {
  try {
    await withTimeout(check, timeoutMs);
    return { status: 'UP' };
  } catch (error) {
    return { status: 'DOWN', details: { error: describe(error) } };
  }
}

/**
 * A health report over breakers (open sessions, store reachability) and any
 * other checks, run in parallel, each bounded by `timeoutMs`. Never throws:
 * a failing component is `DOWN` with the reason, credentials masked.
 *
 * ```ts
 * const report = await health({ breakers: { agents: breaker }, checks: { db: () => pool.query('SELECT 1') } });
 * // { status: 'UP', components: { agents: { status: 'UP', details: { openSessions: 0, … } }, db: { status: 'UP' } } }
 * ```
 */
export async function health(options: HealthOptions): Promise<HealthReport> {
  validateHealthOptions(options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxListed = options.maxListedSessions ?? DEFAULT_MAX_LISTED;
  const entries = await Promise.all([
    ...Object.entries(options.breakers ?? {}).map(async ([name, b]) => [name, await breakerComponent(b, timeoutMs, maxListed)] as const),
    ...Object.entries(options.checks ?? {}).map(async ([name, c]) => [name, await checkComponent(c, timeoutMs)] as const),
  ]);
  const components = Object.fromEntries(entries);
  const status: HealthStatus = entries.every(([, c]) => c.status === 'UP') ? 'UP' : 'DOWN';
  return { status, components };
}
