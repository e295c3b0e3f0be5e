/*
 * How a process's copy of a session stands to the session as Redis holds it
 * (a snapshot, a log of operations after it, an incarnation and its
 * ancestry): reading the scripts' replies, and when a writer folds the log.
 */
import type { BreakerSessionState, SessionOp } from '../breaker/breaker-store.ts';
import { decodeOp } from '../breaker/op-codec.ts';
import { BreakerStoreError } from './breaker-store-error.ts';

/** The writer of every this-many-th operation after the snapshot folds the log into a new one. */
export const COMPACT_EVERY = 16;
/**
 * The writer of the operation that takes the log past a multiple of this
 * many bytes after the snapshot folds it too: a few logged replies,
 * retrievals or user turns (kept as text) would otherwise outweigh the
 * snapshot itself, which the detectors' windows bound.
 */
const COMPACT_BYTES = 1024;

/** A session as this process last folded it. */
export interface Folded {
  readonly position: number;
  readonly state: BreakerSessionState;
  /** Position of the stored snapshot when last seen. */
  readonly base: number;
  /** When it was read or written (epoch ms). */
  readonly at: number;
  /**
   * This process knows something the server's copy lacks (the server forgot
   * the session, and another writer created it anew, or wrote back a copy
   * that knew less and wrote to it since), not written back yet: `state` is
   * what it knows with the copy's operations folded in, and the next write
   * of this process writes it back (a read does too, for a session that may
   * not be forgotten).
   */
  readonly lost?: true;
  /** The session's incarnation on the server (see the session layout in session-scripts.ts). */
  readonly id: string | undefined;
  /** The incarnation's ancestry (its `anc`): what it began from. */
  readonly ancestry: string;
  /** While `lost`: what else `state` includes, that the server's copy may lack (in `anc` form). */
  readonly beyond?: string;
  /** A snapshot this process owes the store, sent with its next append: serialised between events, or during that append's round trip. */
  readonly owed?: Owed;
  /** When this process last set the expiry of the session's keys (epoch ms; 0 = never). */
  readonly refreshedAt: number;
  /** The last round trip on the session found no other writer's operations: worth judging the next one before the reply. */
  readonly quiet: boolean;
  /** Byte lengths of the operations up to `position` that this process saw logged, newest last (see {@link loggedAfter}). */
  readonly logged: readonly number[];
}

/** A snapshot owed to the store. */
export interface Owed {
  readonly position: number;
  readonly state: BreakerSessionState;
  bytes?: Buffer;
}

export function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** A session as this process holds it once written back as incarnation `id` (a snapshot at its position, an empty log). */
export function writtenBack(folded: Folded, id: string, known: string): Folded {
  return {
    position: folded.position,
    state: folded.state,
    base: folded.position,
    at: folded.at,
    id,
    ancestry: known,
    refreshedAt: Date.now(),
    quiet: true,
    logged: [],
  };
}

/** How the server's copy of a session stands to what the caller knew of it (see the session layout in session-scripts.ts). */
export const Kin = {
  /** The incarnation the caller knew (or the caller knew none). */
  Same: 0,
  /** Another that holds all the caller knew: the caller folds it as it is. */
  Covers: 1,
  /** One that lacks something the caller knew: the caller writes back what it knows, with the copy's operations folded in. */
  Diverged: 2,
} as const;
export type Kin = (typeof Kin)[keyof typeof Kin];

export interface FoldReply {
  /** Position of the last operation (APPEND: the caller's own). */
  readonly end: number;
  readonly base: number;
  /** Position the operations follow. */
  readonly from: number;
  readonly ops: readonly unknown[];
  /** Snapshot to start from (see compressState); undefined = the caller's cached state (when `from` is its position) or a fresh state. */
  readonly snap: Buffer | string | undefined;
  /** The session's incarnation. */
  readonly id: string | undefined;
  /** The server's time when it answered (epoch ms; APPEND only). */
  readonly time?: number;
  readonly kin: Kin;
  /** The incarnation's ancestry (`anc`). */
  readonly ancestry: string;
  /** The position the incarnation began at (0 unless it was written back). */
  readonly began: number;
}

/**
 * `known`: what the caller knew of the session, for APPEND's short reply
 * {end, base, time}, which says that the caller's position was the one before and
 * its id is the session's.
 */
export function decodeFold(operation: string, reply: unknown, known?: Folded): FoldReply {
  if (known !== undefined && Array.isArray(reply) && reply.length === 3) {
    const end = Number(reply[0]);
    return {
      end,
      base: Number(reply[1]),
      from: end - 1,
      ops: [],
      snap: undefined,
      id: known.id,
      time: Number(reply[2]),
      kin: Kin.Same,
      ancestry: known.ancestry,
      began: 0,
    };
  }
  if (!Array.isArray(reply) || reply.length < 10 || !Array.isArray(reply[3])) throw new BreakerStoreError(operation, 'unexpected reply from Redis');
  // Numbers may come as bulk strings, Buffers when the reply is read as bytes: Number() reads a Buffer's digits too (through its toString).
  const kin = Number(reply[7]);
  const fold = {
    end: Number(reply[0]),
    base: Number(reply[1]),
    from: Number(reply[2]),
    ops: reply[3] as unknown[],
    snap: Buffer.isBuffer(reply[4]) ? reply[4] : text(reply[4]),
    id: text(reply[5]),
    kin: kin === Kin.Covers || kin === Kin.Diverged ? kin : Kin.Same,
    ancestry: text(reply[8]) ?? '',
    began: Number(reply[9]) || 0,
  };
  return reply[6] === null || reply[6] === undefined ? fold : { ...fold, time: Number(reply[6]) };
}

/** The reply shows a copy that lacks something this process knew (see {@link Folded.lost}). */
export function diverges(fold: FoldReply, cached: Folded): boolean {
  if (fold.kin === Kin.Diverged) return true;
  // The server judges by the incarnation the caller names; what a lost copy knows besides, only this process can tell.
  return cached.lost === true && !includes(ancestry([fold.ancestry, [fold.id, fold.end]]), knowledge(cached));
}

/**
 * Most incarnations an ancestry names: beyond it the oldest are left out, and
 * a process that only they cover writes back what it knows instead of
 * folding the server's copy (a merge where none was needed).
 */
export const MAX_ANCESTRY = 8;

/**
 * An ancestry (`anc` form: "<id> <position> …") naming every incarnation
 * of `sources` at the furthest position any names it, the most recently
 * named last, at most `max`.
 */
export function ancestry(sources: ReadonlyArray<string | readonly [string | undefined, number]>, max = MAX_ANCESTRY): string {
  const reach = new Map<string, number>();
  const note = (id: string, position: number) => {
    const before = reach.get(id) ?? -1;
    reach.delete(id);
    reach.set(id, Math.max(before, position));
  };
  for (const source of sources) {
    if (typeof source === 'string') {
      for (const [id, position] of ancestors(source)) note(id, position);
    } else if (source[0] !== undefined && source[0] !== '') {
      note(source[0], source[1]);
    }
  }
  return [...reach]
    .slice(-max)
    .map(([id, position]) => `${id} ${position}`)
    .join(' ');
}

/** The incarnations an ancestry names, each with its position. */
function ancestors(anc: string): Array<[string, number]> {
  const words = anc.split(' ').filter((w) => w !== '');
  const out: Array<[string, number]> = [];
  for (let i = 0; i + 1 < words.length; i += 2) {
    const position = Number(words[i + 1]);
    if (Number.isInteger(position)) out.push([words[i]!, position]);
  }
  return out;
}

/** Whether ancestry `held` names every incarnation of `known` at its position or later. */
export function includes(held: string, known: string): boolean {
  const reach = new Map<string, number>();
  for (const [id, position] of ancestors(held)) reach.set(id, Math.max(reach.get(id) ?? -1, position));
  return ancestors(known).every(([id, position]) => (reach.get(id) ?? -1) >= position);
}

/** All a process's copy of a session holds, in `anc` form: its ancestry, what else it knew while lost, and its incarnation up to its position. */
export function knowledge(folded: Folded): string {
  return ancestry([folded.ancestry, folded.beyond ?? '', [folded.id, folded.position]]);
}

/** The reply continues from the state this process knows (rather than from the snapshot or a fresh state). */
export function continuesCache(fold: FoldReply, cached: Folded): boolean {
  return fold.from === cached.position && fold.snap === undefined && cached.position >= fold.base;
}

/**
 * Byte lengths of the operations logged after the snapshot, up to the
 * caller's own (`own`, APPEND) or the end (READ), newest last: what the
 * process knew that the snapshot does not cover, then the operations of the
 * reply. At most the last {@link COMPACT_EVERY} × 4 (beyond that the log is
 * folded at once).
 */
export function loggedAfter(fold: FoldReply, cached: Folded | undefined, own?: number): number[] {
  const known = cached !== undefined && continuesCache(fold, cached) ? cached.logged : [];
  const keep = Math.max(0, Math.min(known.length, fold.from - fold.base));
  const lengths = known.slice(known.length - keep);
  for (const op of fold.ops) lengths.push(typeof op === 'string' ? Buffer.byteLength(op) : Buffer.isBuffer(op) ? op.length : 0);
  if (own !== undefined) lengths.push(own);
  return lengths.length > 4 * COMPACT_EVERY ? lengths.slice(-4 * COMPACT_EVERY) : lengths;
}

/**
 * Whether the writer of the operation `since` operations after the snapshot
 * folds the log, which then holds `bytes`, its own `own` last. Every writer
 * counts the same operations after the same snapshot, so one writer folds
 * at each step: every {@link COMPACT_EVERY} operations, and at each multiple of
 * {@link COMPACT_BYTES} the log grows past.
 */
export function foldsLog(since: number, bytes: number, own: number): boolean {
  return since % COMPACT_EVERY === 0 || Math.floor((bytes - own) / COMPACT_BYTES) < Math.floor(bytes / COMPACT_BYTES);
}

/**
 * Whether the writer of an operation of `own` bytes folds the log at once
 * rather than with its next append: a logged reply or passage that size
 * would otherwise sit in the log beside the snapshot until the session's
 * next event, which may be a long model call away.
 */
export function foldsAtOnce(own: number): boolean {
  return own >= COMPACT_BYTES;
}

/** Bytes of the newest `count` operations of `logged` (of all it holds, when fewer). */
export function lastBytes(logged: readonly number[], count: number): number {
  let total = 0;
  for (let i = Math.max(0, logged.length - count); i < logged.length; i++) total += logged[i]!;
  return total;
}

export function readOp(operation: string, raw: unknown): SessionOp {
  const logged = text(raw);
  if (logged === undefined) throw new BreakerStoreError(operation, 'a logged operation is not text');
  try {
    return decodeOp(logged);
  } catch (error) {
    throw new BreakerStoreError(operation, `a logged operation is unreadable (${(error as Error).message})`, { cause: error });
  }
}
