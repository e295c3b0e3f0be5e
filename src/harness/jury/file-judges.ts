import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../../errors/validate-options.ts';
import type { Judge, JudgeInput, Verdict } from './judge.ts';

/** Options shared by the file judges. */
export interface FileJudgeOptions {
  /** @default `file exists: <path>` / `file contains: <path>` */
  name?: string;
}

const FILE_JUDGE_RULES: OptionRules<FileJudgeOptions> = { name: is.string({ nonEmpty: true }) };

function checkPath(filePath: unknown, owner: string, options: FileJudgeOptions): string {
  if (typeof filePath !== 'string' || filePath.trim() === '') throw new InvalidOptionError('path', 'must be a non-empty string');
  validateOptions(owner, options, FILE_JUDGE_RULES);
  return filePath;
}

/** The absolute path to check, or `undefined` when a relative path has no directory to resolve against. */
function resolveIn(input: JudgeInput, filePath: string): string | undefined {
  if (path.isAbsolute(filePath)) return filePath;
  return input.workingDirectory === undefined ? undefined : path.resolve(input.workingDirectory, filePath);
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
    async judge(input: JudgeInput): Promise<Verdict> {
      const target = resolveIn(input, filePath);
      if (target === undefined) return { judge: name, status: 'abstain', reasoning: `No working directory to resolve ${filePath} against.` };
      try {
        const found = await stat(target);
        return { judge: name, status: 'pass', score: 1, reasoning: `${filePath} exists (${found.isDirectory() ? 'directory' : 'file'}).` };
      } catch (error) {
        if (MISSING.has(errorCode(error) ?? '')) return { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not exist.` };
        return { judge: name, status: 'error', reasoning: `Could not check ${filePath}: ${(error as Error).message}` };
      }
    },
  };
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
  return {
    name,
    async judge(input: JudgeInput): Promise<Verdict> {
      const target = resolveIn(input, filePath);
      if (target === undefined) return { judge: name, status: 'abstain', reasoning: `No working directory to resolve ${filePath} against.` };
      let text: string;
      try {
        text = await readFile(target, 'utf8');
      } catch (error) {
        const code = errorCode(error);
        if (MISSING.has(code ?? '')) return { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not exist.` };
        if (code === 'EISDIR') return { judge: name, status: 'fail', score: 0, reasoning: `${filePath} is a directory, not a file.` };
        return { judge: name, status: 'error', reasoning: `Could not read ${filePath}: ${(error as Error).message}` };
      }
      const found = pattern === undefined ? text.includes(expected as string) : pattern.test(text);
      return found
        ? { judge: name, status: 'pass', score: 1, reasoning: `${filePath} contains ${shown}.` }
        : { judge: name, status: 'fail', score: 0, reasoning: `${filePath} does not contain ${shown}.` };
    },
  };
}
