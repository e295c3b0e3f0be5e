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
   * The kept output as text, with a note where bytes were cut. A word the
   * cut went through is cut whole (counted with the cut bytes): a piece of a
   * secret (a token, a password in a URL) would no longer match the rule
   * that redacts it whole. A word here runs between whitespace, quotes,
   * brackets, `,` and `;`, which are ASCII, so no UTF-8 character is cut
   * either and the text holds no U+FFFD the command did not print.
   */
  toString(): string {
    const head = Buffer.concat(this.#head);
    const tail = Buffer.concat(this.#tail);
    if (this.cutBytes === 0) return Buffer.concat([head, tail]).toString('utf8');
    const keptHead = head.subarray(0, wordsEnd(head));
    const keptTail = tail.subarray(wordsStart(tail));
    const cut = this.#totalBytes - keptHead.length - keptTail.length;
    return `${keptHead.toString('utf8')}\n[... ${cut} bytes cut: output was ${this.#totalBytes} bytes, limit ${this.#headLimit + this.#tailLimit} ...]\n${keptTail.toString('utf8')}`;
  }
}

/**
 * Bytes that end a word: whitespace, quotes, brackets, `,` and `;`. Not `:`,
 * `/`, `@`, `=` or `.`, which run through tokens, keys and URLs with passwords.
 */
const WORD_ENDS = new Uint8Array(128);
for (const c of ' \t\n\r\f\v"\'`,;()[]{}<>') WORD_ENDS[c.charCodeAt(0)] = 1;

function endsWord(byte: number): boolean {
  return byte < 128 && WORD_ENDS[byte] === 1;
}

/** Where `head` ends once the word its end cuts off is left out: after its last word end. */
function wordsEnd(head: Buffer): number {
  let end = head.length;
  while (end > 0 && !endsWord(head[end - 1]!)) end--;
  return end;
}

/** Where `tail` starts once the word its start cuts off is left out: at its first word end. */
function wordsStart(tail: Buffer): number {
  let start = 0;
  while (start < tail.length && !endsWord(tail[start]!)) start++;
  return start;
}
