import type { SessionOp } from './breaker-store.ts';
import type { AnswerPrint, TaskPrint } from './detectors/delegation-loop.ts';
import type { ResultDigest, ToolProposal } from './detectors/tool-record.ts';
import { GovernorError } from '../errors/governor-error.ts';
import { isCount, Reader, writer } from './base85-numbers.ts';
import { isRecord } from './json-record.ts';

/**
 * The compact form of a logged operation starts with this marker and a
 * version digit; a plain JSON operation (what older versions logged) starts
 * with `{`.
 */
const MARKER = 'O';
const VERSION = '1';

/** Thrown by {@link decodeOp} for text that is neither form of a logged session operation. */
export class InvalidOpError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_OP';
  constructor(problem: string, options?: { cause?: unknown }) {
    super('GOVERNOR_INVALID_OP', `Not a logged breaker session operation: ${problem}`, options);
  }
}

/*
 * Shapes with a compact form: the digested tool calls and sub-agent calls
 * that make up most of a log (see BreakerReducer.digest). Each is
 * `O1` + JSON [head, ...strings]: the head is the shape's digit, then its
 * flags and numbers in base 85; the strings are names, argument fields and
 * sketches as they are. Operations that carry text (model rounds, user
 * turns, retrievals) are mostly that text and stay JSON, as do operations
 * of any shape this version does not know.
 */
const OBSERVED_TOOL = 0;
const OBSERVED_SUB_AGENT = 1;
const OBSERVED_DELEGATION = 2;
const CHECKED_TOOL = 3;

/** Flags of a head. */
const SURFACED = 1;
/** The event has an `error` key; 4 more when it is true. */
const HAS_ERROR = 2;
const ERROR_TRUE = 4;
/** The proposal's tool name differs from the event's (it was shortened). */
const OWN_PROPOSAL_NAME = 8;
/** The result digest says the request was rejected (`v: 1`). */
const REJECTED = 16;
/** The answer print marks an outage (`e: 2`). */
const OUTAGE = 32;
/** A checked tool call carries a task print (a sub-agent call). */
const HAS_TASK = 64;

/**
 * A logged operation as one compact string: lossless, `decodeOp(encodeOp(op))`
 * deep-equals `op`. A digested tool call with 1 KB arguments takes about
 * half of its JSON.
 */
export function encodeOp(op: SessionOp): string {
  return encodeCompact(op) ?? JSON.stringify(op);
}

/**
 * A logged operation from {@link encodeOp}'s form, or from the plain JSON
 * older versions logged.
 * @throws {InvalidOpError} when the text is neither, or holds something
 * other than a session operation.
 */
export function decodeOp(text: string): SessionOp {
  const first = text.charAt(0);
  if (first === '{') return checkedOp(parse(text));
  if (first !== MARKER) throw new InvalidOpError(`unknown form (starts with ${JSON.stringify(first)})`);
  if (text.charAt(1) !== VERSION) throw new InvalidOpError(`unknown version ${JSON.stringify(text.charAt(1))}`);
  const body = parse(text.slice(2));
  if (!Array.isArray(body) || typeof body[0] !== 'string' || !body.slice(1).every((s) => typeof s === 'string')) throw new InvalidOpError('malformed body');
  try {
    return decodeCompact(new Reader(body[0]), body.slice(1) as string[]);
  } catch (error) {
    if (InvalidOpError.isInstance(error)) throw error;
    throw new InvalidOpError('malformed operation', { cause: error });
  }
}

const KINDS: readonly unknown[] = ['observe', 'tool', 'model', 'reset'];

/** What the reducer reads of every operation, checked once here (see checkedState in state-codec.ts). */
function checkedOp(value: unknown): SessionOp {
  if (!isRecord(value)) throw new InvalidOpError('not an object');
  if (!KINDS.includes(value.k)) throw new InvalidOpError(`unknown operation kind ${JSON.stringify(value.k)}`);
  if (typeof value.at !== 'number' || !Number.isFinite(value.at)) throw new InvalidOpError('no valid time');
  if (value.k === 'observe' && !(isRecord(value.event) && typeof value.event.kind === 'string')) throw new InvalidOpError('an observation without an event');
  if (value.k === 'tool' && !(isRecord(value.call) && typeof value.call.tool === 'string')) throw new InvalidOpError('a tool check without a call');
  return value as unknown as SessionOp;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidOpError('not valid JSON', { cause: error });
  }
}

// ------------------------------------------------------------- encoding

function encodeCompact(op: SessionOp): string | undefined {
  if (!isCount(op.at)) return undefined;
  if (op.k === 'tool') {
    if (!hasKeys(op, ['k', 'at', 'call', 'p'], ['t']) || !hasKeys(op.call, ['tool', 'args']) || op.call.args !== null) return undefined;
    const proposal = proposalParts(op.p, op.call.tool);
    const task = op.t === undefined ? NO_PARTS : taskParts(op.t);
    if (proposal === undefined || task === undefined) return undefined;
    return write(
      CHECKED_TOOL,
      proposal.flags | (op.t === undefined ? 0 : HAS_TASK),
      op.at,
      [...proposal.numbers, ...task.numbers],
      [op.call.tool, ...proposal.strings, ...task.strings],
    );
  }
  if (op.k !== 'observe') return undefined;
  const surfaced = op.surfaced === true ? SURFACED : 0;
  if ('surfaced' in op && op.surfaced !== true) return undefined;
  const event = op.event;
  if (event.kind === 'delegation') {
    if (!hasKeys(op, ['k', 'at', 'event', 't', 'a'], ['surfaced']) || !hasKeys(event, ['kind', 'agent', 'input', 'output'])) return undefined;
    if (typeof event.agent !== 'string' || event.input !== '' || event.output !== '') return undefined;
    const task = taskParts(op.t);
    const answer = answerParts(op.a);
    if (task === undefined || answer === undefined) return undefined;
    return write(OBSERVED_DELEGATION, surfaced | answer.flags, op.at, [...task.numbers, ...answer.numbers], [event.agent, ...task.strings, ...answer.strings]);
  }
  if (event.kind !== 'tool_call' || !hasKeys(event, ['kind', 'tool', 'args', 'result'], ['error'])) return undefined;
  if (typeof event.tool !== 'string' || event.args !== null || event.result !== null || ('error' in event && typeof event.error !== 'boolean'))
    return undefined;
  const errorFlags = 'error' in event ? HAS_ERROR | (event.error === true ? ERROR_TRUE : 0) : 0;
  const proposal = proposalParts(op.p, event.tool);
  if (proposal === undefined) return undefined;
  const flags = surfaced | errorFlags | proposal.flags;
  if (op.d !== undefined) {
    if (!hasKeys(op, ['k', 'at', 'event', 'p', 'd'], ['surfaced'])) return undefined;
    const digest = digestParts(op.d);
    if (digest === undefined) return undefined;
    return write(OBSERVED_TOOL, flags | digest.flags, op.at, [...proposal.numbers, ...digest.numbers], [event.tool, ...proposal.strings]);
  }
  if (!hasKeys(op, ['k', 'at', 'event', 'p', 't', 'a'], ['surfaced'])) return undefined;
  const task = taskParts(op.t);
  const answer = answerParts(op.a);
  if (task === undefined || answer === undefined) return undefined;
  return write(
    OBSERVED_SUB_AGENT,
    flags | answer.flags,
    op.at,
    [...proposal.numbers, ...task.numbers, ...answer.numbers],
    [event.tool, ...proposal.strings, ...task.strings, ...answer.strings],
  );
}

interface Parts {
  readonly flags: number;
  readonly numbers: readonly number[];
  readonly strings: readonly string[];
}

const NO_PARTS: Parts = { flags: 0, numbers: [], strings: [] };

/** The argument hash; the fields, then the proposal's own tool name when it is not the event's. */
function proposalParts(p: ToolProposal | undefined, tool: string): Parts | undefined {
  if (typeof p !== 'object' || p === null || !hasKeys(p, ['tool', 'fp']) || typeof p.tool !== 'string') return undefined;
  const fp = p.fp as unknown;
  if (typeof fp !== 'object' || fp === null || !hasKeys(fp, ['h', 'f']) || !isCount(p.fp.h) || typeof p.fp.f !== 'string') return undefined;
  const own = p.tool !== tool;
  return { flags: own ? OWN_PROPOSAL_NAME : 0, numbers: [p.fp.h], strings: own ? [p.fp.f, p.tool] : [p.fp.f] };
}

/** The result hash and error kind. */
function digestParts(d: ResultDigest): Parts | undefined {
  if (typeof d !== 'object' || d === null || !hasKeys(d, ['r', 'e'], ['v']) || !isCount(d.r) || (d.e !== 0 && d.e !== 1 && d.e !== 2)) return undefined;
  if ('v' in d && d.v !== 1) return undefined;
  return { flags: d.v === 1 ? REJECTED : 0, numbers: [d.r, d.e], strings: [] };
}

/** The task's identity; its sketch. */
function taskParts(t: TaskPrint | undefined): Parts | undefined {
  if (typeof t !== 'object' || t === null || !hasKeys(t, ['sketch', 'identity']) || typeof t.sketch !== 'string' || !isCount(t.identity)) return undefined;
  return { flags: 0, numbers: [t.identity], strings: [t.sketch] };
}

/** The answer's size and hash; its sketch. */
function answerParts(a: AnswerPrint | undefined): Parts | undefined {
  if (typeof a !== 'object' || a === null || !hasKeys(a, ['o', 'n', 'h'], ['e']) || typeof a.o !== 'string' || !isCount(a.n) || !isCount(a.h)) return undefined;
  if ('e' in a && a.e !== 2) return undefined;
  return { flags: a.e === 2 ? OUTAGE : 0, numbers: [a.n, a.h], strings: [a.o] };
}

function write(shape: number, flags: number, at: number, numbers: readonly number[], strings: readonly string[]): string {
  writer.digit(shape);
  writer.count(flags);
  writer.count(at);
  for (const n of numbers) writer.count(n);
  return `${MARKER}${VERSION}${JSON.stringify([writer.take(), ...strings])}`;
}

/** The object has every key of `keys`, any of `optional`, and no other. */
function hasKeys(value: object, keys: readonly string[], optional: readonly string[] = []): boolean {
  let found = 0;
  for (const key of Object.keys(value)) {
    if (keys.includes(key)) found++;
    else if (!optional.includes(key)) return false;
  }
  return found === keys.length;
}

// ------------------------------------------------------------- decoding

function decodeCompact(head: Reader, strings: readonly string[]): SessionOp {
  const shape = head.digit();
  const flags = head.count();
  const at = head.count();
  let next = 0;
  const string = (): string => {
    const s = strings[next++];
    if (s === undefined) throw new RangeError('string missing');
    return s;
  };
  const surfaced = flags & SURFACED ? ({ surfaced: true } as const) : {};
  const proposal = (tool: string): ToolProposal => {
    const h = head.count();
    const f = string();
    return { tool: flags & OWN_PROPOSAL_NAME ? string() : tool, fp: { h, f } };
  };
  const task = (): TaskPrint => {
    const identity = head.count();
    return { sketch: string(), identity };
  };
  const answer = (): AnswerPrint => {
    const n = head.count();
    const h = head.count();
    const o = string();
    return flags & OUTAGE ? { o, n, h, e: 2 } : { o, n, h };
  };
  const done = <T>(value: T): T => {
    if (head.at !== head.text.length || next !== strings.length) throw new RangeError('trailing data');
    return value;
  };
  switch (shape) {
    case CHECKED_TOOL: {
      const tool = string();
      const p = proposal(tool);
      const call = { tool, args: null };
      return done(flags & HAS_TASK ? { k: 'tool', at, call, p, t: task() } : { k: 'tool', at, call, p });
    }
    case OBSERVED_DELEGATION: {
      const agent = string();
      const t = task();
      return done({ k: 'observe', at, event: { kind: 'delegation', agent, input: '', output: '' }, ...surfaced, t, a: answer() });
    }
    case OBSERVED_TOOL:
    case OBSERVED_SUB_AGENT: {
      const tool = string();
      const event = { kind: 'tool_call', tool, args: null, result: null, ...(flags & HAS_ERROR ? { error: (flags & ERROR_TRUE) !== 0 } : {}) } as const;
      const p = proposal(tool);
      if (shape === OBSERVED_SUB_AGENT) {
        const t = task();
        return done({ k: 'observe', at, event, ...surfaced, p, t, a: answer() });
      }
      const r = head.count();
      const e = head.count();
      if (e !== 0 && e !== 1 && e !== 2) throw new RangeError('unknown error kind');
      const d: ResultDigest = flags & REJECTED ? { r, e, v: 1 } : { r, e };
      return done({ k: 'observe', at, event, ...surfaced, p, d });
    }
    default:
      throw new InvalidOpError(`unknown shape ${shape}`);
  }
}
