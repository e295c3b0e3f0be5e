import fs from 'node:fs';
import { DEFAULT_MAX_NESTING_DEPTH, jsonNestsDeeperThan } from '../errors/nesting-depth.ts';
import { validateOptions, is } from '../errors/validate-options.ts';
import { parseTrajectoryLine, TrajectoryFormatError } from './parse-trajectory.ts';
import type { Trajectory } from './trajectory.ts';

/** One usable line of a trajectory file. */
export interface TrajectoryLine {
  /** 1-based line number in the file. */
  readonly lineNumber: number;
  readonly trajectory: Trajectory;
  /** Problems that did not stop the line from being used (a byte-order mark mid-file, a duplicate id). */
  readonly warnings?: readonly string[];
}

/** One line that is not a usable trajectory; reading goes on after it. */
export interface MalformedLine {
  /** 1-based line number in the file. */
  readonly lineNumber: number;
  /** What is wrong, naming the field (e.g. `steps[3]: unknown step kind "x"`). */
  readonly error: string;
}

export type TrajectoryRecord = TrajectoryLine | MalformedLine;

/** Options of {@link readTrajectories}. */
export interface ReadTrajectoriesOptions {
  /**
   * Longest line in bytes; a longer one is reported as malformed and skipped
   * without being held in memory.
   * @default 67_108_864 (64 MB)
   */
  readonly maxLineBytes?: number;
  /** Deepest nesting of arrays and objects in a line. @default 256 */
  readonly maxDepth?: number;
  /**
   * What a `label` that is not a label (`"label": "looping"`) makes of its
   * line: `malformed` skips the line, as a labelled corpus needs; `warn`
   * keeps the trajectory without the label and says so in the line's
   * warnings, for a reader that uses no label (replay).
   * @default 'malformed'
   */
  readonly unreadableLabel?: 'malformed' | 'warn';
}

/** Default {@link ReadTrajectoriesOptions.maxLineBytes}. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BOM = '\ufeff';

/**
 * Streams a JSON Lines trajectory file (or any readable stream of it) line by
 * line, so files of any size are read in constant memory apart from the
 * current line (at most `maxLineBytes`). Lines end at `\n` (or `\r\n`) only:
 * U+2028 and U+2029, which `JSON.stringify` leaves raw, stay inside their line,
 * so line numbers are exact. Yields each usable trajectory with its line
 * number, and each malformed line as an error record instead of stopping.
 * Blank lines are skipped. A missing or unreadable file rejects with the file
 * system error.
 */
export async function* readTrajectories(
  source: string | NodeJS.ReadableStream,
  options: ReadTrajectoriesOptions = {},
): AsyncGenerator<TrajectoryRecord, void, undefined> {
  validateOptions('readTrajectories', options, { maxLineBytes: is.integer(1), maxDepth: is.integer(1), unreadableLabel: is.oneOf('malformed', 'warn') });
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_NESTING_DEPTH;
  const warnOnLabel = options.unreadableLabel === 'warn';
  const input = typeof source === 'string' ? fs.createReadStream(source) : source;
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true }); // BOMs are handled per line below
  const firstLineOfId = new Map<string, number>();
  let lineNumber = 1;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;

  const finishLine = function* (): Generator<TrajectoryRecord> {
    const n = lineNumber;
    lineNumber++;
    if (tooLong) {
      tooLong = false;
      yield { lineNumber: n, error: `line is longer than ${maxLineBytes} bytes (maxLineBytes); skipped` };
      return;
    }
    let bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, bytes.length - 1);
    let line = decoder.decode(bytes);
    const warnings: string[] = [];
    if (line.startsWith(BOM)) {
      line = line.slice(1);
      // On the first line it is an editor artefact; later it means files were concatenated.
      if (n > 1) warnings.push('byte-order mark at the start of the line (concatenated files?); ignored');
    }
    if (line.trim() === '') return;
    if (jsonNestsDeeperThan(line, maxDepth)) {
      yield { lineNumber: n, error: `nests deeper than ${maxDepth} levels of arrays and objects (maxDepth); skipped` };
      return;
    }
    let trajectory: Trajectory;
    try {
      trajectory = parseTrajectoryLine(line, warnOnLabel ? { onUnreadableLabel: (problem) => warnings.push(`${problem}; the label is ignored`) } : {});
    } catch (error) {
      if (!(error instanceof TrajectoryFormatError)) throw error;
      yield { lineNumber: n, error: error.message };
      return;
    }
    const first = firstLineOfId.get(trajectory.id);
    if (first === undefined) firstLineOfId.set(trajectory.id, n);
    else warnings.push(`duplicate id ${JSON.stringify(trajectory.id)} (first on line ${first})`);
    yield warnings.length > 0 ? { lineNumber: n, trajectory, warnings } : { lineNumber: n, trajectory };
  };

  const append = (chunk: Buffer): void => {
    if (tooLong) return;
    if (size + chunk.length > maxLineBytes) {
      tooLong = true;
      parts = [];
      size = 0;
      return;
    }
    // Copied: a slice would pin the whole read buffer while the line is pending.
    parts.push(Buffer.from(chunk));
    size += chunk.length;
  };

  try {
    for await (const raw of input as AsyncIterable<Buffer | string>) {
      const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        append(chunk.subarray(start, end));
        yield* finishLine();
        start = end + 1;
      }
      if (start < chunk.length) append(chunk.subarray(start));
    }
    if (size > 0 || tooLong) yield* finishLine();
  } finally {
    if (typeof source === 'string') (input as fs.ReadStream).destroy();
  }
}

/** Narrows a record to a malformed line. */
export function isMalformedLine(record: TrajectoryRecord): record is MalformedLine {
  return 'error' in record;
}
