/**
 * Breaker messages waiting for a session's next request. A steer is decided
 * on a response (which passes unchanged) and delivered on the next request,
 * which may come minutes later.
 */
export class SteerInbox {
  readonly #pending = new Map<string, string[]>();
  readonly #limit: number;

  /** @param limit sessions kept at most; the oldest are dropped first */
  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  add(sessionId: string, message: string): void {
    const list = this.#pending.get(sessionId) ?? [];
    if (!list.includes(message)) list.push(message);
    this.#pending.delete(sessionId);
    this.#pending.set(sessionId, list);
    if (this.#pending.size > this.#limit) this.#pending.delete(this.#pending.keys().next().value as string);
  }

  /** Removes and returns the session's pending messages. */
  take(sessionId: string): string[] {
    const list = this.#pending.get(sessionId) ?? [];
    this.#pending.delete(sessionId);
    return list;
  }
}

/**
 * The one place the proxies collect a session's pending steer messages
 * before a request goes upstream.
 */
export function takeSteers(inbox: SteerInbox, sessionId: string): string[] {
  return inbox.take(sessionId);
}
