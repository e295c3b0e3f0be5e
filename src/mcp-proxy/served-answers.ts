/** A request id, as JSON-RPC has them. */
type RequestId = string | number;

/** The answer measured for a request: the result, and the JSON of the whole answer to the client and its bytes. */
interface Measured {
  readonly result: unknown;
  readonly json: string;
  readonly bytes: number;
}

/**
 * Whether `a` and `b` serialize to the same JSON: the same keys in the same
 * order and the same primitives. Strings are compared, not read: a result
 * that was parsed again (as the MCP SDK's server does with a `tools/call`
 * result) holds the very strings of the first, however long, so this walks
 * the structure only.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if ('toJSON' in a || 'toJSON' in b) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let at = 0; at < a.length; at += 1) if (!sameJson(a[at], other[at])) return false;
    return true;
  }
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  if (keys.length !== otherKeys.length) return false;
  return keys.every((key, at) => key === otherKeys[at] && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * The MCP client's requests that the proxy is answering, by id: what each
 * is (its name, for an error answer in place of one too large to send), and
 * its answer as measured while it was served. The answer's line is then
 * written as measured, not serialized once more: one may be megabytes.
 */
export class ServedAnswers {
  readonly #requests = new Map<RequestId, { readonly name: string; measured?: Measured }>();
  /** The names of the requests that answers being sent answer. */
  readonly #names = new WeakMap<object, string>();

  /** Request `id` of the client, named `name` (e.g. `tools/call "search"`), arrived. */
  asked(id: RequestId, name: string): void {
    this.#requests.set(id, { name });
  }

  /** Request `id` will not be answered (the client cancelled it). */
  forget(id: unknown): void {
    if (typeof id === 'string' || typeof id === 'number') this.#requests.delete(id);
  }

  /**
   * The bytes of the answer to request `id` (named `name`) with `result`,
   * line end not counted, as the client is to get it
   * (`{"result":…,"jsonrpc":"2.0","id":…}`, the MCP SDK's answer). Its JSON
   * is kept for the answer to be written with, when within `limit`. A result
   * measured already is not measured again.
   */
  measure(id: RequestId, name: string, result: unknown, limit: number): number {
    const request = this.#requests.get(id) ?? { name };
    this.#requests.set(id, request);
    const measured = request.measured;
    if (measured !== undefined && measured.result === result) return measured.bytes;
    const json = JSON.stringify({ result, jsonrpc: '2.0', id });
    const bytes = Buffer.byteLength(json);
    request.measured = bytes <= limit ? { result, json, bytes } : undefined;
    return bytes;
  }

  /**
   * As `message` is sent to the client: when it answers a request, the
   * request is let go, and its answer's JSON is returned when the answer is
   * the one measured (the same result, in the SDK's shape); undefined when
   * it is to be serialized.
   */
  take(message: { readonly id?: unknown; readonly method?: unknown }): string | undefined {
    const { id } = message;
    if (message.method !== undefined || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
    const request = this.#requests.get(id);
    if (request === undefined) return undefined;
    this.#requests.delete(id);
    this.#names.set(message, request.name);
    const { measured } = request;
    if (measured === undefined) return undefined;
    const keys = Object.keys(message);
    const shaped =
      keys.length === 3 && keys[0] === 'result' && keys[1] === 'jsonrpc' && keys[2] === 'id' && (message as { jsonrpc?: unknown }).jsonrpc === '2.0';
    return shaped && sameJson((message as { result?: unknown }).result, measured.result) ? measured.json : undefined;
  }

  /** The requests that are not answered yet (nor cancelled), by id and name, in the order they arrived. */
  unanswered(): { readonly id: RequestId; readonly name: string }[] {
    return [...this.#requests].map(([id, { name }]) => ({ id, name }));
  }

  /** The name of the request that `answer` answers, once {@link take} has let it go. */
  nameOf(answer: object): string | undefined {
    return this.#names.get(answer);
  }
}
