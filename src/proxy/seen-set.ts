import { RecentMap } from './recent-map.ts';

/** A bounded set of keys, oldest dropped first: remembers what was already observed. */
export class SeenSet {
  readonly #keys: RecentMap<string, true>;

  constructor(limit = 100_000) {
    this.#keys = new RecentMap(limit);
  }

  /** True the first time a key is seen. */
  first(key: string): boolean {
    if (this.#keys.get(key) === true) return false;
    this.#keys.set(key, true);
    return true;
  }
}
