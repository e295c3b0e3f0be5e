import { hash32, UnorderedHash } from './hash.ts';
import { IdentityKeyMatcher } from './identity-keys.ts';
import { textIdentity } from './text-identity.ts';
import { normalizeText, scanText } from './tokenize.ts';
import { DEFAULT_SKETCH_SIZE, packSketch, sketchHashes, sketchJaccard, type AnySketch } from './token-sketch.ts';
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
 * A bounded, JSON-safe summary of a tool call's arguments, enough to judge
 * similarity later without keeping the (possibly large) arguments themselves.
 */
export interface ArgsFingerprint {
  /** Hash of the canonical arguments: equal hashes mean identical arguments. */
  readonly h: number;
  /** Flattened fields, sorted by path. */
  readonly f: readonly FieldPrint[];
}

/** Limits that keep one fingerprint small whatever the arguments. */
export interface FingerprintLimits {
  /** Most fields kept; the rest are folded into one text field. @default 24 */
  readonly maxFields?: number;
  /** Sketch size per text field. @default 32 */
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
    this.sketchSize = limits.sketchSize ?? DEFAULT_SKETCH_SIZE;
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
    for (const [path, key, value] of leaves) {
      const [field, content] = this.field(path, key, value);
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
      fields.push([OVERFLOW, 't', packSketch(sketchHashes(scanText(clipped, true).tokens, this.sketchSize))]);
    }
    fields.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    // A copy is sized exactly (the pushed array keeps growth slack), as it is kept for the session.
    return { h: exact.digest(), f: fields.slice() };
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
  private field(path: string, key: string, value: unknown): [FieldPrint, number] {
    const p = path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path;
    if (typeof value === 'string' && value.length > this.maxChars) value = value.slice(0, this.maxChars);
    if (key !== '' && this.identity.matches(key)) {
      const h = hash32(identityText(value));
      return [[p, 'i', h], h];
    }
    if (typeof value === 'string' && (value.length > MAX_SCALAR_CHARS || /\s/.test(value.trim()))) {
      // Long text is sampled for its tokens (bounded cost) but hashed in full.
      const scanned = scanText(value, true);
      return [[p, 't', packSketch(sketchHashes(scanned.tokens, this.sketchSize))], scanned.content];
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
    fields.push([FREE_TEXT, 't', packSketch(sketchHashes(scanned.tokens, this.sketchSize))]);
    return { h: scanned.content, f: fields };
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
  const groups = new Map<string, { score: number; count: number; gate: boolean }>();
  const add = (path: string, score: number, gate: boolean) => {
    const key = groupOf(path);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { score, count: 1, gate });
    else {
      group.score += score;
      group.count++;
      group.gate &&= gate;
    }
  };
  let i = 0;
  let j = 0;
  while (i < a.f.length || j < b.f.length) {
    const fa = a.f[i];
    const fb = b.f[j];
    if (fa !== undefined && fb !== undefined && fa[0] === fb[0]) {
      const s = compareField(fa, fb, k);
      if (s < 0) return 0;
      add(fa[0], s, fa[1] === 'i');
      i++;
      j++;
    } else if (fb === undefined || (fa !== undefined && fa[0] < fb[0])) {
      add(fa![0], 0, false);
      i++;
    } else {
      add(fb[0], 0, false);
      j++;
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

function groupOf(path: string): string {
  const dot = path.indexOf('.');
  return dot === -1 ? path : path.slice(0, dot);
}

/** Field score; -1 means "identity differs": the calls are different. */
function compareField(a: FieldPrint, b: FieldPrint, k: number): number {
  const [, kindA, va] = a;
  const [, kindB, vb] = b;
  if (kindA === 'i' || kindB === 'i') return kindA === kindB && va === vb ? 1 : -1;
  if (kindA === 't' && kindB === 't') return sketchJaccard(va as AnySketch, vb as AnySketch, k);
  if (kindA === 'v' && kindB === 'v') return va === vb ? 1 : 0;
  return 0;
}

function flatten(value: unknown, path: string, key: string, depth: number, out: Array<[string, string, unknown]>, limit: number): void {
  if (out.length >= limit) return;
  if (value !== null && typeof value === 'object' && depth < MAX_DEPTH) {
    if (Array.isArray(value)) {
      if (value.length === 0) out.push([path, key, '[]']);
      // Elements inherit the array's key: `order_ids.3` is still an order id.
      for (let i = 0; i < value.length; i++) flatten(value[i], path === '' ? String(i) : `${path}.${i}`, key, depth + 1, out, limit);
      return;
    }
    const entries = Object.keys(value as Record<string, unknown>);
    if (entries.length === 0) out.push([path, key, '{}']);
    for (const k of entries) {
      flatten((value as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`, k, depth + 1, out, limit);
    }
    return;
  }
  out.push([path, key, value]);
}

/**
 * An identity value as compared: a path-like value in one spelling
 * (`./src/a.py`, `src//a.py` and `src/a.py/` are one file; `./` is `.`),
 * anything else as {@link scalarText}.
 */
function identityText(value: unknown): string {
  const text = scalarText(value);
  if (!text.includes('/')) return text;
  const parts = text.split('/').filter((part) => part !== '' && part !== '.');
  if (text.startsWith('/')) return `/${parts.join('/')}`;
  return parts.length === 0 ? '.' : parts.join('/');
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return normalizeText(value.trim());
  if (value === null || typeof value !== 'object') return String(value);
  return canonicalJson(value, 4096);
}

/** JSON with sorted keys, so that key order does not make two equal arguments differ. */
export function canonicalJson(value: unknown, maxChars = 65_536): string {
  if (typeof value === 'string') return value.length > maxChars ? value.slice(0, maxChars) : value;
  const text =
    JSON.stringify(value, (_k, v: unknown) => {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const sorted: Record<string, unknown> = {};
        for (const k of Object.keys(v as Record<string, unknown>).sort()) sorted[k] = (v as Record<string, unknown>)[k];
        return sorted;
      }
      return v;
    }) ?? String(value);
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}
