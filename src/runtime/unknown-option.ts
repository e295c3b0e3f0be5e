import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { didYouMean } from './did-you-mean.ts';

/**
 * What to say of the first unknown option of `argv` for a command that takes
 * `options`, as every command says it: `Unknown option '--max-invocation'.
 * Did you mean '--max-invocations'?`. Node's own message would add, for a
 * command that takes positionals, advice about positionals that start with
 * `-`, which is no help for a typo. `undefined` when none is found.
 */
export function unknownOption(argv: readonly string[], options: ParseArgsOptionsConfig): string | undefined {
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
  return `Unknown option '${shown}'.${guess === undefined ? '' : ` Did you mean '--${guess}'?`}`;
}
