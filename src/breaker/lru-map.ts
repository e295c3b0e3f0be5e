/** An entry of an {@link LruMap}, as it hands them out (read it, do not keep it past a change to the map). */
export interface LruEntry<K, V> {
  readonly key: K;
  readonly value: V;
}

class LruNode<K, V> implements LruEntry<K, V> {
  readonly key: K;
  value: V;
  older: LruNode<K, V> | undefined;
  newer: LruNode<K, V> | undefined;

  constructor(key: K, value: V) {
    this.key = key;
    this.value = value;
  }
}

/**
 * A map that also keeps its entries in order of use, least recently used
 * first: the order an LRU eviction reads from the front. Making an entry the
 * newest, removing one and reading the oldest each cost the same whatever
 * the map holds. A Map whose entries are deleted and set again on every use
 * keeps that order too, but each re-insertion leaves a deleted slot in its
 * table until the table is rebuilt, and reading from the front skips all of
 * them: with thousands of sessions taking turns, thousands per operation.
 */
export class LruMap<K, V> {
  readonly #nodes = new Map<K, LruNode<K, V>>();
  #oldest: LruNode<K, V> | undefined;
  #newest: LruNode<K, V> | undefined;

  get size(): number {
    return this.#nodes.size;
  }

  get(key: K): V | undefined {
    return this.#nodes.get(key)?.value;
  }

  /** Sets `key`'s value: as a Map does, a new key becomes the newest entry and a known one keeps its place. */
  set(key: K, value: V): void {
    const node = this.#nodes.get(key);
    if (node !== undefined) {
      node.value = value;
      return;
    }
    const added = new LruNode(key, value);
    this.#nodes.set(key, added);
    this.#append(added);
  }

  /** Makes `key` the most recently used entry; returns its value, or undefined when the map does not hold it. */
  touch(key: K): V | undefined {
    const node = this.#nodes.get(key);
    if (node === undefined) return undefined;
    if (node !== this.#newest) {
      this.#unlink(node);
      this.#append(node);
    }
    return node.value;
  }

  delete(key: K): boolean {
    const node = this.#nodes.get(key);
    if (node === undefined) return false;
    this.#nodes.delete(key);
    this.#unlink(node);
    return true;
  }

  /** The least recently used entry, undefined when the map is empty. */
  oldest(): LruEntry<K, V> | undefined {
    return this.#oldest;
  }

  /** Every entry, least recently used first; each is read before the walk moves past it, so deleting it meanwhile is safe. */
  *entries(): Generator<[K, V]> {
    for (let node = this.#oldest; node !== undefined; ) {
      const next = node.newer;
      yield [node.key, node.value];
      node = next;
    }
  }

  #append(node: LruNode<K, V>): void {
    node.older = this.#newest;
    node.newer = undefined;
    if (this.#newest === undefined) this.#oldest = node;
    else this.#newest.newer = node;
    this.#newest = node;
  }

  #unlink(node: LruNode<K, V>): void {
    if (node.older === undefined) this.#oldest = node.newer;
    else node.older.newer = node.newer;
    if (node.newer === undefined) this.#newest = node.older;
    else node.newer.older = node.older;
    node.older = undefined;
    node.newer = undefined;
  }
}
