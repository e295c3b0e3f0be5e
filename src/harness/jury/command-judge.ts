import path from 'node:path';
import { InvalidOptionError } from '../../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../../errors/validate-options.ts';
import { runCommand } from '../run-command.ts';
import { withoutSecrets } from '../safe-env.ts';
import type { Judge, JudgeInput, Verdict } from './judge.ts';

/** Options of {@link commandJudge}. */
export interface CommandJudgeOptions {
  /**
   * Directory to run in; a relative path resolves against the input's
   * `workingDirectory`.
   * @default the input's `workingDirectory` (the judge abstains without one)
   */
  cwd?: string;
  /**
   * Time limit; a command that runs out of time fails.
   * @default 120_000
   */
  timeoutMs?: number;
  /** @default `command: <the command>` */
  name?: string;
  /**
   * Most output bytes quoted in the reasoning (beginning and end).
   * @default 2_000
   */
  maxOutputBytes?: number;
  /**
   * The command judges code the agent wrote, so by default it does not see
   * credential-like environment variables (see `shellTool`'s `passEnv`).
   * @default 'safe'
   */
  passEnv?: 'safe' | 'all';
  /** Variables set for the command, overriding inherited ones. @default {} */
  env?: Record<string, string>;
}

const COMMAND_JUDGE_RULES: OptionRules<CommandJudgeOptions> = {
  cwd: is.string({ nonEmpty: true }),
  timeoutMs: is.timeMs(),
  name: is.string({ nonEmpty: true }),
  maxOutputBytes: is.integer(1),
  passEnv: is.oneOf('safe', 'all'),
  env: is.recordOf(is.string()),
};

// What sh reports when the command itself could not be run.
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

function withoutUndefined(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError(option, `must be an integer >= 1, got ${String(value)}`);
  return value;
}

/**
 * Passes when `command` (run with `/bin/sh -c`) exits with code 0, fails on any
 * other exit code, signal or timeout, and reports `error` when the command could
 * not be run at all (no shell, missing directory, exit code 126 or 127 —
 * "not executable" / "not found"). The output excerpt goes into the reasoning.
 */
export function commandJudge(command: string, options: CommandJudgeOptions = {}): Judge {
  if (typeof command !== 'string' || command.trim() === '') throw new InvalidOptionError('command', 'must be a non-empty string');
  validateOptions('commandJudge', options, COMMAND_JUDGE_RULES);
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, 120_000);
  const maxOutputBytes = options.maxOutputBytes ?? 2_000;
  const passEnv = options.passEnv ?? 'safe';
  const name = options.name ?? `command: ${command.length > 60 ? `${command.slice(0, 57)}...` : command}`;

  return {
    name,
    async judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict> {
      signal?.throwIfAborted();
      const base = input.workingDirectory;
      const cwd = options.cwd === undefined ? base : base === undefined ? options.cwd : path.resolve(base, options.cwd);
      if (cwd === undefined || (!path.isAbsolute(cwd) && base === undefined)) {
        return { judge: name, status: 'abstain', reasoning: 'No working directory to run the command in.' };
      }
      let outcome: Awaited<ReturnType<typeof runCommand>>;
      try {
        outcome = await runCommand(command, {
          cwd,
          env: { ...(passEnv === 'all' ? withoutUndefined(process.env) : withoutSecrets(process.env)), ...options.env },
          timeoutMs,
          maxOutputBytes,
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        return { judge: name, status: 'error', reasoning: `\`${command}\` could not be started: ${(error as Error).message}` };
      }
      if (outcome.end === 'aborted') throw signal?.reason ?? new Error('aborted');
      const excerpt = outcome.output.trim() === '' ? '(no output)' : `Output:\n${outcome.output}`;
      if (outcome.end === 'exited' && outcome.exitCode === 0) {
        return { judge: name, status: 'pass', score: 1, reasoning: `\`${command}\` exited with code 0. ${excerpt}` };
      }
      if (outcome.end === 'exited' && (outcome.exitCode === NOT_FOUND || outcome.exitCode === NOT_EXECUTABLE)) {
        return { judge: name, status: 'error', reasoning: `\`${command}\` could not be run (exit code ${outcome.exitCode}). ${excerpt}` };
      }
      const how =
        outcome.end === 'timed_out'
          ? `did not finish within ${timeoutMs} ms`
          : outcome.end === 'signaled'
            ? `was killed by ${outcome.signal ?? 'a signal'}`
            : `exited with code ${outcome.exitCode ?? 'unknown'}`;
      return { judge: name, status: 'fail', score: 0, reasoning: `\`${command}\` ${how}. ${excerpt}` };
    },
  };
}
