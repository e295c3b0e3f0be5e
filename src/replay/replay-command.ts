import { randomBytes } from 'node:crypto';
import { createReadStream, fstatSync, rmSync, type Stats } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { formatTripExplanation } from './explain-text.ts';
import { renderHtmlReport } from './html-report.ts';
import { DEFAULT_MAX_LINE_BYTES, isMalformedLine, readTrajectories, type ReadTrajectoriesOptions, type TrajectoryLine } from './read-trajectories.ts';
import { replayTrajectory, type ReplayOutput, type ReplayResult } from './replay.ts';
import type { Trajectory } from './trajectory.ts';
import { formatSummary, ReplaySummaryBuilder } from './replay-summary.ts';
import { formatTableHeader, formatTableRow } from './replay-table.ts';
import type { ReplayableBreaker } from './replayable-breaker.ts';
import { explainTrip } from './trip-explanation.ts';
import { REDACTED, redact } from '../redaction/redact.ts';
import { terminalText } from '../redaction/terminal-text.ts';
import { describeFsError, readOptionsFile } from '../runtime/read-options-file.ts';
import { codeOnlyOptionProblem, withoutCodeOnly } from '../runtime/code-only-options.ts';
import { unknownOption } from '../runtime/unknown-option.ts';
import { withNegativeValues } from '../runtime/negative-option-values.ts';

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
  /** Milliseconds of a monotonic clock, for progress by time on a terminal. @default performance.now */
  readonly now?: () => number;
}

/** The first per-line error messages shown; a binary file would otherwise print one per "line". */
const MAX_LINE_ERRORS_SHOWN = 20;

export const REPLAY_USAGE = `Usage: governor replay FILE.jsonl [--json] [--config FILE] [--html FILE] [--explain ID] [--max-line-bytes N]

Replays recorded agent trajectories (JSON Lines) through the AgentBreaker and
shows where it would have intervened and what that would have saved.
FILE - reads the trajectories from standard input.

  --json          one JSON object per trajectory, one per line, in input order
  --config FILE   JSON file with the breaker options (default: built-in defaults)
  --html FILE     also write a self-contained HTML report: charts, and for each
                  tripped run each intervention with its evidence, the steps
                  around them and the repeated steps side by side, filterable
                  by category
  --explain ID    print that drill-down for the one run with this id, as text
                  (not with --json or --html); the id as printed, redacted,
                  does when no other run prints the same
  --max-line-bytes N
                  longest line read, in bytes; a longer one is reported as
                  malformed and skipped (default: ${DEFAULT_MAX_LINE_BYTES}, 64 MB)
  -h, --help      show this help

Malformed lines are reported on stderr (the first ${MAX_LINE_ERRORS_SHOWN}, then how many more) and
skipped. An empty file replays nothing and exits 0.

Exit codes: 0 file replayed, 1 no trajectory at all in a file with malformed
lines (such as a gzip file: decompress it first), a breaker failure, an
unexpected failure, or --explain ID not in the file (or printed alike by
several runs), 2 usage error (including a FILE that cannot be read).`;

class UsageError extends Error {}

/** Thrown at the first bytes of a gzip-compressed input: no line of it can be a trajectory. */
class CompressedInputError extends Error {}

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

const REPLAY_OPTIONS = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  html: { type: 'string' },
  explain: { type: 'string' },
  'max-line-bytes': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: readonly string[]): ParsedArgs {
  let values: { json?: boolean; config?: string; html?: string; explain?: string; 'max-line-bytes'?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: withNegativeValues(argv, REPLAY_OPTIONS), allowPositionals: true, strict: true, options: REPLAY_OPTIONS }));
  } catch (error) {
    const unknown = (error as { code?: unknown } | null)?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? unknownOption(argv, REPLAY_OPTIONS) : undefined;
    throw new UsageError(unknown ?? (error instanceof Error ? error.message : String(error)));
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
  let options: Record<string, unknown>;
  try {
    options = await readOptionsFile(file, shown);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const problem = codeOnlyOptionProblem(options, shown, 'replay gives every run a fresh breaker in memory, leave it out');
  if (problem !== undefined) throw new UsageError(problem);
  return options;
}

/** Whether two stats are one regular file, whatever the names: a symlink, a hard link, `/dev/stdin` redirected from it. */
function sameRegularFile(a: Stats, b: Stats): boolean {
  return a.isFile() && b.isFile() && a.dev === b.dev && a.ino === b.ino;
}

/** What standard input is, when it is a file descriptor (`governor replay - < runs.jsonl`). */
function statOfStdin(stdin: NodeJS.ReadableStream): Stats | undefined {
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return undefined;
  try {
    return fstatSync(fd);
  } catch {
    return undefined;
  }
}

/**
 * Refuses an --html that is the input under another name: the report would
 * replace the trajectories. Compared by identity, as spelling misses symlinks
 * and hard links.
 */
async function refuseReportOverInput(target: string, shown: string, input: Stats | undefined, inputShown: string): Promise<void> {
  const report = await fs.stat(target).catch(() => undefined);
  if (input !== undefined && report !== undefined && sameRegularFile(input, report)) {
    throw new UsageError(`--html ${shown} is the file being replayed (${inputShown}): name another file for the report`);
  }
}

/** Where a report to `target` goes, and whether it replaces a file or is written into a device in place. */
interface ReportDestination {
  /** Through a symlink to what it names, so that the link stays a link. */
  readonly file: string;
  /** The report it replaces, if any. */
  readonly previous: Stats | undefined;
  /**
   * A device or a pipe (/dev/null, /dev/stdout, /dev/fd/N) is written in
   * place: renaming over it would replace it (and /dev/stdout redirected to a
   * file resolves to that file, which would cut our own output off).
   */
  readonly inPlace: boolean;
}

async function reportDestination(target: string): Promise<ReportDestination> {
  const file = await fs.realpath(target).catch(() => danglingLinkTarget(target));
  const previous = await fs.stat(file).catch(() => undefined);
  return { file, previous, inPlace: previous !== undefined && (!previous.isFile() || /^\/(dev|proc)\//.test(target)) };
}

/**
 * Where a symlink whose target does not exist yet points (`latest.html ->
 * site/report.html` before the first report), so the report is written
 * through it as the shell would; `target` itself when it is no symlink.
 */
async function danglingLinkTarget(target: string, hops = 0): Promise<string> {
  const link = await fs.readlink(target).catch(() => undefined);
  if (link === undefined || hops >= 40) return target;
  const next = path.resolve(path.dirname(target), link);
  return (await fs.realpath(next).catch(() => undefined)) ?? danglingLinkTarget(next, hops + 1);
}

/**
 * Until the returned function is called, SIGINT and SIGTERM remove `file`
 * first. replay has no signal handling of its own (the default action ends it
 * at once), so once the file is gone the signal is raised again and the
 * process still dies of it, unless the program embedding the command listens
 * to that signal itself.
 */
function removedOnSignal(file: string): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    stop();
    rmSync(file, { force: true });
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const stop = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return stop;
}

/** The --html report, from before the replay (proven writable) until it is written into place or discarded. */
interface PendingReport {
  /** Writes `content` into place; on failure the previous report is left as it was. */
  write(content: string): Promise<void>;
  /** Removes the temporary file, if it is still there; safe to call at any time, and again. */
  discard(): Promise<void>;
}

/**
 * Opens the --html report before the replay, so that a target that cannot be
 * written is refused before any work: a directory, a folder that is missing,
 * not writable or takes no new files (/proc, even for root). The temporary
 * file the report is written to is created now, beside the target, and
 * removed on any failure and on SIGINT or SIGTERM; the report is written into
 * it and renamed over the target, so that it is never seen half-written and a
 * full disk or an interrupt leaves the previous report as it was. The
 * permissions of a report replaced are kept.
 */
async function openReport(target: string, shown: string): Promise<PendingReport> {
  if ((await fs.stat(target).catch(() => undefined))?.isDirectory()) throw new UsageError(`cannot write --html ${shown}: it is a directory`);
  const { file, inPlace } = await reportDestination(target);
  if (inPlace) {
    try {
      await fs.access(file, fs.constants.W_OK);
    } catch (error) {
      throw new UsageError(`cannot write --html ${shown}: ${describeFsError(error)}`);
    }
    return { write: (content) => fs.writeFile(file, content, 'utf8'), discard: async () => {} };
  }
  const folder = path.dirname(file);
  const temp = path.join(folder, `.${path.basename(file)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  // Watched before it exists: a signal between its creation and the open's callback would otherwise leave it behind.
  const stopWatchingSignals = removedOnSignal(temp);
  let handle: FileHandle;
  try {
    handle = await fs.open(temp, 'wx');
  } catch (error) {
    stopWatchingSignals();
    // Through a link, the folder that is missing is the one it points into.
    const folderShown = file === target ? path.dirname(shown) : folder;
    throw new UsageError(`cannot write --html ${shown}: ${await whyNoFileIn(folder, folderShown, error)}`);
  }
  let settled = false;
  const discard = async (): Promise<void> => {
    if (settled) return;
    settled = true;
    stopWatchingSignals();
    await handle.close().catch(() => {});
    await fs.rm(temp, { force: true });
  };
  return {
    async write(content) {
      try {
        await fs.writeFile(handle, content, 'utf8');
        await handle.close();
        // Read now, not before the replay: the report replaced is the one there now.
        const previous = await fs.stat(file).catch(() => undefined);
        if (previous !== undefined) await fs.chmod(temp, previous.mode & 0o7777);
        await fs.rename(temp, file);
        settled = true;
        stopWatchingSignals();
      } finally {
        await discard();
      }
    },
    discard,
  };
}

/** Why no file can be created in `folder` (named `folderShown` to the user), in a few words. */
async function whyNoFileIn(folder: string, folderShown: string, error: unknown): Promise<string> {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    const stat = await fs.stat(folder).catch(() => undefined);
    if (stat === undefined) return `the folder ${folderShown} does not exist`;
    if (!stat.isDirectory()) return `${folderShown} is not a folder`;
    // The folder is there and takes no new file (/proc).
    return `no file can be created in ${folderShown}`;
  }
  return describeFsError(error);
}

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** The chunks of `input`, refused at once when they start with gzip's magic number. */
async function* refusingGzip(input: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer | string, void, undefined> {
  let head = Buffer.alloc(0);
  for await (const chunk of input) {
    if (head.length < GZIP_MAGIC.length) {
      head = Buffer.concat([head, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk]).subarray(0, GZIP_MAGIC.length);
      if (head.equals(GZIP_MAGIC)) throw new CompressedInputError('gzip-compressed');
    }
    yield chunk;
  }
}

/**
 * The trajectory file (or standard input) as a stream for `readTrajectories`.
 * A gzip file is refused at its first bytes, by content: a pipe
 * (`<(cat runs.jsonl.gz)`) has no name to judge by.
 */
function openInput(file: string, stdin: NodeJS.ReadableStream): NodeJS.ReadableStream {
  const input = file === STDIN ? stdin : createReadStream(file);
  return Readable.from(refusingGzip(input as AsyncIterable<Buffer | string>), { objectMode: true });
}

/** The input as messages name it. */
function inputName(shown: string): string {
  return shown === STDIN ? 'standard input' : shown;
}

/** Why the input could not be read to its end, in one line. */
function readingFailed(error: unknown, shown: string): string {
  if (error instanceof CompressedInputError) {
    return `no trajectory in ${inputName(shown)}: it is gzip-compressed; decompress it first (zcat ${shown === STDIN ? 'FILE' : shown} | governor replay -)`;
  }
  return `reading ${inputName(shown)} failed: ${describeFsError(error)}`;
}

/** What a file of which no line is a trajectory is told. */
function allMalformed(shown: string, lines: number): string {
  return `no trajectory in ${inputName(shown)}: all ${lines.toLocaleString('en-US')} lines are malformed (expected JSON Lines: one trajectory object per line)`;
}

/** Progress first after 2 s, then at most once a second: a file of few, huge trajectories is slow between counts. */
const PROGRESS_AFTER_MS = 2000;
const PROGRESS_EVERY_MS = 1000;

/** When a terminal gets a progress line: every `every` trajectories, and by time on a slow file. */
class ProgressPace {
  readonly #every: number;
  readonly #now: () => number;
  readonly #started: number;
  #last: number;

  constructor(every: number, now: () => number) {
    this.#every = every;
    this.#now = now;
    this.#started = this.#last = now();
  }

  /** Whether a line is due after `replayed` trajectories. */
  due(replayed: number): boolean {
    const now = this.#now();
    const due = replayed % this.#every === 0 || (now - this.#started >= PROGRESS_AFTER_MS && now - this.#last >= PROGRESS_EVERY_MS);
    if (due) this.#last = now;
    return due;
  }
}

/**
 * Replays one run on its own breaker, then forgets its session: a breaker's
 * store would keep it (and a timer to compress it) long after the run, and
 * a file of many runs would hold thousands at once.
 */
async function replayOnce(breaker: ReplayableBreaker, trajectory: Trajectory, sessionId: string): Promise<ReplayResult> {
  try {
    return await replayTrajectory(breaker, trajectory, sessionId);
  } finally {
    if (breaker instanceof AgentBreaker) await breaker.options.store.delete(sessionId).catch(() => {});
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
  #discardingAfterClosedPipe = false;
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

  /** From now on a closed pipe (EPIPE) drops what is written instead of throwing: for work still owed elsewhere (the --html report). */
  continueWhenPipeCloses(): void {
    this.#discardingAfterClosedPipe = true;
  }

  /** Writes `text` with its control characters escaped: recorded runs are not trusted to drive a terminal. */
  async write(text: string): Promise<void> {
    if (this.#closed()) return;
    if (!this.#stream.write(terminalText(this.#redacting ? redact(text) : text)) && this.#stream.once) {
      await new Promise<void>((resolve) => {
        this.#stream.once?.('drain', resolve);
        this.#stream.once?.('error', resolve);
      });
    }
    this.#closed();
  }

  /** Whether the stream is gone and writes are dropped; throws when it is gone and they may not be. */
  #closed(): boolean {
    if (this.#failed === undefined) return false;
    const pipeClosed = (this.#failed as { code?: unknown }).code === 'EPIPE';
    if (pipeClosed && this.#discardingAfterClosedPipe) return true;
    throw new OutputClosedError(this.#failed);
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
  const progress = { every: dependencies.progressEvery ?? 1000, now: dependencies.now ?? (() => performance.now()) };
  const stdout = new Output(io.stdout);
  const stderr = new Output(io.stderr, true);
  // Diagnostics are best-effort: a reader of stderr that went away (`2>&1 | head`) must not end the replay or change its exit code.
  stderr.continueWhenPipeCloses();
  try {
    return await replayCommand(argv, cwd, io.stdin ?? process.stdin, stdout, stderr, createBreaker, progress);
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
  progress: { readonly every: number; readonly now: () => number },
): Promise<number> {
  let args: ParsedArgs;
  let options: Record<string, unknown> | undefined;
  // The file as read (resolved), and as the user named it, for messages.
  let input = STDIN;
  let shown = STDIN;
  let report: PendingReport | undefined;
  try {
    args = parse(argv);
    if (args.help) {
      await stdout.write(`${REPLAY_USAGE}\n`);
      return 0;
    }
    shown = args.file;
    let inputStat: Stats | undefined;
    if (args.file === STDIN) inputStat = statOfStdin(stdin);
    else {
      input = path.resolve(cwd, args.file);
      inputStat = await readableInput(input, args.file);
    }
    // Found out now, not after a replay of the whole file.
    if (args.html !== undefined) await refuseReportOverInput(path.resolve(cwd, args.html), args.html, inputStat, inputName(args.file));
    if (args.config !== undefined) {
      options = await loadConfig(path.resolve(cwd, args.config), args.config);
      // Fail on bad options now, not once per trajectory.
      try {
        createBreaker(options);
      } catch (error) {
        throw new UsageError(`--config ${args.config}: ${error instanceof Error ? withoutCodeOnly(error.message) : String(error)}`);
      }
    }
    // Last, so that nothing but the replay, which removes it whatever happens, runs while its temporary file exists.
    if (args.html !== undefined) report = await openReport(path.resolve(cwd, args.html), args.html);
  } catch (error) {
    if (error instanceof UsageError) {
      await stderr.write(`governor replay: ${error.message}\n\n${REPLAY_USAGE}\n`);
      return 2;
    }
    await stderr.write(`governor replay: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }

  try {
    // A label is for benchmarks: replay reports nothing from it, so one it cannot read costs no run.
    const reading: ReadTrajectoriesOptions = { unreadableLabel: 'warn', ...(args.maxLineBytes === undefined ? {} : { maxLineBytes: args.maxLineBytes }) };
    // `governor replay` with nothing piped in would otherwise wait in silence.
    if (input === STDIN && (stdin as { isTTY?: boolean }).isTTY === true) {
      await stderr.write('governor replay: reading trajectories (JSON Lines) from standard input; end with Ctrl-D\n');
    }
    if (args.explain !== undefined) return await explainOne(openInput(input, stdin), shown, args.explain, options, createBreaker, stdout, stderr, reading);

    // A reader that stops early (`| head`) must not cost the report: the replay goes on without printing.
    if (args.html !== undefined) stdout.continueWhenPipeCloses();
    const summary = new ReplaySummaryBuilder();
    const table = new LazyTableHeader(stdout, !args.json);
    const lineErrors = new CappedLineMessages(stderr, 'malformed lines');
    // A file concatenated with itself would otherwise warn once per line.
    const lineWarnings = new CappedLineMessages(stderr, 'warnings');
    const pace = stderr.isTTY ? new ProgressPace(progress.every, progress.now) : undefined;
    let breakerFailures = 0;
    try {
      for await (const record of readTrajectories(openInput(input, stdin), reading)) {
        if (isMalformedLine(record)) {
          summary.addMalformed();
          await lineErrors.add(`line ${record.lineNumber}: ${record.error}\n`);
          continue;
        }
        for (const warning of record.warnings ?? []) await lineWarnings.add(`line ${record.lineNumber}: ${warning}\n`);
        let result: Awaited<ReturnType<typeof replayTrajectory>>;
        try {
          result = await replayOnce(createBreaker(options), record.trajectory, `replay-${record.lineNumber}`);
        } catch (error) {
          // A breaker failure is a bug, not bad data: report it, keep going, exit non-zero.
          breakerFailures++;
          await stderr.write(
            `line ${record.lineNumber} (${record.trajectory.id}): breaker failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
          continue;
        }
        summary.add(record.lineNumber, result, record.trajectory);
        await table.ensureShown();
        await stdout.write(args.json ? `${JSON.stringify(redactedOutput(result.output))}\n` : `${formatTableRow(result)}\n`);
        if (pace?.due(summary.trajectories)) {
          await stderr.write(`replay: ${summary.trajectories.toLocaleString('en-US')} trajectories replayed…\n`);
        }
      }
    } catch (error) {
      if (error instanceof OutputClosedError) throw error;
      await stderr.write(`governor replay: ${readingFailed(error, shown)}\n`);
      return 1;
    }
    await lineErrors.finish();
    await lineWarnings.finish();

    const built = summary.build();
    // Nothing in the file could be used: the wrong file, not a file of bad runs. No report replaces a previous one.
    if (summary.trajectories + breakerFailures === 0 && built.malformedLines > 0) {
      await stderr.write(`governor replay: ${allMalformed(shown, built.malformedLines)}\n`);
      return 1;
    }
    if (!args.json) {
      await table.ensureShown();
      await stdout.write(`\n${formatSummary(built)}\n`);
    }
    if (report !== undefined) {
      try {
        await report.write(renderHtmlReport(built, { source: input === STDIN ? 'standard input' : path.basename(input) }));
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
  } finally {
    // Whatever ended the replay (no trajectory in the file, a closed output, a failure), no temporary file stays behind.
    await report?.discard();
  }
}

/**
 * The stat of the trajectory file, after checking it can be read: a missing
 * or unreadable file is found out before anything is printed, as a usage error.
 * A pipe is read as a file is (`<(zcat runs.jsonl.gz)`, /dev/stdin); a directory cannot be.
 */
async function readableInput(file: string, shown: string): Promise<Stats> {
  let stat: Stats;
  try {
    stat = await fs.stat(file);
    // stat needs no read permission: a file of mode 000 would pass it.
    await fs.access(file, fs.constants.R_OK);
  } catch (error) {
    throw new UsageError(`cannot read ${shown}: ${describeFsError(error)}`);
  }
  if (stat.isDirectory()) throw new UsageError(`cannot read ${shown}: it is a directory`);
  return stat;
}

/** The table header, printed before the first row (or the summary): an input refused at once leaves stdout empty. */
class LazyTableHeader {
  readonly #stdout: Output;
  #pending: boolean;

  constructor(stdout: Output, wanted: boolean) {
    this.#stdout = stdout;
    this.#pending = wanted;
  }

  async ensureShown(): Promise<void> {
    if (!this.#pending) return;
    this.#pending = false;
    await this.#stdout.write(`${formatTableHeader()}\n`);
  }
}

/** Per-line messages on stderr, the first {@link MAX_LINE_ERRORS_SHOWN}, then one line saying how many more. */
class CappedLineMessages {
  readonly #stderr: Output;
  /** What the messages are, for the closing line ("malformed lines"). */
  readonly #what: string;
  /** Messages kept until {@link finish}, when they are only wanted if something goes wrong. */
  readonly #held: string[] | undefined;
  #seen = 0;

  constructor(stderr: Output, what: string, options: { readonly held?: boolean } = {}) {
    this.#stderr = stderr;
    this.#what = what;
    this.#held = options.held === true ? [] : undefined;
  }

  async add(message: string): Promise<void> {
    this.#seen++;
    if (this.#seen > MAX_LINE_ERRORS_SHOWN) return;
    if (this.#held === undefined) await this.#stderr.write(message);
    else this.#held.push(message);
  }

  get count(): number {
    return this.#seen;
  }

  async finish(): Promise<void> {
    for (const message of this.#held ?? []) await this.#stderr.write(message);
    const hidden = this.#seen - MAX_LINE_ERRORS_SHOWN;
    if (hidden > 0) await this.#stderr.write(`… and ${hidden.toLocaleString('en-US')} more ${this.#what}, not shown\n`);
  }
}

/**
 * A replay verdict as `--json` prints it: the id (from the trajectory) and the
 * reason (which may quote its tool names and arguments) redacted, field order kept.
 */
function redactedOutput(output: ReplayOutput): ReplayOutput {
  return { ...output, id: redact(output.id), ...(output.reason === undefined ? {} : { reason: redact(output.reason) }) };
}

/** Lines of the runs an ambiguous `--explain` id prints as, named at most. */
const ALIKE_LINES_SHOWN = 10;

/**
 * `--explain ID`: replays only the run with that id and prints its drill-down.
 * The id may also be given as the table printed it, redacted: it names the one
 * run whose id redacts to it, and a run whose id is exactly that comes first.
 */
async function explainOne(
  input: NodeJS.ReadableStream,
  shown: string,
  id: string,
  options: Record<string, unknown> | undefined,
  createBreaker: (options: Record<string, unknown> | undefined) => ReplayableBreaker,
  stdout: Output,
  stderr: Output,
  reading: ReadTrajectoriesOptions,
): Promise<number> {
  // Only a redacted id can be the printed form of another: any other id is looked up as it is.
  const asPrinted = id.includes(REDACTED);
  let printedAlike: TrajectoryLine | undefined;
  const alikeLines: number[] = [];
  // Said only when the run is not found: the line that would have been it may be among them.
  const lineErrors = new CappedLineMessages(stderr, 'malformed lines', { held: true });
  let trajectories = 0;
  try {
    for await (const record of readTrajectories(input, reading)) {
      if (isMalformedLine(record)) {
        await lineErrors.add(`line ${record.lineNumber}: ${record.error}\n`);
        continue;
      }
      trajectories++;
      if (record.trajectory.id === id) return await explainRecord(record, options, createBreaker, stdout);
      if (asPrinted && redact(record.trajectory.id) === id) {
        printedAlike ??= record;
        alikeLines.push(record.lineNumber);
      }
    }
    if (printedAlike !== undefined && alikeLines.length === 1) return await explainRecord(printedAlike, options, createBreaker, stdout);
  } catch (error) {
    if (error instanceof OutputClosedError) throw error;
    await stderr.write(`governor replay: ${readingFailed(error, shown)}\n`);
    return 1;
  }
  const file = shown === STDIN ? inputName(shown) : path.basename(shown);
  if (alikeLines.length > 1) {
    const lines = alikeLines.slice(0, ALIKE_LINES_SHOWN).join(', ') + (alikeLines.length > ALIKE_LINES_SHOWN ? ', …' : '');
    await stderr.write(`governor replay: ${alikeLines.length} trajectories show as "${id}" (lines ${lines}) in ${file}: give the id as in the file\n`);
    return 1;
  }
  await lineErrors.finish();
  const malformed = lineErrors.count;
  if (trajectories === 0 && malformed > 0) {
    await stderr.write(`governor replay: ${allMalformed(shown, malformed)}\n`);
    return 1;
  }
  const skipped = malformed === 0 ? '' : ` (${malformed.toLocaleString('en-US')} malformed line${malformed === 1 ? '' : 's'} skipped, see above)`;
  await stderr.write(`governor replay: no trajectory with id "${id}" in ${file}${skipped}\n`);
  return 1;
}

/** Replays one run and prints its drill-down, with its id redacted. */
async function explainRecord(
  record: TrajectoryLine,
  options: Record<string, unknown> | undefined,
  createBreaker: (options: Record<string, unknown> | undefined) => ReplayableBreaker,
  stdout: Output,
): Promise<number> {
  const result = await replayOnce(createBreaker(options), record.trajectory, `replay-${record.lineNumber}`);
  const explanation = explainTrip(record.trajectory, result);
  await stdout.write(
    explanation === undefined
      ? `${redact(record.trajectory.id)} (line ${record.lineNumber}): not tripped in ${result.output.steps_total} steps\n`
      : `line ${record.lineNumber}  ${formatTripExplanation(explanation)}\n`,
  );
  return 0;
}
