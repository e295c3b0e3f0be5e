/** Most messages kept per session (and per tool call), and most sessions with messages waiting. */
const PER_SESSION = 8;
const SESSIONS = 10_000;

/** One session's messages outside its tool calls. */
interface SessionSteers {
  /** For the session's next round, wherever it runs: those of events anyone reported. */
  readonly waiting: string[];
  /** For the next round outside any governed tool call (the lead's): those waiting when one of its tool calls started. */
  readonly held: string[];
}

/**
 * Steering messages decided on something the breaker observed (a retrieval,
 * a sub-agent's answer, an executed call, a model round without tool calls),
 * waiting for a model round of the session. Kept in the process, bounded:
 * the round that takes them is normally in the same process as the
 * observation that decided them.
 *
 * By governed tool call (see tool-scope's `currentToolOf`), as a door keeps
 * them: the messages waiting when a tool call starts are for the next round
 * of the agent that calls it, not for a sub-agent the call runs; those
 * decided inside a tool call on an agent's own round or on what it reports
 * itself (its tools' results) are for that agent's next round, and end with
 * the call; those decided on what a tool's code reports are for the next
 * round of the agent that called the tool.
 */
export class PendingSteers {
  readonly #bySession = new Map<string, SessionSteers>();
  readonly #byCall = new WeakMap<object, string[]>();

  /**
   * Queues `message` (once: an identical waiting message is not repeated)
   * for the session's next round, or, with `call`, for the next round inside
   * that tool call.
   */
  add(sessionId: string, message: string, call?: object): void {
    push(call === undefined ? this.#session(sessionId).waiting : this.#callQueue(call), message);
  }

  /** Queues `message` for the session's next round outside any governed tool call (the lead's). */
  addOutside(sessionId: string, message: string): void {
    push(this.#session(sessionId).held, message);
  }

  /**
   * A governed tool call of the session starts inside `call` (undefined:
   * outside any): the messages waiting now are for the next round there.
   */
  hold(sessionId: string, call: object | undefined): void {
    const waiting = this.#bySession.get(sessionId)?.waiting;
    if (waiting === undefined || waiting.length === 0) return;
    const mine = call === undefined ? this.#session(sessionId).held : this.#callQueue(call);
    for (const message of waiting.splice(0)) push(mine, message);
  }

  /** Removes and returns, oldest first, the messages for the session's next round inside `call` (undefined: outside any). */
  take(sessionId: string, call: object | undefined): string[] {
    const session = this.#bySession.get(sessionId);
    const mine = call === undefined ? session?.held : this.#byCall.get(call);
    const taken = mine?.splice(0) ?? [];
    for (const message of session?.waiting.splice(0) ?? []) if (!taken.includes(message)) taken.push(message);
    if (session !== undefined && session.held.length === 0) this.#bySession.delete(sessionId);
    return taken;
  }

  /** Forgets the session's messages, and those for the next round inside `call`. */
  clear(sessionId: string, call: object | undefined): void {
    this.#bySession.delete(sessionId);
    if (call !== undefined) this.#byCall.delete(call);
  }

  /** The session's messages, made the most recently used. */
  #session(sessionId: string): SessionSteers {
    const session = this.#bySession.get(sessionId) ?? { waiting: [], held: [] };
    this.#bySession.delete(sessionId);
    this.#bySession.set(sessionId, session);
    if (this.#bySession.size > SESSIONS) {
      const oldest = this.#bySession.keys().next().value;
      if (oldest !== undefined) this.#bySession.delete(oldest);
    }
    return session;
  }

  #callQueue(call: object): string[] {
    let queue = this.#byCall.get(call);
    if (queue === undefined) this.#byCall.set(call, (queue = []));
    return queue;
  }
}

function push(queue: string[], message: string): void {
  if (queue.includes(message)) return;
  queue.push(message);
  if (queue.length > PER_SESSION) queue.shift();
}
