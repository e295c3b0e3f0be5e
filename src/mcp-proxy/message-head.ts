const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** A key or an `id`/`method` value longer than this is not one worth reading. */
const MAX_FIELD_BYTES = 256;

/** The fields of a JSON-RPC message that an answer to it needs. */
export interface MessageHeadFields {
  readonly id?: string | number;
  readonly method?: string;
}

/**
 * Reads the top-level `id` and `method` of one JSON-RPC message from its
 * bytes as they go by, keeping none of the rest: what a message too large
 * to keep can still be answered by. Any order of fields is read (the MCP
 * SDK writes `id` last, after the params); an `id` nested in the params is
 * not the message's. Bytes that are not JSON leave the fields unset.
 */
export class MessageHead {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The message is an object (a batch is an array: it has no id of its own). */
  #isObject = false;
  /** At depth 1 of the object, before a key. */
  #expectingKey = false;
  /** The bytes of the top-level key being read, or of the value of a wanted key. */
  #captured: number[] = [];
  #capturing: 'key' | 'value' | undefined;
  #key = '';
  #fields: { id?: string | number; method?: string } = {};

  /** The fields read so far. */
  get fields(): MessageHeadFields {
    return this.#fields;
  }

  feed(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; at += 1) {
      const byte = bytes[at]!;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) {
          this.#inString = false;
          if (this.#capturing === 'key') {
            this.#key = Buffer.from(this.#captured).toString('utf8');
            this.#capturing = undefined;
            continue;
          }
        }
        this.#keep(byte);
        continue;
      }
      switch (byte) {
        case QUOTE:
          this.#inString = true;
          if (this.#depth === 1 && this.#expectingKey) {
            this.#expectingKey = false;
            this.#key = '';
            this.#capturing = 'key';
            this.#captured = [];
          } else this.#keep(byte);
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          // A wanted value that is an object or an array is not an id or a method.
          if (this.#capturing === 'value') this.#capturing = undefined;
          this.#depth += 1;
          if (this.#depth === 1) this.#isObject = this.#expectingKey = byte === OPEN_OBJECT;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          if (this.#depth === 1) this.#endValue();
          this.#depth -= 1;
          break;
        case COLON:
          if (this.#depth === 1 && this.#isObject && (this.#key === 'id' || this.#key === 'method')) {
            this.#capturing = 'value';
            this.#captured = [];
          }
          break;
        case COMMA:
          if (this.#depth === 1) {
            this.#endValue();
            this.#expectingKey = this.#isObject;
          }
          break;
        default:
          this.#keep(byte);
      }
    }
  }

  #keep(byte: number): void {
    if (this.#capturing === undefined) return;
    if (this.#captured.length >= MAX_FIELD_BYTES) this.#capturing = undefined;
    else this.#captured.push(byte);
  }

  #endValue(): void {
    if (this.#capturing !== 'value') return;
    this.#capturing = undefined;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(this.#captured).toString('utf8'));
    } catch {
      return;
    }
    if (this.#key === 'id' && (typeof value === 'string' || typeof value === 'number')) this.#fields.id = value;
    if (this.#key === 'method' && typeof value === 'string') this.#fields.method = value;
  }
}
