/**
 * Runs operations on one session one after another within this process, so
 * that each is judged after the one called before it (a shared store orders
 * them with other processes' operations in the session's log).
 */
export class SessionQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(sessionId: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(sessionId);
    const result = previous === undefined ? operation() : previous.then(operation);
    // The next operation waits for this one to settle, either way; the last one leaves no entry behind.
    const settle = (): void => {
      if (this.#tails.get(sessionId) === tail) this.#tails.delete(sessionId);
    };
    const tail = result.then(settle, settle);
    this.#tails.set(sessionId, tail);
    return result;
  }
}
