/** A bounded set of keys, oldest dropped first: remembers what was already observed. */
export class SeenSet {
  readonly #keys = new Set<string>();
  readonly #limit: number;

  constructor(limit = 100_000) {
    this.#limit = limit;
  }

  /** True the first time a key is seen. */
  first(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    if (this.#keys.size > this.#limit) this.#keys.delete(this.#keys.values().next().value as string);
    return true;
  }
}
