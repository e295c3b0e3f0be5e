/**
 * Arguments of the repository's own commands (benchmarks, corpus, package
 * and service scripts): node:util's parseArgs, with `--help` printing the
 * usage and a wrong argument printing what was wrong and the usage, exit
 * code 2, instead of a stack trace or a run that ignores it.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

interface CommandArgs<O extends ParseArgsOptionsConfig> {
  readonly values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>['values'];
  readonly positionals: string[];
}

/**
 * Parses `argv` (default: this process's arguments) for a command whose
 * usage line is `usage`. Positionals are refused unless `positionals` is true.
 */
export function parseCommandArgs<O extends ParseArgsOptionsConfig>(
  usage: string,
  options: O,
  { positionals = false, argv = process.argv.slice(2) }: { positionals?: boolean; argv?: string[] } = {},
): CommandArgs<O> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals: positionals, strict: true });
    return { values: parsed.values as CommandArgs<O>['values'], positionals: parsed.positionals };
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
}
