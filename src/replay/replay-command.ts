import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { formatTripExplanation } from './explain-text.ts';
import { renderHtmlReport } from './html-report.ts';
import { DEFAULT_MAX_LINE_BYTES, isMalformedLine, readTrajectories, type ReadTrajectoriesOptions } from './read-trajectories.ts';
import { replayTrajectory, type ReplayOutput } from './replay.ts';
import { formatSummary, ReplaySummaryBuilder } from './replay-summary.ts';
import { formatTableHeader, formatTableRow } from './replay-table.ts';
import type { ReplayableBreaker } from './replayable-breaker.ts';
import { explainTrip } from './trip-explanation.ts';
import { redact } from '../redaction/redact.ts';
import { terminalText } from '../redaction/terminal-text.ts';
import { describeFsError, readOptionsFile } from '../runtime/read-options-file.ts';

/** A text sink such as `process.stdout`. */
export interface ReplayOutputStream {
  write(chunk: string): boolean;
  /** When present, used to respect back-pressure on huge outputs. */
  once?(event: 'drain' | 'error', listener: () => void): unknown;
  /** When present, used to notice a closed pipe (e.g. output piped into `head`). */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
  /** Progress lines are printed only to a terminal. */
  readonly isTTY?: boolean;
}

/** Where `governor replay` reads and writes. */
export interface ReplayIo {
  readonly stdout: ReplayOutputStream;
  readonly stderr: ReplayOutputStream;
  /** Directory relative paths are resolved against. @default process.cwd() */
  readonly cwd?: string;
  /** Read when the file is `-`. @default process.stdin */
  readonly stdin?: NodeJS.ReadableStream;
}

/** Seams for tests and for embedding the command. */
export interface ReplayCommandDependencies {
  /**
   * Builds the breaker one trajectory is replayed through, from the parsed
   * `--config` options (or `undefined`). Called once up front to validate the
   * options, then once per trajectory so every trajectory starts fresh.
   * @default options => new AgentBreaker(options)
   */
  readonly createBreaker?: (options: Record<string, unknown> | undefined) => ReplayableBreaker;
  /** Trajectories between progress lines on a terminal. @default 1000 */
  readonly progressEvery?: number;
}

export const REPLAY_USAGE = `Usage: governor replay FILE.jsonl [--json] [--config FILE] [--html FILE] [--explain ID] [--max-line-bytes N]

Replays recorded agent trajectories (JSON Lines) through the AgentBreaker and
shows where it would have intervened and what that would have saved.
FILE - reads the trajectories from standard input.

  --json          one JSON object per trajectory, one per line, in input order
  --config FILE   JSON file with the breaker options (default: built-in defaults)
  --html FILE     also write a self-contained HTML report: charts, and for each
                  tripped run the steps around the trip, the repeated steps
                  side by side and the evidence, filterable by category
  --explain ID    print that drill-down for the one run with this id, as text
                  (not with --json or --html)
  --max-line-bytes N
                  longest line read, in bytes; a longer one is reported as
                  malformed and skipped (default: ${DEFAULT_MAX_LINE_BYTES}, 64 MB)
  -h, --help      show this help

Exit codes: 0 file replayed (malformed lines are reported on stderr and
skipped), 1 unexpected failure or --explain ID not in the file, 2 usage error.`;

class UsageError extends Error {}

/** The file name that means standard input. */
const STDIN = '-';

interface ParsedArgs {
  file: string;
  json: boolean;
  config?: string;
  html?: string;
  explain?: string;
  maxLineBytes?: number;
  help: boolean;
}

function parse(argv: readonly string[]): ParsedArgs {
  let values: { json?: boolean; config?: string; html?: string; explain?: string; 'max-line-bytes'?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        config: { type: 'string' },
        html: { type: 'string' },
        explain: { type: 'string' },
        'max-line-bytes': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return { file: '', json: false, help: true };
  if (positionals.length === 0) throw new UsageError('missing the trajectory file (FILE.jsonl)');
  if (positionals.length > 1) throw new UsageError(`expected one trajectory file, got ${positionals.length}: ${positionals.join(' ')}`);
  if (values.explain !== undefined && (values.json || values.html !== undefined)) {
    throw new UsageError('--explain prints one run as text: leave out --json and --html, or replay the whole file with them');
  }
  if (values.html === STDIN) throw new UsageError('--html needs a file name: standard output gets the table (or the --json lines)');
  return {
    file: positionals[0] as string,
    json: values.json ?? false,
    help: false,
    ...(values.config !== undefined ? { config: values.config } : {}),
    ...(values.html !== undefined ? { html: values.html } : {}),
    ...(values.explain !== undefined ? { explain: values.explain } : {}),
    ...(values['max-line-bytes'] !== undefined ? { maxLineBytes: parseMaxLineBytes(values['max-line-bytes']) } : {}),
  };
}

function parseMaxLineBytes(text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--max-line-bytes must be a positive whole number of bytes (e.g. ${DEFAULT_MAX_LINE_BYTES} for 64 MB), got "${text}"`);
  }
  return value;
}

async function loadConfig(file: string, shown: string): Promise<Record<string, unknown>> {
  try {
    return await readOptionsFile(file, shown);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Refuses an --html target that cannot be written: a directory, or a folder that is missing or not writable. */
async function checkWritable(target: string, shown: string): Promise<void> {
  const stat = await fs.stat(target).catch(() => undefined);
  if (stat?.isDirectory()) throw new UsageError(`cannot write --html ${shown}: it is a directory`);
  try {
    await fs.access(stat === undefined ? path.dirname(target) : target, fs.constants.W_OK);
  } catch (error) {
    throw new UsageError(`cannot write --html ${shown}: ${describeFsError(error)}`);
  }
}

/** The reader of our output went away (EPIPE) or the output failed otherwise. */
class OutputClosedError extends Error {
  readonly code: string | undefined;
  constructor(cause: Error) {
    super(cause.message, { cause });
    this.code = (cause as { code?: string }).code;
  }
}

/** Writes with back-pressure, and turns an output stream's error into an exception at the next write. */
class Output {
  readonly #stream: ReplayOutputStream;
  readonly #redacting: boolean;
  #failed: Error | undefined;
  readonly #onError = (error: Error): void => {
    this.#failed ??= error;
  };

  /** `redacting`: every text is redacted whole (diagnostics, which quote ids and fields of the trajectories). */
  constructor(stream: ReplayOutputStream, redacting = false) {
    this.#stream = stream;
    this.#redacting = redacting;
    stream.on?.('error', this.#onError);
  }

  get isTTY(): boolean {
    return this.#stream.isTTY === true;
  }

  /** Writes `text` with its control characters escaped: recorded runs are not trusted to drive a terminal. */
  async write(text: string): Promise<void> {
    if (this.#failed) throw new OutputClosedError(this.#failed);
    if (!this.#stream.write(terminalText(this.#redacting ? redact(text) : text)) && this.#stream.once) {
      await new Promise<void>((resolve) => {
        this.#stream.once?.('drain', resolve);
        this.#stream.once?.('error', resolve);
      });
    }
    if (this.#failed) throw new OutputClosedError(this.#failed);
  }

  /** Like write, for diagnostics: never throws. */
  async tryWrite(text: string): Promise<void> {
    await this.write(text).catch(() => {});
  }

  dispose(): void {
    this.#stream.off?.('error', this.#onError);
  }
}

/**
 * `governor replay FILE [--json] [--config FILE] [--html FILE]`. `argv` holds
 * the arguments after `replay`. Resolves to the exit code; never throws.
 */
export async function runReplayCommand(argv: readonly string[], io: ReplayIo, dependencies: ReplayCommandDependencies = {}): Promise<number> {
  const cwd = io.cwd ?? process.cwd();
  const createBreaker =
    dependencies.createBreaker ??
    ((options: Record<string, unknown> | undefined) => new AgentBreaker(options as ConstructorParameters<typeof AgentBreaker>[0]));
  const progressEvery = dependencies.progressEvery ?? 1000;
  const stdout = new Output(io.stdout);
  const stderr = new Output(io.stderr, true);
  try {
    return await replayCommand(argv, cwd, io.stdin ?? process.stdin, stdout, stderr, createBreaker, progressEvery);
  } catch (error) {
    // Output piped into a reader that stopped early (`| head`): not a failure of ours.
    if (error instanceof OutputClosedError) return error.code === 'EPIPE' ? 0 : 1;
    await stderr.tryWrite(`governor replay: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    stdout.dispose();
    stderr.dispose();
  }
}

async function replayCommand(
  argv: readonly string[],
  cwd: string,
  stdin: NodeJS.ReadableStream,
  stdout: Output,
  stderr: Output,
  createBreaker: (options: Record<string, unknown> | undefined) => ReplayableBreaker,
  progressEvery: number,
): Promise<number> {
  let args: ParsedArgs;
  let options: Record<string, unknown> | undefined;
  try {
    args = parse(argv);
    if (args.help) {
      await stdout.write(`${REPLAY_USAGE}\n`);
      return 0;
    }
    if (args.file !== STDIN) {
      const file = path.resolve(cwd, args.file);
      let stat: Awaited<ReturnType<typeof fs.stat>>;
      try {
        stat = await fs.stat(file);
      } catch (error) {
        throw new UsageError(`cannot read ${args.file}: ${describeFsError(error)}`);
      }
      // A pipe is read as a file is (`<(zcat runs.jsonl.gz)`, /dev/stdin); a directory cannot be.
      if (stat.isDirectory()) throw new UsageError(`cannot read ${args.file}: it is a directory`);
      if (args.html !== undefined && path.resolve(cwd, args.html) === file) {
        throw new UsageError(`--html ${args.html} is the file being replayed: name another file for the report`);
      }
      args.file = file;
    }
    // Found out now, not after a replay of the whole file.
    if (args.html !== undefined) await checkWritable(path.resolve(cwd, args.html), args.html);
    if (args.config !== undefined) {
      options = await loadConfig(path.resolve(cwd, args.config), args.config);
      // Fail on bad options now, not once per trajectory.
      try {
        createBreaker(options);
      } catch (error) {
        throw new UsageError(`--config ${args.config}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      await stderr.write(`governor replay: ${error.message}\n\n${REPLAY_USAGE}\n`);
      return 2;
    }
    await stderr.write(`governor replay: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }

  const reading: ReadTrajectoriesOptions = args.maxLineBytes === undefined ? {} : { maxLineBytes: args.maxLineBytes };
  if (args.explain !== undefined) return explainOne(args.file === STDIN ? stdin : args.file, args.explain, options, createBreaker, stdout, stderr, reading);

  const summary = new ReplaySummaryBuilder();
  let breakerFailures = 0;
  try {
    if (!args.json) await stdout.write(`${formatTableHeader()}\n`);
    for await (const record of readTrajectories(args.file === STDIN ? stdin : args.file, reading)) {
      if (isMalformedLine(record)) {
        summary.addMalformed();
        await stderr.write(`line ${record.lineNumber}: ${record.error}\n`);
        continue;
      }
      for (const warning of record.warnings ?? []) await stderr.write(`line ${record.lineNumber}: ${warning}\n`);
      let result: Awaited<ReturnType<typeof replayTrajectory>>;
      try {
        result = await replayTrajectory(createBreaker(options), record.trajectory, `replay-${record.lineNumber}`);
      } catch (error) {
        // A breaker failure is a bug, not bad data: report it, keep going, exit non-zero.
        breakerFailures++;
        await stderr.write(`line ${record.lineNumber} (${record.trajectory.id}): breaker failed: ${error instanceof Error ? error.message : String(error)}\n`);
        continue;
      }
      summary.add(record.lineNumber, result, record.trajectory);
      await stdout.write(args.json ? `${JSON.stringify(redactedOutput(result.output))}\n` : `${formatTableRow(result)}\n`);
      if (stderr.isTTY && summary.trajectories % progressEvery === 0) {
        await stderr.write(`replay: ${summary.trajectories.toLocaleString('en-US')} trajectories replayed…\n`);
      }
    }
  } catch (error) {
    if (error instanceof OutputClosedError) throw error;
    await stderr.write(`governor replay: reading ${args.file === STDIN ? 'standard input' : args.file} failed: ${describeFsError(error)}\n`);
    return 1;
  }

  const built = summary.build();
  if (!args.json) await stdout.write(`\n${formatSummary(built)}\n`);
  if (args.html !== undefined) {
    const target = path.resolve(cwd, args.html);
    try {
      await fs.writeFile(target, renderHtmlReport(built, { source: args.file === STDIN ? 'standard input' : path.basename(args.file) }), 'utf8');
    } catch (error) {
      await stderr.write(`governor replay: cannot write --html ${args.html}: ${describeFsError(error)}\n`);
      return 1;
    }
    await stderr.write(`HTML report written to ${args.html}\n`);
  }
  if (breakerFailures > 0) {
    await stderr.write(`governor replay: the breaker failed on ${breakerFailures} trajectories (see above)\n`);
    return 1;
  }
  return 0;
}

/**
 * A replay verdict as `--json` prints it: the id (from the trajectory) and the
 * reason (which may quote its tool names and arguments) redacted, field order kept.
 */
function redactedOutput(output: ReplayOutput): ReplayOutput {
  return { ...output, id: redact(output.id), ...(output.reason === undefined ? {} : { reason: redact(output.reason) }) };
}

/** `--explain ID`: replays only the run with that id and prints its drill-down. */
async function explainOne(
  file: string | NodeJS.ReadableStream,
  id: string,
  options: Record<string, unknown> | undefined,
  createBreaker: (options: Record<string, unknown> | undefined) => ReplayableBreaker,
  stdout: Output,
  stderr: Output,
  reading: ReadTrajectoriesOptions,
): Promise<number> {
  try {
    for await (const record of readTrajectories(file, reading)) {
      if (isMalformedLine(record) || record.trajectory.id !== id) continue;
      const result = await replayTrajectory(createBreaker(options), record.trajectory, `replay-${record.lineNumber}`);
      const explanation = explainTrip(record.trajectory, result);
      await stdout.write(
        explanation === undefined
          ? `${redact(id)} (line ${record.lineNumber}): not tripped in ${result.output.steps_total} steps\n`
          : `line ${record.lineNumber}  ${formatTripExplanation(explanation)}\n`,
      );
      return 0;
    }
  } catch (error) {
    if (error instanceof OutputClosedError) throw error;
    await stderr.write(`governor replay: reading ${typeof file === 'string' ? file : 'standard input'} failed: ${describeFsError(error)}\n`);
    return 1;
  }
  await stderr.write(`governor replay: no trajectory with id "${id}" in ${typeof file === 'string' ? path.basename(file) : 'standard input'}\n`);
  return 1;
}
