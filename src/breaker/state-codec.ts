import type { BreakerSessionState, DelegationRecord, RetrievalRecord, TextRecord, ToolRecord, UserTurnsState } from './breaker-state.ts';
import { GovernorError } from '../errors/governor-error.ts';
import { packedFieldEnd } from './similarity/args-fingerprint.ts';
import { countText, isCount, isWord, Reader, writer } from './base85-numbers.ts';
import { isRecord } from './json-record.ts';

/**
 * The compact form of a session state starts with this marker and a version
 * digit; a plain JSON state (what older versions stored) starts with `{`, so
 * a reader tells the two apart by the first character.
 */
const MARKER = 'G';
const VERSION = '1';

/** Thrown by {@link decodeState} for text that is neither form of a stored session state. */
export class InvalidStateError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_STATE';
  constructor(problem: string, options?: { cause?: unknown }) {
    super('GOVERNOR_INVALID_STATE', `Not a stored breaker session state: ${problem}`, options);
  }
}

/**
 * A session state as one compact string, for stores that keep states
 * serialised (at rest in memory, or on a server). Lossless:
 * `decodeState(encodeState(s))` deep-equals `s`.
 *
 * The state's JSON with its bulky lists rewritten: each tool, reply,
 * retrieval and sub-agent record is an array of one string of base-85
 * numbers (sequence numbers as distances back from the session's, hashes in
 * 2–10 characters instead of up to 16 decimals) and its sketches or argument
 * fields as they are; tool and agent names are kept once per state in a table; the
 * seen-result hashes and the user-turn filters are one string each. A record
 * of a shape this version does not know (a state stored by an older
 * version) is kept as it is.
 */
export function encodeState(state: BreakerSessionState): string {
  const names = new Names();
  const encoded: Record<string, unknown> = {};
  for (const key of Object.keys(state)) {
    const value = (state as unknown as Record<string, unknown>)[key];
    switch (key) {
      case 'tools':
        encoded[key] = encodeList(value, (r) => encodeTool(r as ToolRecord, state.seq, names));
        break;
      case 'texts':
        encoded[key] = encodeList(value, (r) => encodeText(r as TextRecord, state.seq));
        break;
      case 'retrievals':
        encoded[key] = encodeList(value, (r) => encodeRetrieval(r as RetrievalRecord, state.seq));
        break;
      case 'delegations':
        encoded[key] = encodeList(value, (r) => encodeDelegation(r as DelegationRecord, state.seq, names));
        break;
      case 'seen':
        if (Array.isArray(value) && value.every(isCount)) {
          for (const n of value) writer.count(n);
          encoded[key] = writer.take();
        } else encoded[key] = value;
        break;
      case 'userTurns':
        encoded[key] = encodeUserTurns(value as UserTurnsState, state.seq) ?? value;
        break;
      default:
        encoded[key] = value;
    }
  }
  return `${MARKER}${VERSION}${JSON.stringify([names.list, encoded])}`;
}

/**
 * A session state from {@link encodeState}'s form, or from the plain JSON
 * older versions stored.
 * @throws {InvalidStateError} when the text is neither, or holds something
 * other than a session state.
 */
export function decodeState(text: string): BreakerSessionState {
  const first = text.charAt(0);
  if (first === '{') return checkedState(parse(text));
  if (first !== MARKER) throw new InvalidStateError(`unknown form (starts with ${JSON.stringify(first)})`);
  if (text.charAt(1) !== VERSION) throw new InvalidStateError(`unknown version ${JSON.stringify(text.charAt(1))}`);
  const body = parse(text.slice(2));
  if (!Array.isArray(body) || body.length !== 2 || !Array.isArray(body[0]) || typeof body[1] !== 'object' || body[1] === null) {
    throw new InvalidStateError('malformed body');
  }
  const names = body[0] as string[];
  const state = body[1] as Record<string, unknown>;
  const seq = state.seq as number;
  try {
    decodeList(state, 'tools', (r, strings) => decodeTool(r, strings, seq, names));
    decodeList(state, 'texts', (r, strings) => decodeText(r, strings, seq));
    decodeList(state, 'retrievals', (r, strings) => decodeRetrieval(r, strings, seq));
    decodeList(state, 'delegations', (r, strings) => decodeDelegation(r, strings, seq, names));
    if (typeof state.seen === 'string') state.seen = readCounts(new Reader(state.seen), Number.POSITIVE_INFINITY);
    if (typeof state.userTurns === 'string') state.userTurns = decodeUserTurns(state.userTurns, seq);
  } catch (error) {
    throw new InvalidStateError('malformed record', { cause: error });
  }
  return checkedState(state);
}

const STATUSES: readonly unknown[] = ['CLOSED', 'OPEN', 'HALF_OPEN'];
const LISTS = ['tools', 'seen', 'texts', 'retrievals', 'delegations', 'handled'] as const;
const OBJECTS = ['drift', 'budget', 'escalations', 'counters'] as const;

/**
 * The parts of a state every judgement reads, checked once here: JSON of
 * another shape (another program's key, a version this one does not know)
 * then fails as what it is instead of as a TypeError somewhere in a detector.
 */
function checkedState(value: unknown): BreakerSessionState {
  if (!isRecord(value)) throw new InvalidStateError('not an object');
  const state = value;
  if (state.v !== 1) throw new InvalidStateError(`unknown schema version ${JSON.stringify(state.v)}`);
  if (!STATUSES.includes(state.status)) throw new InvalidStateError('no valid status');
  if (!isCount(state.seq) || !isCount(state.userSeq)) throw new InvalidStateError('no valid sequence numbers');
  for (const key of LISTS) if (!Array.isArray(state[key])) throw new InvalidStateError(`"${key}" is not a list`);
  for (const key of OBJECTS) if (!isRecord(state[key])) throw new InvalidStateError(`"${key}" is not an object`);
  return value as unknown as BreakerSessionState;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidStateError('not valid JSON', { cause: error });
  }
}

/*
 * Lists of numbers are built in functions of their own, so V8 keeps them as
 * unboxed doubles (see pushBounded in breaker-state.ts).
 */
function readCounts(reader: Reader, length: number): number[] {
  const n = Number.isFinite(length) ? length : undefined;
  if (n !== undefined) {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = reader.count();
    return out;
  }
  const out: number[] = [];
  while (reader.at < reader.text.length) out.push(reader.count());
  return out;
}

function readWords(reader: Reader, length: number): number[] {
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) out[i] = reader.word();
  return out;
}

// ------------------------------------------------------------- records

/** Tool and agent names, each kept once per state. */
class Names {
  readonly list: string[] = [];
  readonly #index = new Map<string, number>();

  of(name: string): number {
    let i = this.#index.get(name);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(name);
      this.#index.set(name, i);
    }
    return i;
  }
}

function nameAt(names: readonly string[], i: number): string {
  const name = names[i];
  if (typeof name !== 'string') throw new RangeError('no such name');
  return name;
}

/** The record's keys are exactly `keys`, in that order (what the decoder rebuilds). */
function hasKeys(record: object, keys: readonly string[]): boolean {
  const own = Object.keys(record);
  if (own.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (own[i] !== keys[i]) return false;
  return true;
}

/** Sequence number `s` can be written as its distance back from the session's. */
function isBack(s: unknown, seq: number): s is number {
  return isCount(s) && isCount(seq) && s <= seq;
}

/**
 * A record: its numbers in one string, then its strings (sketches, argument
 * fields) as strings of their own. Decoding a slice of a longer string would
 * keep the whole string alive behind it (V8 shares the characters), so the
 * strings a record keeps are never cut out of another.
 */
type Packed = string[];

function encodeList(value: unknown, encode: (record: object) => Packed | undefined): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((record: unknown) => (typeof record === 'object' && record !== null && !Array.isArray(record) ? (encode(record) ?? record) : record));
}

function decodeList(state: Record<string, unknown>, key: string, decode: (head: Reader, strings: readonly unknown[]) => object): void {
  const list = state[key];
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const packed = list[i] as unknown;
    if (Array.isArray(packed)) {
      if (typeof packed[0] !== 'string') throw new RangeError('no record head');
      list[i] = decode(new Reader(packed[0]), packed);
    }
  }
}

function stringAt(strings: readonly unknown[], i: number): string {
  const value = strings[i];
  if (typeof value !== 'string') throw new RangeError('record string missing');
  return value;
}

const TOOL_KEYS = ['s', 't', 'a', 'r', 'e', 'p'];
const FINGERPRINT_KEYS = ['h', 'f'];

/** Added to a tool record's error-and-progress digit when its field paths are names of the table. */
const TOOL_FIELD_NAMES = 24;

/**
 * Packed argument fields (see PackedFields) with each path replaced by its
 * index in the name table: a session's calls of one tool repeat the same
 * paths. Undefined when the text is not in the packed form (kept as it is).
 */
function internFields(f: string, names: Names): string | undefined {
  // Joined from slices of `f` rather than copied code by code: the pieces are
  // copied natively into one flat string, which keeps nothing of `f` alive.
  const parts: string[] = [];
  let at = 0;
  while (at < f.length) {
    const bar = f.indexOf('|', at);
    const end = bar < 0 ? undefined : packedFieldEnd(f, bar + 1);
    if (end === undefined) return undefined;
    parts.push(countText(names.of(f.slice(at, bar))), f.slice(bar + 1, end));
    at = end;
  }
  return parts.join('');
}

function restoreFields(text: string, names: readonly string[]): string {
  const reader = new Reader(text);
  const parts: string[] = [];
  while (reader.at < text.length) {
    const path = nameAt(names, reader.count());
    const end = packedFieldEnd(text, reader.at);
    if (end === undefined) throw new RangeError('malformed field');
    parts.push(path, '|', text.slice(reader.at, end));
    reader.at = end;
  }
  // Joined, not appended: one flat string, as the fingerprinter makes it.
  return parts.join('');
}

/** distance, name, argument hash, result hash, one digit of error kind × 8 + progress flags (+ 24 when the field paths are interned); then the fields. */
function encodeTool(r: ToolRecord, seq: number, names: Names): Packed | undefined {
  const a = r.a as unknown;
  if (!isBack(r.s, seq) || !hasKeys(r, TOOL_KEYS) || typeof r.t !== 'string' || typeof a !== 'object' || a === null) return undefined;
  if (!hasKeys(a, FINGERPRINT_KEYS) || !isCount(r.a.h) || typeof r.a.f !== 'string' || !isCount(r.r)) return undefined;
  if ((r.e !== 0 && r.e !== 1 && r.e !== 2) || !isCount(r.p) || r.p > 7) return undefined;
  const t = names.of(r.t);
  const fields = internFields(r.a.f, names);
  writer.count(seq - r.s);
  writer.count(t);
  writer.count(r.a.h);
  writer.count(r.r);
  writer.digit(r.e * 8 + r.p + (fields === undefined ? 0 : TOOL_FIELD_NAMES));
  return [writer.take(), fields ?? r.a.f];
}

function decodeTool(reader: Reader, strings: readonly unknown[], seq: number, names: readonly string[]): ToolRecord {
  const s = seq - reader.count();
  const t = nameAt(names, reader.count());
  const h = reader.count();
  const r = reader.count();
  let ep = reader.digit();
  let f = stringAt(strings, 1);
  if (ep >= TOOL_FIELD_NAMES) {
    ep -= TOOL_FIELD_NAMES;
    f = restoreFields(f, names);
  }
  return { s, t, a: { h, f }, r, e: (ep >> 3) as 0 | 1 | 2, p: ep & 7 };
}

const TEXT_KEYS = ['s', 'k', 'c', 'u', 'b'];
const TEXT_C = 1;
const TEXT_U = 2;
const TEXT_B = 4;

/** distance, flags, [structure hash], [filter words]; then the sketch. */
function encodeText(r: TextRecord, seq: number): Packed | undefined {
  const present = TEXT_KEYS.filter((k) => k in r);
  if (!isBack(r.s, seq) || typeof r.k !== 'string' || !hasKeys(r, present) || present[0] !== 's' || present[1] !== 'k') return undefined;
  if ((r.c !== undefined && !isCount(r.c)) || ('u' in r && r.u !== 1)) return undefined;
  if ('b' in r && !(Array.isArray(r.b) && r.b.every(isWord))) return undefined;
  const flags = ('c' in r ? TEXT_C : 0) | ('u' in r ? TEXT_U : 0) | ('b' in r ? TEXT_B : 0);
  writer.count(seq - r.s);
  writer.digit(flags);
  if (r.c !== undefined) writer.count(r.c);
  if (r.b !== undefined) writer.words(r.b);
  return [writer.take(), r.k];
}

function decodeText(reader: Reader, strings: readonly unknown[], seq: number): TextRecord {
  const s = seq - reader.count();
  const flags = reader.digit();
  const c = flags & TEXT_C ? reader.count() : undefined;
  const b = flags & TEXT_B ? readWords(reader, reader.count()) : undefined;
  const record: { s: number; k: string; c?: number; u?: 1; b?: number[] } = { s, k: stringAt(strings, 1) };
  if (c !== undefined) record.c = c;
  if (flags & TEXT_U) record.u = 1;
  if (b !== undefined) record.b = b;
  return record;
}

const RETRIEVAL_KEYS = ['s', 'q', 'r', 'k', 'f', 'n', 'o', 'w', 'v', 'c'];
const RETRIEVAL_NULL = 1;
const RETRIEVAL_K = 2;
const RETRIEVAL_F = 4;
const RETRIEVAL_N = 8;
const RETRIEVAL_O = 16;
// The name words, the words and the first word come together: one flag for them keeps the flags in one base-85 digit.
const RETRIEVAL_W = 32;

/** distance, flags, [result-set hash], [identity], [query names], [offered names], [name words], [words]; then the sketch. */
function encodeRetrieval(r: RetrievalRecord, seq: number): Packed | undefined {
  const present = RETRIEVAL_KEYS.filter((k) => k in r);
  if (!isBack(r.s, seq) || typeof r.q !== 'string' || !hasKeys(r, present) || present[0] !== 's' || present[1] !== 'q' || present[2] !== 'r') return undefined;
  if ((r.r !== null && !isCount(r.r)) || (r.k !== undefined && !isCount(r.k)) || ('f' in r && r.f !== 1)) return undefined;
  for (const list of [r.n, r.o, r.w, r.v]) if (list !== undefined && !(Array.isArray(list) && list.every(isCount))) return undefined;
  if ((r.w === undefined) !== (r.v === undefined) || (r.c !== undefined && (r.w === undefined || !isCount(r.c) || r.c === 0))) return undefined;
  const flags =
    (r.r === null ? RETRIEVAL_NULL : 0) |
    ('k' in r ? RETRIEVAL_K : 0) |
    ('f' in r ? RETRIEVAL_F : 0) |
    ('n' in r ? RETRIEVAL_N : 0) |
    ('o' in r ? RETRIEVAL_O : 0) |
    ('w' in r ? RETRIEVAL_W : 0);
  writer.count(seq - r.s);
  writer.digit(flags);
  if (r.r !== null) writer.count(r.r);
  if (r.k !== undefined) writer.count(r.k);
  if (r.n !== undefined) writer.counts(r.n);
  if (r.o !== undefined) writer.counts(r.o);
  if (r.w !== undefined) writer.counts(r.w);
  if (r.v !== undefined) writer.counts(r.v);
  if (r.w !== undefined) writer.count(r.c ?? 0);
  return [writer.take(), r.q];
}

function decodeRetrieval(reader: Reader, strings: readonly unknown[], seq: number): RetrievalRecord {
  const s = seq - reader.count();
  const flags = reader.digit();
  const r = flags & RETRIEVAL_NULL ? null : reader.count();
  const k = flags & RETRIEVAL_K ? reader.count() : undefined;
  const n = flags & RETRIEVAL_N ? readCounts(reader, reader.count()) : undefined;
  const o = flags & RETRIEVAL_O ? readCounts(reader, reader.count()) : undefined;
  const w = flags & RETRIEVAL_W ? readCounts(reader, reader.count()) : undefined;
  const v = flags & RETRIEVAL_W ? readCounts(reader, reader.count()) : undefined;
  const c = flags & RETRIEVAL_W ? reader.count() : 0;
  const record: { s: number; q: string; r: number | null; k?: number; f?: 1; n?: number[]; o?: number[]; w?: number[]; v?: number[]; c?: number } = {
    s,
    q: stringAt(strings, 1),
    r,
  };
  if (k !== undefined) record.k = k;
  if (flags & RETRIEVAL_F) record.f = 1;
  if (n !== undefined) record.n = n;
  if (o !== undefined) record.o = o;
  if (w !== undefined) record.w = w;
  if (v !== undefined) record.v = v;
  if (c !== 0) record.c = c;
  return record;
}

const DELEGATION_KEYS = ['s', 'g', 'i', 'o', 'n', 'k', 'e'];
const DELEGATION_K = 1;
const DELEGATION_E = 2;

/** distance, name, flags, answer size, [identity]; then the task and answer sketches. */
function encodeDelegation(r: DelegationRecord, seq: number, names: Names): Packed | undefined {
  const present = DELEGATION_KEYS.filter((k) => k in r);
  if (!isBack(r.s, seq) || !hasKeys(r, present) || present.length < 5 || present[4] !== 'n') return undefined;
  if (typeof r.g !== 'string' || typeof r.i !== 'string' || typeof r.o !== 'string' || !isCount(r.n)) return undefined;
  if ((r.k !== undefined && !isCount(r.k)) || ('e' in r && r.e !== 2)) return undefined;
  const flags = ('k' in r ? DELEGATION_K : 0) | ('e' in r ? DELEGATION_E : 0);
  const g = names.of(r.g);
  writer.count(seq - r.s);
  writer.count(g);
  writer.digit(flags);
  writer.count(r.n);
  if (r.k !== undefined) writer.count(r.k);
  return [writer.take(), r.i, r.o];
}

function decodeDelegation(reader: Reader, strings: readonly unknown[], seq: number, names: readonly string[]): DelegationRecord {
  const s = seq - reader.count();
  const g = nameAt(names, reader.count());
  const flags = reader.digit();
  const n = reader.count();
  const k = flags & DELEGATION_K ? reader.count() : undefined;
  const record: { s: number; g: string; i: string; o: string; n: number; k?: number; e?: 2 } = { s, g, i: stringAt(strings, 1), o: stringAt(strings, 2), n };
  if (k !== undefined) record.k = k;
  if (flags & DELEGATION_E) record.e = 2;
  return record;
}

const USER_TURN_KEYS = ['s', 'f', 'w', 'v', 'n'];

/** distance, twice the token weight (a token of an unspaced script weighs half), tokens in the generation, fresh tokens, then the filters. */
function encodeUserTurns(u: UserTurnsState | undefined, seq: number): string | undefined {
  if (typeof u !== 'object' || u === null || !hasKeys(u, USER_TURN_KEYS)) return undefined;
  if (!isBack(u.s, seq) || !isCount(u.w * 2) || !isCount(u.n) || !Array.isArray(u.f) || !u.f.every(isCount) || !Array.isArray(u.v)) return undefined;
  if (!u.v.every((g) => Array.isArray(g) && g.every(isWord))) return undefined;
  writer.count(seq - u.s);
  writer.count(u.w * 2);
  writer.count(u.n);
  writer.counts(u.f);
  writer.count(u.v.length);
  for (const generation of u.v) writer.words(generation);
  return writer.take();
}

function decodeUserTurns(text: string, seq: number): UserTurnsState {
  const reader = new Reader(text);
  const s = seq - reader.count();
  const w = reader.count() / 2;
  const n = reader.count();
  const f = readCounts(reader, reader.count());
  const v = new Array<number[]>(reader.count());
  for (let i = 0; i < v.length; i++) v[i] = readWords(reader, reader.count());
  return { s, f, w, v, n };
}
