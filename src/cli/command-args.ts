import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { withNegativeValues } from '../runtime/negative-option-values.ts';
import { unknownOption } from '../runtime/unknown-option.ts';
import { CliUsageError } from './command-error.ts';

/**
 * A command's own arguments, parsed strictly. An unknown option is said the
 * same way by every command, with the known option it is closest to:
 * `Unknown option '--max-invocation'. Did you mean '--max-invocations'?`.
 * Node's own message would add, for a command that takes positionals, advice
 * about positionals that start with `-`, which is no help for a typo.
 * `notTaken`: what to add for an option the command leaves out on purpose
 * (one another command takes), by its name.
 *
 * @throws CliUsageError for an unknown option
 * @throws TypeError (parseArgs' own, its message for people) for an option without its value, or with one it takes none
 */
export function parseCommandArgs<const O extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: O,
  allowPositionals: boolean,
  notTaken?: Readonly<Record<string, string>>,
) {
  try {
    return parseArgs({ args: withNegativeValues(argv, options), options, allowPositionals, strict: true });
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw error;
    throw new CliUsageError(unknownOption(argv, options, notTaken) ?? (error as Error).message);
  }
}
