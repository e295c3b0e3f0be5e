import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { didYouMean } from './did-you-mean.ts';

/**
 * What to say of the first unknown option of `argv` for a command that takes
 * `options`, as every command says it: `Unknown option '--max-invocation'.
 * Did you mean '--max-invocations'?`. Node's own message would add, for a
 * command that takes positionals, advice about positionals that start with
 * `-`, which is no help for a typo. `notTaken`: what to add for an option
 * the command leaves out on purpose (another command's), by its name.
 * `undefined` when none is found.
 */
export function unknownOption(argv: readonly string[], options: ParseArgsOptionsConfig, notTaken: Readonly<Record<string, string>> = {}): string | undefined {
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  const shorts = new Set(Object.values(options).map((option) => option.short));
  const unknown = tokens.find((token) => token.kind === 'option' && !Object.hasOwn(options, token.name) && !shorts.has(token.name));
  if (unknown?.kind !== 'option') return undefined;
  const names = Object.keys(options);
  const typed = argv[unknown.index] ?? unknown.rawName;
  // `-model` (one dash, as some tools spell their flags) reads as the short options -m -o -d -e -l: named whole, as typed.
  const word = /^-[^-]/.test(typed) ? typed.slice(1).split('=')[0]! : unknown.rawName.startsWith('--') ? unknown.name : undefined;
  const guess = word === undefined || word.length < 2 ? undefined : didYouMean(word, names);
  const shown = /^-[^-]/.test(typed) && guess !== undefined ? typed.split('=')[0]! : unknown.rawName;
  const why = unknown.rawName.startsWith('--') && Object.hasOwn(notTaken, unknown.name) ? ` ${notTaken[unknown.name]}` : '';
  return `Unknown option '${shown}'.${guess === undefined ? '' : ` Did you mean '--${guess}'?`}${why}`;
}
