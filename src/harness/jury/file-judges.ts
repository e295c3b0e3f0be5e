import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../../errors/validate-options.ts';
import { redact } from '../../redaction/redact.ts';
import type { Judge, JudgeInput, Verdict } from './judge.ts';

/** Options shared by the file judges. */
export interface FileJudgeOptions {
  /** @default `file exists: <path>` / `file contains: <path>` */
  name?: string;
  /**
   * Largest file `fileContainsJudge` reads; a larger one gets an `error`
   * verdict rather than being read into memory whole. Ignored by
   * `fileExistsJudge`. @default 16 MiB
   */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

const FILE_JUDGE_RULES: OptionRules<FileJudgeOptions> = { name: is.string({ nonEmpty: true }), maxBytes: is.integer(1) };

function checkPath(filePath: unknown, owner: string, options: FileJudgeOptions): string {
  if (typeof filePath !== 'string' || filePath.trim() === '') throw new InvalidOptionError('path', 'must be a non-empty string');
  validateOptions(owner, options, FILE_JUDGE_RULES);
  return filePath;
}

/** Where to look: the absolute path, and the working directory it must stay in (for a relative path). */
interface Target {
  readonly path: string;
  readonly root?: string;
}

/** The path to check, or `undefined` when a relative path has no directory to resolve against. */
function resolveIn(input: JudgeInput, filePath: string): Target | undefined {
  if (path.isAbsolute(filePath)) return { path: filePath };
  if (input.workingDirectory === undefined) return undefined;
  const target = path.resolve(input.workingDirectory, filePath);
  // A path that names a place outside the working directory itself ('../shared.txt') is the caller's choice, not the agent's.
  return isInside(input.workingDirectory, target) ? { path: target, root: input.workingDirectory } : { path: target };
}

/** Whether `target` is `root` or inside it (`..hidden` is a name inside it; `../x` is not). */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/**
 * The file the target names once links are followed, or a reason it may not
 * be judged: a relative path names something in the working directory, and
 * the agent under judgement writes that directory, so a link there to a
 * file outside it (a host file, `/dev/zero`) is not its work.
 */
async function followLinks(target: Target, filePath: string): Promise<string | { readonly outside: string }> {
  const real = await realpath(target.path);
  if (target.root === undefined) return real;
  if (isInside(await realpath(target.root), real)) return real;
  return { outside: `${filePath} is a link to something outside the working directory; it was not read.` };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

const MISSING = new Set(['ENOENT', 'ENOTDIR']);

/**
 * Passes when `filePath` exists (file or directory). A relative path resolves
 * against the input's `workingDirectory`; without one the judge abstains.
 */
export function fileExistsJudge(filePath: string, options: FileJudgeOptions = {}): Judge {
  checkPath(filePath, 'fileExistsJudge', options);
  const name = options.name ?? `file exists: ${filePath}`;
  return {
    name,
    judge: (input: JudgeInput) => redacted(judgeExists(input)),
  };

  async function judgeExists(input: JudgeInput): Promise<Verdict> {
    const target = resolveIn(input, filePath);
    if (target === undefined) return { judge: name, status: 'abstain', reasoning: `No working directory to resolve ${filePath} against.` };
    try {
      const real = await followLinks(target, filePath);
      if (typeof real !== 'string') return { judge: name, status: 'fail', score: 0, reasoning: real.outside };
      const found = await stat(real);
      return { judge: name, status: 'pass', score: 1, reasoning: `${filePath} exists (${found.isDirectory() ? 'directory' : 'file'}).` };
    } catch (error) {
      if (MISSING.has(errorCode(error) ?? '')) return { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not exist.` };
      return { judge: name, status: 'error', reasoning: `Could not check ${filePath}: ${(error as Error).message}` };
    }
  }
}

/**
 * Passes when the file at `filePath` contains `expected` (a substring, or a
 * match of the regular expression). Fails when the file is missing. A relative
 * path resolves against the input's `workingDirectory`; without one the judge abstains.
 */
export function fileContainsJudge(filePath: string, expected: string | RegExp, options: FileJudgeOptions = {}): Judge {
  checkPath(filePath, 'fileContainsJudge', options);
  if (!(expected instanceof RegExp) && (typeof expected !== 'string' || expected === '')) {
    throw new InvalidOptionError('expected', 'must be a non-empty string or a RegExp');
  }
  // A global or sticky RegExp remembers lastIndex between test() calls; judging must not depend on history.
  const pattern = expected instanceof RegExp ? new RegExp(expected.source, expected.flags.replace(/[gy]/g, '')) : undefined;
  const shown = expected instanceof RegExp ? String(expected) : JSON.stringify(expected);
  const name = options.name ?? `file contains: ${filePath}`;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return {
    name,
    judge: (input: JudgeInput) => redacted(judgeContains(input)),
  };

  async function judgeContains(input: JudgeInput): Promise<Verdict> {
    const target = resolveIn(input, filePath);
    if (target === undefined) return { judge: name, status: 'abstain', reasoning: `No working directory to resolve ${filePath} against.` };
    let text: string;
    try {
      const read = await readJudgedFile(target, filePath, maxBytes);
      if (typeof read !== 'string') return { judge: name, ...read };
      text = read;
    } catch (error) {
      if (MISSING.has(errorCode(error) ?? '')) return { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not exist.` };
      return { judge: name, status: 'error', reasoning: `Could not read ${filePath}: ${(error as Error).message}` };
    }
    const found = pattern === undefined ? text.includes(expected as string) : pattern.test(text);
    return found
      ? { judge: name, status: 'pass', score: 1, reasoning: `${filePath} contains ${shown}.` }
      : { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not contain ${shown}.` };
  }
}

/** A verdict with its reasoning redacted: it quotes the text looked for, which may be a key, and it gets logged. */
async function redacted(verdict: Promise<Verdict>): Promise<Verdict> {
  const { reasoning, ...rest } = await verdict;
  return { ...rest, reasoning: redact(reasoning) };
}

/**
 * The text of a regular file of at most `maxBytes`, or the verdict when it is
 * something else. The file is opened without blocking, so a FIFO the agent
 * left in its place is refused rather than waited on, and its kind and size
 * are read from the open handle, so what was checked is what is read.
 */
async function readJudgedFile(target: Target, filePath: string, maxBytes: number): Promise<string | Omit<Verdict, 'judge'>> {
  const real = await followLinks(target, filePath);
  if (typeof real !== 'string') return { status: 'fail', score: 0, reasoning: real.outside };
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const found = await handle.stat();
    if (found.isDirectory()) return { status: 'fail', score: 0, reasoning: `${filePath} is a directory, not a file.` };
    if (!found.isFile()) return { status: 'fail', score: 0, reasoning: `${filePath} is not a regular file (a device, FIFO or socket); it was not read.` };
    const tooLarge: Omit<Verdict, 'judge'> = {
      status: 'error',
      reasoning: `${filePath} is larger than maxBytes (${maxBytes} bytes); raise maxBytes to judge it.`,
    };
    if (found.size > maxBytes) return tooLarge;
    // The file can grow after the stat (a process still writing): read one byte past the limit to notice.
    const buffer = Buffer.allocUnsafe(Math.min(found.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return length > maxBytes ? tooLarge : buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}
