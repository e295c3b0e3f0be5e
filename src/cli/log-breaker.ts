import type { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerWarningCode } from '../breaker/breaker-events.ts';
import { redact } from '../redaction/redact.ts';

/** Least time between two printed warnings: a store outage warns on every operation. */
const WARNING_EVERY_MS = 10_000;
/** How often a store that stopped answering is checked, to say when it answers again. */
const STORE_WATCH_MS = 1_000;

/**
 * Prints to a server command's log (stderr) what its breaker does across
 * sessions: every escalation, with its session, and its warnings (a store
 * that fails, forgotten sessions, a full session cap), at most one of each
 * kind per 10 s, each saying how many like it were not printed since the
 * last. After a warning, the store is checked (`health()`, every second
 * while it does not answer), and a line says when it answers again: how long it failed, how
 * many requests went unjudged (or were refused) meanwhile, and how many
 * warnings were not printed; the warnings that follow (sessions it forgot
 * and were written back) are printed again.
 *
 * @returns stops checking the store (call it before the breaker's store is closed)
 */
export function logBreaker(breaker: AgentBreaker, print: (line: string) => void, now: () => number = Date.now): () => void {
  /** When each kind of warning was last printed, and how many of it were not printed since. */
  const throttled = new Map<string, { printedAt: number; skipped: number }>();
  let watching = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** `unjudged` of the breaker's health when the last recovery was said: the next one counts from there. */
  let unjudgedSaid = 0;
  const watchStore = async (): Promise<void> => {
    let health = await breaker.health();
    if (health.storeReachable) return;
    const failedAt = now();
    while (!health.storeReachable) {
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STORE_WATCH_MS);
        // The watch must not keep a command's process running.
        timer.unref();
      });
      if (stopped) return;
      health = await breaker.health();
    }
    if (stopped) return;
    const unjudged = health.unjudged - unjudgedSaid;
    unjudgedSaid = health.unjudged;
    const meanwhile = breaker.options.onStoreError === 'fail-closed' ? 'refused unjudged' : 'let through unjudged';
    const skipped = [...throttled.values()].reduce((sum, kind) => sum + kind.skipped, 0);
    const more = skipped === 0 ? '' : `; ${skipped} warning${skipped === 1 ? ' was' : 's were'} not printed`;
    print(
      `breaker store answers again after about ${Math.max(1, Math.round((now() - failedAt) / 1000))} s; ${unjudged} request${unjudged === 1 ? ' was' : 's were'} ${meanwhile} meanwhile${more}`,
    );
    throttled.clear();
  };
  breaker.on((event) => {
    if (event.type === 'escalation') {
      print(`breaker ${event.action} (${event.category ?? 'unknown'}) in session ${quoted(event.sessionId)}: ${oneLine(event.message)}`);
    } else if (event.type === 'warning') {
      if (!watching && !stopped) {
        watching = true;
        void watchStore()
          .catch(() => undefined)
          .finally(() => (watching = false));
      }
      // Throttled by kind: a store outage, which warns on every operation, does not hold back the sessions its
      // end writes back, or a full session cap.
      const key = warningKind(event.code, event.message);
      const kind = throttled.get(key) ?? { printedAt: Number.NEGATIVE_INFINITY, skipped: 0 };
      if (throttled.size >= MAX_WARNING_KINDS && !throttled.has(key)) throttled.clear();
      throttled.set(key, kind);
      const at = now();
      if (at - kind.printedAt < WARNING_EVERY_MS) {
        kind.skipped++;
        return;
      }
      const more = kind.skipped === 0 ? '' : ` (${kind.skipped} more warning${kind.skipped === 1 ? '' : 's'} like it since the last printed)`;
      print(`breaker warning in session ${quoted(event.sessionId)}: ${oneLine(event.message)}${more}`);
      kind.printedAt = at;
      kind.skipped = 0;
    }
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Kinds of warning throttled apart at most; past it they start again from none. */
const MAX_WARNING_KINDS = 100;

/**
 * Which kind a warning is: its code (a failing store is one kind whatever the
 * operation and the reason). A warning the breaker gives once per thing it
 * names (an unpriced model) is a kind of its own, so that the second model's
 * is not held back as more of the first's.
 */
function warningKind(code: BreakerWarningCode, message: string): string {
  return code === 'cost_not_enforceable' || code === 'advisor_order' ? `${code}:${message}` : code;
}

/**
 * Checks the breaker's store once (a health round trip) and prints what an
 * operator must know before the first request: a store that does not answer
 * (requests then go unjudged or are refused, as `onStoreError` says) or one
 * that may evict sessions when full. Prints nothing for a healthy store.
 */
export async function checkBreakerStore(breaker: AgentBreaker, print: (line: string) => void): Promise<void> {
  const health = await breaker.health();
  if (!health.storeReachable) {
    const then = breaker.options.onStoreError === 'fail-closed' ? 'requests are refused' : 'requests pass unjudged';
    print(`breaker store is unavailable (${health.storeError ?? 'no reason given'}): ${then} until it is back`);
  }
  if (health.storeEvictionPolicy !== undefined) {
    print(
      `breaker store may evict sessions when full (maxmemory-policy ${health.storeEvictionPolicy}), forgetting their trips and budgets: use noeviction, or memory to spare`,
    );
  }
}

/**
 * A session id for the log, quoted so that it cannot break or forge a log
 * line: redacted before it is cut, since a token cut short no longer matches
 * its rule. A long one keeps its start and its end, where ids that differ
 * tend to (Claude Code's user id ends with its session's).
 */
function quoted(sessionId: string): string {
  const shown = redact(sessionId);
  return JSON.stringify(shown.length > 100 ? `${shown.slice(0, 49)}…${shown.slice(-50)}` : shown);
}

function oneLine(message: string | undefined): string {
  return (message ?? '').replace(/\s+/g, ' ').trim();
}
