import { hash32, hash53, UnorderedHash } from './hash.ts';
import { IdentityKeyMatcher } from './identity-keys.ts';
import { textIdentity } from './text-identity.ts';
import { normalizeText, scanText } from './tokenize.ts';
import {
  DEFAULT_SKETCH_SIZE,
  DIGIT_CODES,
  PACKED_HASH_WIDTH,
  digitAt,
  digitOf,
  packedJaccard,
  sketchHashes,
  unpackSketch,
  writeHashDigits,
  type AnySketch,
} from './token-sketch.ts';
import { DEFAULT_MAX_NESTING_DEPTH, jsonNestsDeeperThan } from '../../errors/nesting-depth.ts';

/**
 * How one argument field is compared:
 * - `i` identity field (path, id, page, …): exact, and a difference makes the
 *   whole call different;
 * - `v` short scalar (number, enum-like string, boolean): exact;
 * - `t` free text: token-set similarity.
 */
export type FieldKind = 'i' | 'v' | 't';

/** One flattened argument field: key path, kind, and a hash or a token sketch (packed, see PackedSketch). */
export type FieldPrint = readonly [path: string, kind: FieldKind, value: number | AnySketch];

/**
 * A fingerprint's fields packed into one string, sorted by path: per field
 * its path, `|`, its kind, then a 32-bit hash as 5 base-85 digits (`i`, `v`)
 * or a sketch as its length in one digit and 3 digits per hash (`t`). One
 * flat string per tool call instead of an array of arrays keeps a session's
 * tool records a few times smaller on the heap and in JSON; comparisons read
 * it in place. A `|` inside a path is stored as `!`.
 */
export type PackedFields = string;

/**
 * A bounded, JSON-safe summary of a tool call's arguments, enough to judge
 * similarity later without keeping the (possibly large) arguments themselves.
 */
export interface ArgsFingerprint {
  /** Hash of the canonical arguments: equal hashes mean identical arguments. */
  readonly h: number;
  /** Flattened fields, sorted by path (an array of {@link FieldPrint} in states stored by older versions). */
  readonly f: PackedFields | readonly FieldPrint[];
}

/** Limits that keep one fingerprint small whatever the arguments. */
export interface FingerprintLimits {
  /** Most fields kept; the rest are folded into one text field. @default 24 */
  readonly maxFields?: number;
  /** Sketch size per text field (at most 84). @default 16 */
  readonly sketchSize?: number;
  /** Longest argument text considered (characters). @default 65536 */
  readonly maxChars?: number;
}

const MAX_DEPTH = 8;
const MAX_PATH = 96;
/** Strings longer than this, or with whitespace, are free text rather than scalar values. */
const MAX_SCALAR_CHARS = 48;
/** Free-text fields with a sketch of their own; further ones share the overflow sketch. */
const MAX_TEXT_FIELDS = 4;
const FREE_TEXT_ID = '$id';
const FREE_TEXT = '$text';
const OVERFLOW = '$more';

/**
 * Builds argument fingerprints and compares them. Arguments may be an object,
 * a JSON string (parsed, then compared field by field), or free text (a
 * command line: the first line's numbers, paths and file names are its
 * identity, the rest is compared by tokens).
 */
export class ArgsFingerprinter {
  private readonly identity: IdentityKeyMatcher;
  private readonly maxFields: number;
  private readonly sketchSize: number;
  private readonly maxChars: number;

  constructor(identity: IdentityKeyMatcher = new IdentityKeyMatcher(), limits: FingerprintLimits = {}) {
    this.identity = identity;
    this.maxFields = limits.maxFields ?? 24;
    // A packed field holds its sketch's length in one base-85 digit.
    this.sketchSize = Math.min(MAX_PACKED_SKETCH, limits.sketchSize ?? DEFAULT_SKETCH_SIZE);
    this.maxChars = limits.maxChars ?? 65_536;
  }

  fingerprint(args: unknown): ArgsFingerprint {
    const parsed = this.parse(args);
    if (typeof parsed === 'string') return this.fingerprintText(parsed);
    const leaves: Array<[string, string, unknown]> = [];
    flatten(parsed, '', '', 0, leaves, this.maxFields * 4);
    const fields: FieldPrint[] = [];
    const overflow: string[] = [];
    // The exact-arguments hash is built from every leaf's path and content hash:
    // large values are read once, for their tokens and their hash together.
    const exact = new UnorderedHash();
    let textFields = 0;
    for (let l = 0; l < leaves.length; l++) {
      const leaf = leaves[l]!;
      const path = leaf[0];
      const key = leaf[1];
      const value = leaf[2];
      const kind = key === '' ? 'other' : this.identity.kind(key);
      if (kind === 'retry') {
        exact.add(path, hash32(scalarText(value)));
        continue;
      }
      const [field, content] = this.field(path, value, kind === 'identity');
      exact.add(path, content);
      // Beyond the field cap, or past a few free-text fields (the bulky ones), fold into one text field.
      if (fields.length >= this.maxFields - 1 || (field[1] === 't' && ++textFields > MAX_TEXT_FIELDS)) {
        overflow.push(String(value));
        continue;
      }
      fields.push(field);
    }
    if (overflow.length > 0) {
      const text = overflow.join(' ');
      const clipped = text.length > this.maxChars ? text.slice(0, this.maxChars) : text;
      fields.push([OVERFLOW, 't', sketchHashes(scanText(clipped, true).tokens, this.sketchSize)]);
    }
    return { h: exact.digest(), f: packFields(fields) };
  }

  private parse(args: unknown): unknown {
    if (typeof args !== 'string') return args ?? '';
    const trimmed = args.trim();
    // Too deep to walk safely: compared as text instead.
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && trimmed.length <= this.maxChars && !jsonNestsDeeperThan(trimmed, DEFAULT_MAX_NESTING_DEPTH)) {
      try {
        return JSON.parse(trimmed) as unknown;
      } catch {
        // Not JSON after all: compare as text.
      }
    }
    return args.length > this.maxChars ? args.slice(0, this.maxChars) : args;
  }

  /** The field's print, and a hash of its exact content. */
  private field(path: string, value: unknown, identity: boolean): [FieldPrint, number] {
    const p = path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path;
    if (typeof value === 'string' && value.length > this.maxChars) value = value.slice(0, this.maxChars);
    if (identity) {
      const h = hash32(identityText(value));
      return [[p, 'i', h], h];
    }
    if (typeof value === 'string' && (value.length > MAX_SCALAR_CHARS || /\s/.test(value.trim()))) {
      // Long text is sampled for its tokens (bounded cost) but hashed in full.
      const scanned = scanText(value, true);
      return [[p, 't', sketchHashes(scanned.tokens, this.sketchSize)], scanned.content];
    }
    const h = hash32(scalarText(value));
    return [[p, 'v', h], typeof value === 'string' ? h : hash32(`${typeof value}:${scalarText(value)}`)];
  }

  private fingerprintText(text: string): ArgsFingerprint {
    const fields: FieldPrint[] = [];
    // What the command's first line names (`open file.py 120`, `goto 300`) is its identity.
    const newline = text.indexOf('\n');
    const identity = textIdentity(newline === -1 ? text : text.slice(0, newline));
    if (identity !== 0) fields.push([FREE_TEXT_ID, 'i', identity]);
    const scanned = scanText(text.trim(), true);
    fields.push([FREE_TEXT, 't', sketchHashes(scanned.tokens, this.sketchSize)]);
    return { h: scanned.content, f: packFields(fields) };
  }
}

/**
 * Similarity of two fingerprints in [0, 1]. Identical arguments score 1; a
 * differing identity field scores 0 (a different target is a different call).
 * Otherwise each top-level argument scores the mean of its fields (a field on
 * one side only scores 0), and the call scores the mean of its top-level
 * arguments — leaving out those made only of matching identity fields: they
 * say the two calls act on the same thing, not that they do the same to it,
 * so an unchanged `path` does not make two different edits of a file alike.
 */
export function compareFingerprints(a: ArgsFingerprint, b: ArgsFingerprint, k = DEFAULT_SKETCH_SIZE): number {
  if (a.h === b.h) return 1;
  const fa = packedFieldsOf(a);
  const fb = packedFieldsOf(b);
  const groups = new Map<string, { score: number; count: number; gate: boolean }>();
  const add = (fields: string, at: number, bar: number, score: number, gate: boolean) => {
    const dot = fields.indexOf('.', at);
    const key = fields.slice(at, dot === -1 || dot > bar ? bar : dot);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { score, count: 1, gate });
    else {
      group.score += score;
      group.count++;
      group.gate &&= gate;
    }
  };
  // Walk both field lists in path order, like merging two sorted lists.
  let i = 0;
  let j = 0;
  while (i < fa.length || j < fb.length) {
    const barA = i < fa.length ? fa.indexOf('|', i) : -1;
    const barB = j < fb.length ? fb.indexOf('|', j) : -1;
    const order = barA === -1 ? 1 : barB === -1 ? -1 : comparePaths(fa, i, barA, fb, j, barB);
    if (order === 0) {
      const s = compareField(fa, barA + 1, fb, barB + 1, k);
      if (s < 0) return 0;
      add(fa, i, barA, s, fa.charCodeAt(barA + 1) === IDENTITY_CODE);
      i = fieldEnd(fa, barA);
      j = fieldEnd(fb, barB);
    } else if (order < 0) {
      add(fa, i, barA, 0, false);
      i = fieldEnd(fa, barA);
    } else {
      add(fb, j, barB, 0, false);
      j = fieldEnd(fb, barB);
    }
  }
  let total = 0;
  let counted = 0;
  for (const group of groups.values()) {
    if (group.gate) continue;
    total += group.score / group.count;
    counted++;
  }
  return counted === 0 ? 1 : total / counted;
}

/** The fields of a fingerprint, unpacked (see {@link PackedFields}). */
export function fieldPrints(print: ArgsFingerprint): FieldPrint[] {
  const f = packedFieldsOf(print);
  const out: FieldPrint[] = [];
  for (let at = 0; at < f.length; ) {
    const bar = f.indexOf('|', at);
    const kind = f[bar + 1] as FieldKind;
    const end = fieldEnd(f, bar);
    const value = kind === 't' ? (end > bar + 3 ? `~${f.slice(bar + 3, end)}` : '') : readHash32(f, bar + 2);
    out.push([f.slice(at, bar), kind, value]);
    at = end;
  }
  return out;
}

const MAX_PACKED_SKETCH = 84;
const HASH32_WIDTH = 5;
const IDENTITY_CODE = 'i'.charCodeAt(0);
const TEXT_CODE = 't'.charCodeAt(0);
const VALUE_CODE = 'v'.charCodeAt(0);
const BAR_CODE = '|'.charCodeAt(0);
const BASE = DIGIT_CODES.length;

/** Packs fields (any order) into {@link PackedFields}. */
function packFields(fields: readonly FieldPrint[]): PackedFields {
  const sorted = fields.some((field) => field[0].includes('|'))
    ? fields.map(([path, kind, value]): FieldPrint => [path.replaceAll('|', '!'), kind, value])
    : fields.slice();
  sortByPath(sorted);
  return packAscii(sorted) ?? packAny(sorted);
}

/** Longest list of fields sorted by insertion; a longer one (a raised `maxFields`) goes to the native sort. */
const INSERTION_SORT_MAX = 32;

/**
 * Sorts fields by path, in place. A call's few fields are sorted by
 * insertion: Array.prototype.sort allocates a work space of its own on
 * every call (about 0.9 KB for three fields), on every tool call.
 */
function sortByPath(fields: FieldPrint[]): void {
  if (fields.length > INSERTION_SORT_MAX) {
    fields.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return;
  }
  for (let i = 1; i < fields.length; i++) {
    const field = fields[i]!;
    let j = i - 1;
    for (; j >= 0 && fields[j]![0] > field[0]; j--) fields[j + 1] = fields[j]!;
    fields[j + 1] = field;
  }
}

/** Most bytes one packed field takes beyond its path. */
const MAX_PACKED_FIELD = 3 + MAX_PACKED_SKETCH * PACKED_HASH_WIDTH;
/** Reused by {@link packAscii}, which runs on every tool call. */
let packed = Buffer.allocUnsafe(1024);

/**
 * {@link packFields} when every path is ASCII (the common case): written
 * byte by byte and read out as one flat string, a few times cheaper than
 * joining pieces; undefined otherwise.
 */
function packAscii(sorted: readonly FieldPrint[]): PackedFields | undefined {
  let size = 0;
  for (let f = 0; f < sorted.length; f++) size += sorted[f]![0].length + MAX_PACKED_FIELD;
  if (packed.length < size) packed = Buffer.allocUnsafe(size);
  const out = packed;
  let n = 0;
  for (let f = 0; f < sorted.length; f++) {
    const field = sorted[f]!;
    const path = field[0];
    const kind = field[1];
    const value = field[2];
    for (let i = 0; i < path.length; i++) {
      const c = path.charCodeAt(i);
      if (c > 127) return undefined;
      out[n++] = c;
    }
    out[n++] = BAR_CODE;
    if (kind !== 't') {
      out[n++] = kind === 'i' ? IDENTITY_CODE : VALUE_CODE;
      // A 32-bit hash is a double past 2^30: `h % BASE` would be a call to fmod per digit, the remainder from the quotient is not.
      let h = value as number;
      for (let d = HASH32_WIDTH - 1; d >= 0; d--) {
        const q = Math.floor(h / BASE);
        out[n + d] = DIGIT_CODES[h - q * BASE]!;
        h = q;
      }
      n += HASH32_WIDTH;
      continue;
    }
    // Sketches arrive as hashes (straight from the fingerprinter) or, from older states, in any stored form.
    const hashes = unpackSketch(value as AnySketch);
    const length = Math.min(hashes.length, MAX_PACKED_SKETCH);
    out[n++] = TEXT_CODE;
    out[n++] = DIGIT_CODES[length]!;
    for (let i = 0; i < length; i++, n += PACKED_HASH_WIDTH) writeHashDigits(out, n, hashes[i]!);
  }
  return out.toString('latin1', 0, n);
}

function packAny(sorted: readonly FieldPrint[]): PackedFields {
  const parts: string[] = [];
  for (const [path, kind, value] of sorted) {
    if (kind === 't') {
      const hashes = unpackSketch(value as AnySketch);
      const sketch = hashes.length > MAX_PACKED_SKETCH ? hashes.slice(0, MAX_PACKED_SKETCH) : hashes;
      const codes = new Array<number>(sketch.length * PACKED_HASH_WIDTH);
      for (let i = 0; i < sketch.length; i++) writeHashDigits(codes, i * PACKED_HASH_WIDTH, sketch[i]!);
      parts.push(path, '|t', digitOf(sketch.length), String.fromCharCode(...codes));
    } else parts.push(path, '|', kind, hash32Digits(value as number));
  }
  // Joined, not appended: appending keeps a rope of the pieces on the heap, join makes one flat string.
  return parts.join('');
}

/** Packed fields of a fingerprint; those stored by older versions as an array are packed first. */
function packedFieldsOf(print: ArgsFingerprint): PackedFields {
  return typeof print.f === 'string' ? print.f : packFields(print.f);
}

function hash32Digits(h: number): string {
  let out = '';
  for (let d = 0; d < HASH32_WIDTH; d++) {
    out = digitOf(h % BASE) + out;
    h = Math.floor(h / BASE);
  }
  return out;
}

function readHash32(f: string, at: number): number {
  let h = 0;
  for (let d = 0; d < HASH32_WIDTH; d++) h = h * BASE + digitAt(f, at + d);
  return h;
}

/** Where the field whose path ends at `bar` ends (its value's last digit + 1); trusts the fingerprinter's own form. */
function fieldEnd(f: string, bar: number): number {
  return f.charCodeAt(bar + 1) === TEXT_CODE ? bar + 3 + digitAt(f, bar + 2) * PACKED_HASH_WIDTH : bar + 2 + HASH32_WIDTH;
}

/**
 * Where a packed field whose kind is at `kind` ends (see {@link PackedFields}),
 * or undefined when what is there is not a whole field: for text read from
 * elsewhere, such as a stored state.
 */
export function packedFieldEnd(f: string, kind: number): number | undefined {
  const k = f.charCodeAt(kind);
  let end: number;
  if (k === TEXT_CODE) {
    const length = digitAt(f, kind + 1);
    if (length < 0) return undefined;
    end = kind + 2 + length * PACKED_HASH_WIDTH;
  } else if (k === IDENTITY_CODE || k === VALUE_CODE) end = kind + 1 + HASH32_WIDTH;
  else return undefined;
  return end <= f.length ? end : undefined;
}

/** Compares the paths `a[i, barA)` and `b[j, barB)` as strings, in place. */
function comparePaths(a: string, i: number, barA: number, b: string, j: number, barB: number): number {
  for (; i < barA && j < barB; i++, j++) {
    const d = a.charCodeAt(i) - b.charCodeAt(j);
    if (d !== 0) return d;
  }
  return barA - i - (barB - j);
}

/** Field score, from each field's kind on; -1 means "identity differs": the calls are different. */
function compareField(a: string, ka: number, b: string, kb: number, k: number): number {
  const kindA = a.charCodeAt(ka);
  const kindB = b.charCodeAt(kb);
  if (kindA === IDENTITY_CODE || kindB === IDENTITY_CODE) return kindA === kindB && sameDigits(a, ka + 1, b, kb + 1) ? 1 : -1;
  if (kindA === TEXT_CODE && kindB === TEXT_CODE) {
    const endA = ka + 2 + digitAt(a, ka + 1) * PACKED_HASH_WIDTH;
    const endB = kb + 2 + digitAt(b, kb + 1) * PACKED_HASH_WIDTH;
    return packedJaccard(a, ka + 2, endA, b, kb + 2, endB, k);
  }
  if (kindA === kindB) return sameDigits(a, ka + 1, b, kb + 1) ? 1 : 0;
  return 0;
}

function sameDigits(a: string, i: number, b: string, j: number): boolean {
  for (let d = 0; d < HASH32_WIDTH; d++) if (a.charCodeAt(i + d) !== b.charCodeAt(j + d)) return false;
  return true;
}

/**
 * The leaves of `value`, at most `limit`. Its walk stops at the limit: an
 * array's length (a sparse `new Array(1e8)`) or an object's key count costs
 * nothing past it. Binary data is one leaf (see {@link binaryText}), not a
 * field per byte.
 */
function flatten(value: unknown, path: string, key: string, depth: number, out: Array<[string, string, unknown]>, limit: number): void {
  if (out.length >= limit) return;
  if (value !== null && typeof value === 'object' && depth < MAX_DEPTH) {
    const binary = binaryText(value);
    if (binary !== undefined) {
      out.push([path, key, binary]);
      return;
    }
    if (Array.isArray(value)) {
      if (value.length === 0) out.push([path, key, '[]']);
      // Elements inherit the array's key: `order_ids.3` is still an order id.
      for (let i = 0; i < value.length && out.length < limit; i++) flatten(value[i], path === '' ? String(i) : `${path}.${i}`, key, depth + 1, out, limit);
      return;
    }
    // In Object.keys order, without building the whole list of keys first.
    let empty = true;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      empty = false;
      if (out.length >= limit) break;
      flatten((value as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`, k, depth + 1, out, limit);
    }
    if (empty) out.push([path, key, '{}']);
    return;
  }
  out.push([path, key, value]);
}

/** Bytes of binary data sampled into its print: the first and last ones, and some evenly spaced between. */
const BINARY_EDGE = 128;
const BINARY_SAMPLES = 256;

/**
 * Binary data (a Buffer, a typed array, a DataView, an ArrayBuffer) as one
 * short scalar: its size and a hash of a bounded sample of its bytes. Reading
 * every byte (or, as an object, every index as a field) would cost time in
 * proportion to its size on every check and observation. Undefined for
 * anything else.
 */
function binaryText(value: object): string | undefined {
  let bytes: Uint8Array;
  if (ArrayBuffer.isView(value)) bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  else if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && value instanceof SharedArrayBuffer)) bytes = new Uint8Array(value);
  else return undefined;
  const n = bytes.length;
  let sample: number[];
  if (n <= 2 * BINARY_EDGE + BINARY_SAMPLES) sample = Array.from(bytes);
  else {
    sample = Array.from(bytes.subarray(0, BINARY_EDGE));
    const step = (n - 2 * BINARY_EDGE) / BINARY_SAMPLES;
    for (let i = 0; i < BINARY_SAMPLES; i++) sample.push(bytes[BINARY_EDGE + Math.floor(i * step)]!);
    for (const b of bytes.subarray(n - BINARY_EDGE)) sample.push(b);
  }
  return `bytes:${n}:${hash53(String.fromCharCode(...sample))}`;
}

/** What {@link identityText} respells: an empty or `.` segment, or a trailing `/`. */
const RESPELLED_PATH = /\/\/|\/$|(?:^|\/)\.(?:\/|$)/;

/**
 * An identity value as compared: a path-like value in one spelling
 * (`./src/a.py`, `src//a.py` and `src/a.py/` are one file; `./` is `.`),
 * anything else as {@link scalarText}.
 */
function identityText(value: unknown): string {
  const text = scalarText(value);
  if (!text.includes('/') || !RESPELLED_PATH.test(text)) return text;
  const parts = text.split('/').filter((part) => part !== '' && part !== '.');
  if (text.startsWith('/')) return `/${parts.join('/')}`;
  return parts.length === 0 ? '.' : parts.join('/');
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return normalizeText(value.trim());
  if (value === null || typeof value !== 'object') return String(value);
  return canonicalJson(value, 4096);
}

/** Deepest nesting {@link canonicalJson} writes out; anything deeper is written as `"…"`. */
const MAX_CANONICAL_DEPTH = 64;

/**
 * JSON with sorted keys, so that key order does not make two equal arguments
 * differ; at most `maxChars` long. Written by hand rather than by
 * `JSON.stringify`, which recurses without bound: arguments nested thousands
 * of levels deep (or a cycle) would overflow the stack. Levels past
 * {@link MAX_CANONICAL_DEPTH} are written as `"…"`.
 */
export function canonicalJson(value: unknown, maxChars = 65_536): string {
  const clip = (text: string): string => (text.length > maxChars ? text.slice(0, maxChars) : text);
  if (typeof value === 'string') return clip(value);
  if (typeof value !== 'object' || value === null) return clip(typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value)));
  const out: string[] = [];
  let length = 0;
  const push = (text: string): void => {
    out.push(text);
    length += text.length;
  };
  const write = (raw: unknown, depth: number): void => {
    if (length > maxChars) return;
    // Binary data as its print, not `toJSON`'s array of every byte (a Buffer's) nor an object of every index.
    const binary = raw !== null && typeof raw === 'object' ? binaryText(raw) : undefined;
    if (binary !== undefined) {
      push(JSON.stringify(binary));
      return;
    }
    const v =
      raw !== null && typeof raw === 'object' && typeof (raw as { toJSON?: unknown }).toJSON === 'function' ? (raw as { toJSON(): unknown }).toJSON() : raw;
    if (typeof v === 'bigint') push(String(v));
    else if (v === null || typeof v !== 'object') push(JSON.stringify(v) ?? 'null');
    else if (depth >= MAX_CANONICAL_DEPTH) push('"…"');
    else if (Array.isArray(v)) {
      push('[');
      for (let i = 0; i < v.length && length <= maxChars; i++) {
        if (i > 0) push(',');
        write(v[i], depth + 1);
      }
      push(']');
    } else {
      push('{');
      let first = true;
      for (const key of Object.keys(v).sort()) {
        if (length > maxChars) break;
        const item = (v as Record<string, unknown>)[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        push(`${first ? '' : ','}${JSON.stringify(key)}:`);
        first = false;
        write(item, depth + 1);
      }
      push('}');
    }
  };
  write(value, 0);
  return clip(out.join(''));
}
