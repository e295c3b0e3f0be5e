/**
 * Runs operations on one session one after another within this process, so
 * concurrent calls for a session do not race each other into write conflicts
 * (conflicts with other processes are still resolved by compare-and-set).
 */
export class SessionQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(sessionId: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(sessionId);
    const result = previous === undefined ? operation() : previous.then(operation);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(sessionId, tail);
    void tail.then(() => {
      if (this.#tails.get(sessionId) === tail) this.#tails.delete(sessionId);
    });
    return result;
  }
}
