/** Most messages kept per session, and most sessions with messages waiting. */
const PER_SESSION = 8;
const SESSIONS = 10_000;

/**
 * Steering messages decided on something the breaker observed (a retrieval,
 * a sub-agent's answer, an executed call, a model round without tool calls),
 * waiting for the session's next model round. Kept in the process, bounded:
 * the round that takes them is normally in the same process as the
 * observation that decided them.
 */
export class PendingSteers {
  readonly #bySession = new Map<string, string[]>();

  /** Queues `message` for the session's next round (once: an identical waiting message is not repeated). */
  add(sessionId: string, message: string): void {
    const queue = this.#bySession.get(sessionId) ?? [];
    if (queue.includes(message)) return;
    queue.push(message);
    if (queue.length > PER_SESSION) queue.shift();
    this.#bySession.delete(sessionId);
    this.#bySession.set(sessionId, queue);
    if (this.#bySession.size > SESSIONS) {
      const oldest = this.#bySession.keys().next().value;
      if (oldest !== undefined) this.#bySession.delete(oldest);
    }
  }

  /** Removes and returns the session's waiting messages, oldest first. */
  take(sessionId: string): string[] {
    const queue = this.#bySession.get(sessionId);
    if (queue === undefined) return [];
    this.#bySession.delete(sessionId);
    return queue;
  }
}
