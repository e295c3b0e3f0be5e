import fs from 'node:fs';
import readline from 'node:readline';
import { parseTrajectoryLine, TrajectoryFormatError } from './parse-trajectory.ts';
import type { Trajectory } from './trajectory.ts';

/** One usable line of a trajectory file. */
export interface TrajectoryLine {
  /** 1-based line number in the file. */
  readonly lineNumber: number;
  readonly trajectory: Trajectory;
}

/** One line that is not a usable trajectory; reading goes on after it. */
export interface MalformedLine {
  /** 1-based line number in the file. */
  readonly lineNumber: number;
  /** What is wrong, naming the field (e.g. `steps[3]: unknown step kind "x"`). */
  readonly error: string;
}

export type TrajectoryRecord = TrajectoryLine | MalformedLine;

/**
 * Streams a JSON Lines trajectory file (or any readable stream of it) line by
 * line, so files of any size are read in constant memory apart from the
 * current line. Yields each usable trajectory with its line number, and each
 * malformed line as an error record instead of stopping. Blank lines are
 * skipped. A missing or unreadable file rejects with the file system error.
 */
export async function* readTrajectories(
  source: string | NodeJS.ReadableStream,
): AsyncGenerator<TrajectoryRecord, void, undefined> {
  const input = typeof source === 'string' ? fs.createReadStream(source, { encoding: 'utf8' }) : source;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const raw of lines) {
      lineNumber++;
      // A byte-order mark on the first line is an editor artefact, not bad data.
      const line = lineNumber === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (line.trim() === '') continue;
      try {
        yield { lineNumber, trajectory: parseTrajectoryLine(line) };
      } catch (error) {
        if (!(error instanceof TrajectoryFormatError)) throw error;
        yield { lineNumber, error: error.message };
      }
    }
  } finally {
    lines.close();
    if (typeof source === 'string') (input as fs.ReadStream).destroy();
  }
}

/** Narrows a record to a malformed line. */
export function isMalformedLine(record: TrajectoryRecord): record is MalformedLine {
  return 'error' in record;
}
