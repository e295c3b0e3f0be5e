import type { BreakerStore } from '../breaker/breaker-store.ts';

/**
 * Breaker messages waiting for a session's next request. A steer is decided
 * on a response (which passes unchanged) and delivered on the next request,
 * which may come minutes later — and, behind a load balancer, to another
 * replica.
 */
export interface SteerInbox {
  add(sessionId: string, messages: readonly string[]): Promise<void>;
  /** Removes and returns the session's waiting messages, oldest first. */
  take(sessionId: string): Promise<string[]>;
}

/** Waiting messages in this process: enough for one proxy. */
class LocalSteerInbox implements SteerInbox {
  readonly #pending = new Map<string, string[]>();
  readonly #limit: number;

  /** @param limit sessions kept at most; the oldest are dropped first */
  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  async add(sessionId: string, messages: readonly string[]): Promise<void> {
    if (messages.length === 0) return;
    const list = this.#pending.get(sessionId) ?? [];
    for (const message of messages) if (!list.includes(message)) list.push(message);
    this.#pending.delete(sessionId);
    this.#pending.set(sessionId, list);
    if (this.#pending.size > this.#limit) this.#pending.delete(this.#pending.keys().next().value as string);
  }

  async take(sessionId: string): Promise<string[]> {
    const list = this.#pending.get(sessionId) ?? [];
    this.#pending.delete(sessionId);
    return list;
  }
}

/**
 * The inbox for a breaker's store: the store's own shared queue when it has
 * one (`RedisBreakerStore`: every replica sees a steer another decided),
 * otherwise this process's.
 */
export function steerInboxFor(store: BreakerStore): SteerInbox {
  const local = new LocalSteerInbox();
  const { addSteers, takeSteers } = store;
  if (addSteers === undefined || takeSteers === undefined) return local;
  // A store outage must not fail the agent's request (the breaker itself fails open or
  // closed as configured): a steer then waits in this process, as without a shared store.
  return {
    add: async (sessionId, messages) => {
      if (messages.length === 0) return;
      await addSteers.call(store, sessionId, messages).catch(() => local.add(sessionId, messages));
    },
    take: async (sessionId) => {
      const here = await local.take(sessionId);
      const shared = await takeSteers.call(store, sessionId).catch((): string[] => []);
      return [...here, ...shared];
    },
  };
}
