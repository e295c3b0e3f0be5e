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
   * The kept output as text, with a note where bytes were cut. A UTF-8
   * character the cut went through is cut whole (counted with the cut
   * bytes), so the text holds no U+FFFD the command did not print.
   */
  toString(): string {
    const head = Buffer.concat(this.#head);
    const tail = Buffer.concat(this.#tail);
    if (this.cutBytes === 0) return Buffer.concat([head, tail]).toString('utf8');
    const keptHead = head.subarray(0, wholeCharactersEnd(head));
    const keptTail = tail.subarray(continuationBytesAtStart(tail));
    const cut = this.#totalBytes - keptHead.length - keptTail.length;
    return `${keptHead.toString('utf8')}\n[... ${cut} bytes cut: output was ${this.#totalBytes} bytes, limit ${this.#headLimit + this.#tailLimit} ...]\n${keptTail.toString('utf8')}`;
  }
}

/** Where the last whole UTF-8 character of `bytes` ends: before a character its end cuts off. */
function wholeCharactersEnd(bytes: Buffer): number {
  let start = bytes.length - 1;
  // A character is at most 4 bytes: its lead byte is among the last 4.
  while (start >= 0 && start > bytes.length - 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return bytes.length;
  const lead = bytes[start]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + length > bytes.length ? start : bytes.length;
}

/** How many bytes at the start of `bytes` continue a character its start cuts off (at most 3). */
function continuationBytesAtStart(bytes: Buffer): number {
  let skip = 0;
  while (skip < 3 && skip < bytes.length && (bytes[skip]! & 0xc0) === 0x80) skip++;
  return skip;
}
