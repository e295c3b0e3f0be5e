/**
 * Collects a process's output in bounded memory, keeping the first and the last
 * `maxBytes / 2` bytes: errors tend to sit at the end, context at the start.
 */
export class CappedOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #totalBytes = 0;

  /** @param maxBytes most bytes kept; the rest is counted and cut. */
  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  /** Total bytes seen, kept or not. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Bytes dropped from the middle. */
  get cutBytes(): number {
    return this.#totalBytes - this.#headBytes - this.#tailBytes;
  }

  append(chunk: Buffer): void {
    this.#totalBytes += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(this.#headLimit - this.#headBytes, rest.length);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    // Trim whole chunks first so memory stays near the limit, then the oldest partial one.
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#tailLimit) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
    const excess = this.#tailBytes - this.#tailLimit;
    const first = this.#tail[0];
    if (excess > 0 && first !== undefined) {
      this.#tail[0] = first.subarray(excess);
      this.#tailBytes -= excess;
    }
  }

  /**
   * The kept output as text, with a note where bytes were cut. A multi-byte
   * character split by a cut shows as U+FFFD.
   */
  toString(): string {
    const head = Buffer.concat(this.#head).toString('utf8');
    const tail = Buffer.concat(this.#tail).toString('utf8');
    if (this.cutBytes === 0) return head + tail;
    return `${head}\n[... ${this.cutBytes} bytes cut: output was ${this.#totalBytes} bytes, limit ${this.#headLimit + this.#tailLimit} ...]\n${tail}`;
  }
}
