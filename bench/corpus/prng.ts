/**
 * A small deterministic PRNG (sfc32 seeded by a cyrb128 string hash), so the
 * corpus is a pure function of its seeds: no Math.random, no clock. Each
 * trajectory forks its own stream from its id, so adding or removing one
 * scenario never shifts the random choices of another.
 */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: string) {
    const [a, b, c, d] = cyrb128(seed);
    this.#a = a;
    this.#b = b;
    this.#c = c;
    this.#d = d;
    // Warm up: the first outputs of sfc32 are correlated with the seed.
    for (let i = 0; i < 15; i++) this.next();
  }

  /** An independent stream named `name`, derived from this one's state. */
  fork(name: string): Rng {
    return new Rng(`${this.#a}:${this.#b}:${this.#c}:${this.#d}/${name}`);
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#a |= 0;
    this.#b |= 0;
    this.#c |= 0;
    this.#d |= 0;
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `count` distinct items in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    return this.shuffle(items).slice(0, Math.min(count, items.length));
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  /** `length` lowercase hex digits. */
  hex(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += '0123456789abcdef'[this.int(0, 15)];
    return out;
  }

  /** `length` decimal digits, the first not zero. */
  digits(length: number): string {
    let out = String(this.int(1, 9));
    for (let i = 1; i < length; i++) out += String(this.int(0, 9));
    return out;
  }

  /** Uppercase letters and digits, as in booking references. */
  code(length: number): string {
    const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }
}

/** cyrb128: a fast 128-bit string hash, good enough to seed sfc32. */
function cyrb128(input: string): [number, number, number, number] {
  let h1 = 1779033703,
    h2 = 3144134277,
    h3 = 1013904242,
    h4 = 2773480762;
  for (let i = 0; i < input.length; i++) {
    const k = input.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}
